//! The demo's in-process broker (the partitions it leads, the transaction
//! coordinator, a clock) and the producer client that talks to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Logged, MarkerWritten, FIRST_PRODUCER_ID, ORDERS, TXN_TIMEOUT_MS};
use crate::error::{Error, Result};
use crate::format::control::encode_marker;
use crate::format::{BatchSpec, NewRecord};
use crate::log::durable::{self, Disk};
use crate::log::lock::DirLock;
use crate::log::{AppendConfig, PartitionAppender};
use crate::offsets::{commit_record_v3, KLOG_OFFSETS_TOPIC};
use crate::txn::coordinator::{Coordinator, CoordinatorError, Step, TransactionVersion};
use crate::txn::producer::{append_checked, Origin, Produced, ProducerStateManager};
use crate::txn::txnlog::{encode_key, encode_value, TRANSACTION_STATE_TOPIC};

/// A partition's leader: its appender and its producer state.
pub(super) struct Leader {
    pub(super) appender: PartitionAppender,
    pub(super) state: ProducerStateManager,
}

/// The broker the demo runs: every partition it leads, the transaction
/// coordinator, and a clock that moves one millisecond per request.
pub(super) struct Broker {
    pub(super) dir: PathBuf,
    lock: Arc<DirLock>,
    leaders: BTreeMap<(String, i32), Leader>,
    coordinator: Coordinator,
    clock: i64,
}

impl Broker {
    pub(super) fn open(dir: &Path, now_ms: i64, version: TransactionVersion) -> Result<Self> {
        Ok(Broker {
            dir: dir.to_path_buf(),
            lock: Arc::new(DirLock::acquire(dir)?),
            leaders: BTreeMap::new(),
            // The coordinator's epoch is its partition's leader epoch: 0.
            coordinator: Coordinator::new(0, FIRST_PRODUCER_ID, version),
            clock: now_ms,
        })
    }

    pub(super) fn tick(&mut self) -> i64 {
        self.clock += 1;
        self.clock
    }

    pub(super) fn leader(&mut self, topic: &str, partition: i32) -> Result<&mut Leader> {
        let key = (topic.to_string(), partition);
        if !self.leaders.contains_key(&key) {
            let appender = PartitionAppender::open_locked(
                self.lock.clone(),
                &self.dir,
                topic,
                partition,
                AppendConfig {
                    aborted_txn: Some(crate::txn::aborted_txn),
                    ..AppendConfig::default()
                },
            )?;
            self.leaders.insert(
                key.clone(),
                Leader {
                    appender,
                    state: ProducerStateManager::new(),
                },
            );
        }
        self.leaders
            .get_mut(&key)
            .ok_or_else(|| Error::Invalid(format!("no leader for {topic}-{partition}")))
    }

    /// The leader's append: checked, then appended only if it passes (a
    /// marker as written with WriteTxnMarkers' `transaction_version`; 0
    /// for data).
    pub(super) fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        origin: Origin,
        spec: &BatchSpec,
        records: &[NewRecord],
        transaction_version: i16,
    ) -> Result<Produced> {
        let l = self.leader(topic, partition)?;
        append_checked(
            &mut l.appender,
            &mut l.state,
            origin,
            spec,
            records,
            transaction_version,
        )
    }

    /// Carry out the coordinator's steps through the append path.
    fn run_steps(&mut self, transactional_id: &str, steps: Vec<Step>) -> Result<Written> {
        let mut logged = Vec::new();
        let mut markers = Vec::new();
        for step in steps {
            match step {
                Step::Log(m) => {
                    let ts = self.tick();
                    let record = NewRecord {
                        key: Some(encode_key(transactional_id)),
                        value: Some(encode_value(&m.log_value())),
                        headers: Vec::new(),
                        timestamp: ts,
                    };
                    let offset = match self.produce(
                        TRANSACTION_STATE_TOPIC,
                        0,
                        Origin::Coordinator,
                        &BatchSpec::default(),
                        &[record],
                        0,
                    )? {
                        Produced::Appended(r) => *r.start(),
                        other => {
                            return Err(Error::Invalid(format!(
                                "the transaction log refused a record: {other:?}"
                            )))
                        }
                    };
                    logged.push(Logged {
                        offset,
                        state: m.state.name().to_string(),
                        producer_epoch: m.producer_epoch,
                        partitions: m
                            .partitions
                            .iter()
                            .map(|(t, p)| format!("{t}-{p}"))
                            .collect(),
                    });
                }
                Step::Markers {
                    commit,
                    producer_id,
                    producer_epoch,
                    coordinator_epoch,
                    transaction_version,
                    partitions,
                } => {
                    // `TransactionMarkerChannelManager`: one marker per
                    // partition, appended by the partition's leader
                    // (origin COORDINATOR: epochs checked, not sequences).
                    for (topic, partition) in partitions {
                        let (key, value) = encode_marker(commit, coordinator_epoch);
                        let ts = self.tick();
                        let spec = BatchSpec {
                            transactional: true,
                            control: true,
                            producer_id,
                            producer_epoch,
                            ..BatchSpec::default()
                        };
                        let record = NewRecord {
                            key: Some(key),
                            value: Some(value),
                            headers: Vec::new(),
                            timestamp: ts,
                        };
                        let offset = match self.produce(
                            &topic,
                            partition,
                            Origin::Coordinator,
                            &spec,
                            &[record],
                            transaction_version,
                        )? {
                            Produced::Appended(r) => *r.start(),
                            other => {
                                return Err(Error::Invalid(format!(
                                    "{topic}-{partition} refused a marker: {other:?}"
                                )))
                            }
                        };
                        markers.push(MarkerWritten {
                            topic,
                            partition,
                            offset,
                            marker: if commit { "COMMIT" } else { "ABORT" }.into(),
                            producer_epoch,
                        });
                    }
                }
            }
        }
        Ok((logged, markers))
    }

    /// InitProducerId: a transactional id's (fencing an open transaction),
    /// or a fresh producer id at epoch 0 without one.
    pub(super) fn init_producer_id(&mut self, transactional_id: Option<&str>) -> Result<InitDone> {
        let Some(tid) = transactional_id else {
            return Ok(InitDone {
                producer_id: self.coordinator.allocate_producer_id(),
                producer_epoch: 0,
                fenced_with: None,
                logged: Vec::new(),
                markers: Vec::new(),
            });
        };
        let now = self.tick();
        let init = self.coordinator.init_producer_id(tid, TXN_TIMEOUT_MS, now);
        let (logged, markers) = self.run_steps(tid, init.steps)?;
        Ok(InitDone {
            producer_id: init.producer_id,
            producer_epoch: init.producer_epoch,
            fenced_with: init.fenced_with,
            logged,
            markers,
        })
    }

    /// AddPartitionsToTxn / AddOffsetsToTxn.
    pub(super) fn add_partitions(
        &mut self,
        p: &Producer,
        partitions: &[(String, i32)],
    ) -> Result<std::result::Result<Vec<Logged>, CoordinatorError>> {
        let tid = p.transactional_id.as_deref().unwrap_or_default();
        let now = self.tick();
        match self
            .coordinator
            .add_partitions(tid, p.producer_id, p.epoch, partitions, now)
        {
            Ok(steps) => Ok(Ok(self.run_steps(tid, steps)?.0)),
            Err(e) => Ok(Err(e)),
        }
    }

    /// EndTxn: the coordinator's records and markers, and the epoch the
    /// producer goes on with (bumped under transaction version 2).
    pub(super) fn end_transaction(
        &mut self,
        p: &Producer,
        commit: bool,
    ) -> Result<std::result::Result<(Written, i16), CoordinatorError>> {
        let tid = p.transactional_id.as_deref().unwrap_or_default();
        let now = self.tick();
        match self
            .coordinator
            .end_transaction(tid, p.producer_id, p.epoch, commit, now)
        {
            Ok(ended) => Ok(Ok((
                self.run_steps(tid, ended.steps)?,
                ended.producer_epoch,
            ))),
            Err(e) => Ok(Err(e)),
        }
    }

    /// An offset commit of `group` for the input partition: plain, or
    /// inside `p`'s transaction (TxnOffsetCommit: the group coordinator
    /// writes a transactional batch of the producer's id and epoch with
    /// sequence 0, origin COORDINATOR).
    pub(super) fn commit_offset(
        &mut self,
        group: &str,
        offset: i64,
        txn: Option<&Producer>,
    ) -> Result<Produced> {
        let ts = self.tick();
        let record = commit_record_v3(group, ORDERS, 0, offset as u64, -1, "", ts);
        let spec = match txn {
            Some(p) => BatchSpec {
                transactional: true,
                producer_id: p.producer_id,
                producer_epoch: p.epoch,
                base_sequence: 0,
                ..BatchSpec::default()
            },
            None => BatchSpec::default(),
        };
        self.produce(
            KLOG_OFFSETS_TOPIC,
            0,
            Origin::Coordinator,
            &spec,
            &[record],
            0,
        )
    }

    /// Write the producer snapshot a broker would write now (at a roll or
    /// a clean shutdown), named after the offset it is valid up to.
    pub(super) fn write_snapshot(
        &mut self,
        topic: &str,
        partition: i32,
    ) -> Result<(PathBuf, i64, Vec<u8>)> {
        let dir = self.dir.clone();
        let l = self.leader(topic, partition)?;
        let offset = l.state.map_end_offset();
        let bytes = crate::txn::snapshot::encode(&l.state.snapshot());
        let path = dir
            .join(format!("{topic}-{partition}"))
            .join(crate::log::segment_file_name(offset, "snapshot"));
        durable::replace(&Disk, &path, &bytes)?;
        Ok((path, offset, bytes))
    }
}

/// The coordinator's records and markers of one request.
type Written = (Vec<Logged>, Vec<MarkerWritten>);

pub(super) struct InitDone {
    pub(super) producer_id: i64,
    pub(super) producer_epoch: i16,
    pub(super) fenced_with: Option<i16>,
    pub(super) logged: Vec<Logged>,
    pub(super) markers: Vec<MarkerWritten>,
}

/// A producer client: its id and epoch, and the next sequence per partition.
#[derive(Debug, Clone)]
pub(super) struct Producer {
    transactional_id: Option<String>,
    /// -1: a plain producer.
    pub(super) producer_id: i64,
    pub(super) epoch: i16,
    next_sequence: BTreeMap<(String, i32), i32>,
    /// Partitions added to the open transaction.
    in_transaction: BTreeSet<(String, i32)>,
    /// The last request, to resend it.
    last: Option<(String, BatchSpec, Vec<NewRecord>)>,
}

impl Producer {
    pub(super) fn new(transactional_id: Option<&str>, producer_id: i64, epoch: i16) -> Self {
        Producer {
            transactional_id: transactional_id.map(String::from),
            producer_id,
            epoch,
            next_sequence: BTreeMap::new(),
            in_transaction: BTreeSet::new(),
            last: None,
        }
    }

    /// Send `records` to `topic`-0 as one batch (a transactional producer
    /// adds the partition to its transaction first).
    pub(super) fn send(
        &mut self,
        broker: &mut Broker,
        topic: &str,
        records: Vec<NewRecord>,
    ) -> Result<std::result::Result<(Produced, Vec<Logged>), CoordinatorError>> {
        let tp = (topic.to_string(), 0);
        let mut logged = Vec::new();
        if self.transactional_id.is_some() && !self.in_transaction.contains(&tp) {
            match broker.add_partitions(self, std::slice::from_ref(&tp))? {
                Ok(l) => logged = l,
                Err(e) => return Ok(Err(e)),
            }
            self.in_transaction.insert(tp.clone());
        }
        let base_sequence = if self.producer_id >= 0 {
            *self.next_sequence.get(&tp).unwrap_or(&0)
        } else {
            -1
        };
        let spec = BatchSpec {
            producer_id: self.producer_id,
            producer_epoch: if self.producer_id >= 0 {
                self.epoch
            } else {
                -1
            },
            base_sequence,
            transactional: self.transactional_id.is_some(),
            ..BatchSpec::default()
        };
        let produced = broker.produce(topic, 0, Origin::Client, &spec, &records, 0)?;
        if self.producer_id >= 0 && !matches!(produced, Produced::Rejected(_)) {
            self.next_sequence.insert(
                tp,
                crate::format::batch::increment_sequence(base_sequence, records.len() as i32),
            );
        }
        self.last = Some((topic.to_string(), spec, records));
        Ok(Ok((produced, logged)))
    }

    /// The transaction ended, EndTxn answering with `epoch`: a new epoch
    /// (transaction version 2) restarts every sequence at 0
    /// (`TransactionManager` resets them with the epoch bump).
    pub(super) fn end_transaction(&mut self, epoch: i16) {
        self.in_transaction.clear();
        if epoch != self.epoch {
            self.epoch = epoch;
            self.next_sequence.clear();
        }
    }

    /// Resend the last request as it was (its acknowledgement was lost).
    pub(super) fn resend(&self, broker: &mut Broker) -> Result<Produced> {
        let Some((topic, spec, records)) = &self.last else {
            return Err(Error::Invalid("nothing to resend".into()));
        };
        broker.produce(topic, 0, Origin::Client, spec, records, 0)
    }
}
