//! Broker and controller registrations (`ClusterDelta`).

use serde_json::Value;

use super::fields::{flag, int, listeners, strings, text};
use super::{Broker, Controller, Image, Problem};

impl Image {
    /// RegisterBrokerRecord: the registration replaces any other
    /// (`BrokerRegistration.fromRecord`). `d` is the record as read, a field
    /// of another version at its default (InControlledShutdown false before
    /// v1, no log directories before v3, CordonedLogDirs null).
    pub(super) fn register_broker(&mut self, d: &Value) {
        let id = int(d, "brokerId") as i32;
        self.brokers.insert(
            id,
            Broker {
                id,
                epoch: int(d, "brokerEpoch"),
                incarnation_id: text(d, "incarnationId"),
                rack: d.get("rack").and_then(Value::as_str).map(String::from),
                listeners: listeners(d),
                fenced: flag(d, "fenced"),
                in_controlled_shutdown: flag(d, "inControlledShutdown"),
                log_dirs: strings(d.get("logDirs")).unwrap_or_default(),
                cordoned_log_dirs: strings(d.get("cordonedLogDirs")),
            },
        );
    }

    /// FenceBrokerRecord, UnfenceBrokerRecord or
    /// BrokerRegistrationChangeRecord (`name`): a change to the
    /// registration of the same epoch, or why Kafka throws.
    pub(super) fn change_broker(&mut self, name: &str, d: &Value) -> Result<(), Problem> {
        let change = name == "BrokerRegistrationChangeRecord";
        let (id, epoch) = if change {
            (int(d, "brokerId") as i32, int(d, "brokerEpoch"))
        } else {
            (int(d, "id") as i32, int(d, "epoch"))
        };
        // ClusterDelta.getBrokerOrThrow.
        let b = match self.brokers.get_mut(&id) {
            Some(b) if b.epoch == epoch => b,
            Some(b) => {
                return Err(Problem::rejected(format!(
                    "{name}: broker {id} is registered with epoch {}, not {epoch} (ClusterDelta.getBrokerOrThrow throws)",
                    b.epoch
                )))
            }
            None => {
                return Err(Problem::rejected(format!(
                    "{name}: broker {id} is not registered (ClusterDelta.getBrokerOrThrow throws)"
                )))
            }
        };
        match name {
            "FenceBrokerRecord" => b.fenced = true,
            "UnfenceBrokerRecord" => b.fenced = false,
            _ => apply_registration_change(b, name, d)?,
        }
        Ok(())
    }

    /// RegisterControllerRecord: the registration replaces any other.
    pub(super) fn register_controller(&mut self, d: &Value) {
        let id = int(d, "controllerId") as i32;
        self.controllers.insert(
            id,
            Controller {
                id,
                incarnation_id: text(d, "incarnationId"),
                listeners: listeners(d),
            },
        );
    }
}

/// A BrokerRegistrationChangeRecord's fields on the registration
/// (`BrokerRegistrationFencingChange` and
/// `BrokerRegistrationInControlledShutdownChange`: any other value throws).
/// A tagged field the record does not hold is at its default: fenced and
/// inControlledShutdown 0 (no change), logDirs empty, cordonedLogDirs null.
fn apply_registration_change(b: &mut Broker, name: &str, d: &Value) -> Result<(), Problem> {
    let fenced = match int(d, "fenced") {
        1 => Some(true),
        -1 => Some(false),
        0 => None,
        v => {
            return Err(Problem::rejected(format!(
                "{name}: fenced {v} is not 1, 0 or -1 (BrokerRegistrationFencingChange.fromValue)"
            )))
        }
    };
    let shutdown = match int(d, "inControlledShutdown") {
        1 => true,
        0 => false,
        v => {
            return Err(Problem::rejected(format!(
                "{name}: inControlledShutdown {v} is not 0 or 1 \
                 (BrokerRegistrationInControlledShutdownChange.fromValue)"
            )))
        }
    };
    if let Some(f) = fenced {
        b.fenced = f;
    }
    if shutdown {
        b.in_controlled_shutdown = true;
    }
    if let Some(dirs) = strings(d.get("logDirs")).filter(|v| !v.is_empty()) {
        b.log_dirs = dirs;
    }
    // Optional.ofNullable(record.cordonedLogDirs()): null is no change.
    if let Some(dirs) = strings(d.get("cordonedLogDirs")) {
        b.cordoned_log_dirs = Some(dirs);
    }
    Ok(())
}
