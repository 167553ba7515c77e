//! How a broker left a log directory, as Kafka reads it when it starts on
//! it again.
//!
//! `LogManager.loadLogs` (every release from 3.9 to 4.4, ZooKeeper and
//! KRaft mode alike) looks for `.kafka_cleanshutdown` in each log
//! directory: present, every partition of that directory is loaded as after
//! a clean shutdown (`hadCleanShutdown`), and the file is deleted before any
//! log loads. Only its existence counts: an empty or unreadable marker is
//! still a clean shutdown. `LogManager.shutdown` writes it last, after
//! every log of the directory was flushed and closed and the recovery-point
//! and log-start checkpoints were written, and only when all of that
//! succeeded. Its content (`CleanShutdownFileHandler`) is JSON,
//! `{"version":0,"brokerEpoch":N}`: the broker epoch a KRaft broker held
//! (its registration's, read back by `BrokerServer.startup` as the previous
//! broker epoch, KIP-966), -1 in ZooKeeper mode or for a broker that never
//! registered.
//!
//! No marker in a broker's log directory (one with `meta.properties`, which
//! every broker writes) means the broker did not shut down cleanly: killed,
//! crashed, lost power or its disk; or it is still running, which the
//! directory's lock says.

use std::path::Path;

use serde::Serialize;

/// The marker a clean shutdown leaves (`LogManager.CleanShutdownFileName`).
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";

/// How the broker left the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShutdownState {
    /// `.kafka_cleanshutdown` is there: the next start trusts the files.
    Clean,
    /// A broker's directory without the marker: the next start recovers.
    Unclean,
    /// A process holds the directory's lock: not shut down (yet).
    Running,
    /// Neither a marker nor `meta.properties`: not a broker's log directory
    /// (klog's own, or a copy of partition folders).
    NotABroker,
}

impl ShutdownState {
    /// How the state is said in text.
    pub fn name(self) -> &'static str {
        match self {
            ShutdownState::Clean => "clean shutdown",
            ShutdownState::Unclean => "unclean shutdown",
            ShutdownState::Running => "running",
            ShutdownState::NotABroker => "not a broker's log directory",
        }
    }
}

/// What a log directory says of its broker's last shutdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Shutdown {
    pub state: ShutdownState,
    /// `node.id` (or `broker.id`) of `meta.properties`.
    pub node_id: Option<i32>,
    /// The marker's `brokerEpoch` (-1: ZooKeeper mode, or never registered);
    /// `None` without a marker or when it does not parse.
    pub broker_epoch: Option<i64>,
    /// The process holding the lock, when the OS names it.
    pub lock_holder_pid: Option<u32>,
}

impl Shutdown {
    /// Read `data_dir`'s marker, `meta.properties` and lock.
    pub fn read(data_dir: &Path) -> Shutdown {
        let marker = data_dir.join(CLEAN_SHUTDOWN_FILE);
        let node_id = crate::log::meta::node_id(data_dir);
        let broker = data_dir.join(crate::log::meta::META_PROPERTIES).exists();
        let holder = crate::log::lock::holder(data_dir);
        let lock_holder_pid = match holder {
            Some(crate::log::lock::Holder::Process(pid)) => Some(pid),
            _ => None,
        };
        let present = std::fs::symlink_metadata(&marker).is_ok();
        let state = if holder.is_some() && broker {
            ShutdownState::Running
        } else if present {
            ShutdownState::Clean
        } else if broker {
            ShutdownState::Unclean
        } else {
            ShutdownState::NotABroker
        };
        let broker_epoch = present
            .then(|| {
                crate::log::files::read_regular(&marker, 4096)
                    .ok()
                    .flatten()
            })
            .flatten()
            .and_then(|bytes| parse_broker_epoch(&bytes));
        Shutdown {
            state,
            node_id,
            broker_epoch,
            lock_holder_pid,
        }
    }
}

/// The `brokerEpoch` of a marker's JSON (`CleanShutdownFileHandler.read`:
/// any error gives no epoch; the version is not checked).
pub fn parse_broker_epoch(bytes: &[u8]) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("brokerEpoch")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_decides_and_its_epoch_is_read_when_it_parses() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        assert_eq!(Shutdown::read(d).state, ShutdownState::NotABroker);
        std::fs::write(
            d.join("meta.properties"),
            "version=1\nnode.id=3\ncluster.id=c\n",
        )
        .unwrap();
        let s = Shutdown::read(d);
        assert_eq!((s.state, s.node_id), (ShutdownState::Unclean, Some(3)));
        // CleanShutdownFileHandler.write's bytes.
        std::fs::write(
            d.join(CLEAN_SHUTDOWN_FILE),
            r#"{"version":0,"brokerEpoch":15}"#,
        )
        .unwrap();
        let s = Shutdown::read(d);
        assert_eq!((s.state, s.broker_epoch), (ShutdownState::Clean, Some(15)));
        // Only existence counts (LogManager.loadLogs).
        std::fs::write(d.join(CLEAN_SHUTDOWN_FILE), b"").unwrap();
        let s = Shutdown::read(d);
        assert_eq!((s.state, s.broker_epoch), (ShutdownState::Clean, None));
    }
}
