//! Reading an offsets partition: its batches, control records and legacy
//! wrappers, record by record, with the hashed table's fast path for a
//! plain commit of a live key.

use std::path::Path;

use super::{AsOf, BadRecord, Commits, RecordAt, Replay};
use crate::error::{DecodeError, Result};
use crate::format::control::{self, ControlType};
use crate::format::{BatchView, Entry, LegacyView, RecordView};
use crate::log::walk::Step;
use crate::log::{Partition, Policy};
use crate::offsets::{offset_commit_fields, offset_commit_value_fast};

impl BadRecord {
    /// A record (or batch) at `log_offset` of `file`, in offsets partition
    /// `lp`, that does not decode.
    fn at(file: &Path, lp: i32, log_offset: i64, error: DecodeError) -> BadRecord {
        BadRecord {
            file: file.to_path_buf(),
            log_partition: lp,
            log_offset,
            error,
        }
    }
}

impl Replay {
    /// A plain commit (`value`, no producer) of a key the hashed table
    /// holds, with nothing to warn of, replaces the stored one after one
    /// lookup of the key's bytes: [`Replay::record`] would decode the same
    /// key and do the same. Anything else (and any record while `--history`
    /// is kept, or with plain decoders) returns false, having changed nothing.
    fn replace_live(&mut self, r: &RecordAt<'_>, key: &[u8], value: Option<&[u8]>) -> bool {
        let (Commits::Hashed { map, next }, Some(v), false) = (
            &mut self.table,
            value,
            self.opts.history || self.opts.plain_decoders,
        ) else {
            return false;
        };
        let Some(fields) = offset_commit_fields(key) else {
            return false;
        };
        // Under the LegacyOffsetCommit key type 0 Kafka reads value version 0
        // alone: any other is the exact path's to refuse.
        if key.starts_with(&[0, 0]) && !v.starts_with(&[0, 0]) {
            return false;
        }
        let at = match map.get_index(*next) {
            Some((k, _)) if **k == *fields => *next,
            _ => match map.get_index_of(fields) {
                Some(at) => at,
                None => return false,
            },
        };
        let Some((_, slot)) = map.get_index_mut(at) else {
            return false;
        };
        // Any other value (a version or layout to warn about, a negative
        // offset, one that does not decode) takes the exact path.
        let Some(d) = offset_commit_value_fast(v).filter(|d| d.offset >= 0) else {
            return false;
        };
        *next = at + 1;
        slot.commit.set(d, r.lp, r.offset);
        if !self.removed_groups.is_empty() && self.removed_groups.remove(&*slot.group) {
            self.offset_groups.insert(slot.group.to_string());
        }
        self.stats.offset_commits += 1;
        true
    }

    /// Replay every segment of one offsets partition.
    pub fn replay_partition(&mut self, p: &Partition) -> Result<()> {
        let lp = p.partition;
        let mut scratch = Vec::new();
        let mut read_to = None;
        let mut walk = p.walk(Policy {
            meter: self.opts.meter,
            ..Policy::VALID_ENTRIES
        });
        loop {
            let w = match walk.next_step()? {
                None => break,
                Some(Step::Entry(w)) => w,
                // A batch that fails its CRC, or bytes that cannot be framed, are not replayed: say where.
                Some(Step::Damage(d)) => {
                    self.push_bad(BadRecord {
                        file: d.file,
                        log_partition: lp,
                        log_offset: d.base_offset.unwrap_or(-1),
                        error: d.error,
                    });
                    continue;
                }
                Some(_) => continue,
            };
            let (seg, entry) = (w.segment, w.entry);
            // (A legacy wrapper's offset is its last message's: its messages are checked one by one.)
            if let (Some(AsOf::Offset(end)), Entry::V2(_)) = (self.opts.as_of, &entry) {
                if entry.base_offset() >= end {
                    break;
                }
            }
            read_to = Some(w.next_offset);
            let base_offset = entry.base_offset();
            let past_as_of = match entry {
                Entry::V2(batch) => {
                    self.replay_batch(&seg.log, lp, base_offset, &batch, &mut scratch)
                }
                Entry::Legacy(m) => self.replay_legacy(&seg.log, lp, base_offset, &m, &mut scratch),
            };
            if past_as_of {
                break;
            }
        }
        let log_end = match self.opts.as_of {
            Some(_) => read_to.unwrap_or_else(|| p.log_start_offset(None)),
            None => p.log_end_offset()?,
        };
        self.stats.log_end_offsets.insert(lp, log_end);
        Ok(())
    }

    /// The records of one batch (at `base_offset` of `file`, offsets
    /// partition `lp`); whether `--as-of` stopped the replay in it.
    fn replay_batch(
        &mut self,
        file: &Path,
        lp: i32,
        base_offset: i64,
        batch: &BatchView<'_>,
        scratch: &mut Vec<u8>,
    ) -> bool {
        let h = batch.header;
        let bad = |error| BadRecord::at(file, lp, base_offset, error);
        let records = match batch.records(scratch, self.opts.limits) {
            Ok(r) => r,
            Err(e) => {
                self.push_bad(bad(e));
                return false;
            }
        };
        let mut past_as_of = false;
        let handed = records.try_each(|r| {
            if self.past_as_of(r.offset, r.timestamp) {
                past_as_of = true;
                return Ok(false);
            }
            self.stats.records += 1;
            let at = if r.position >= batch.position {
                r.position
            } else {
                batch.position
            };
            if h.is_control() {
                self.control_record(file, lp, h.producer_id, r, at);
                return Ok(true);
            }
            // `CoordinatorLoaderImpl` passes every batch's producer id on, and
            // `OffsetMetadataManager.replay` holds a commit as pending whenever
            // it is not NO_PRODUCER_ID (-1); the coordinator writes a producer
            // id only into transactional batches.
            let txn = (h.producer_id != -1).then_some(h.producer_id);
            let record = RecordAt {
                file,
                lp,
                offset: r.offset,
                batch_position: batch.position,
                at,
                timestamp: r.timestamp,
            };
            self.data_record(&record, r.key, r.value, txn);
            Ok::<_, std::convert::Infallible>(true)
        });
        let Ok(error) = handed;
        if let Some(e) = error {
            self.push_bad(bad(e));
        }
        past_as_of
    }

    /// A control record `r` (its first byte at `at`) of producer `pid`: a
    /// COMMIT or ABORT marker ends its transaction.
    fn control_record(&mut self, file: &Path, lp: i32, pid: i64, r: &RecordView<'_>, at: u64) {
        self.stats.control_records += 1;
        match control::decode(r.key, r.value, at) {
            Ok(c) if c.kind == ControlType::Commit || c.kind == ControlType::Abort => {
                self.end_transaction(lp, pid, c.kind == ControlType::Commit, r.offset);
            }
            Ok(_) => {}
            Err(error) => self.push_bad(BadRecord::at(file, lp, r.offset, error)),
        }
    }

    /// A compressed wrapper's inner messages are records of their own
    /// (`AbstractLegacyRecordBatch` iterates them at their absolute
    /// offsets); the loader replays them like any batch without a
    /// producer. Whether `--as-of` stopped the replay in it.
    fn replay_legacy(
        &mut self,
        file: &Path,
        lp: i32,
        base_offset: i64,
        m: &LegacyView<'_>,
        scratch: &mut Vec<u8>,
    ) -> bool {
        let messages = match m.messages(scratch, self.opts.limits) {
            Ok(list) => list,
            Err(error) => {
                self.push_bad(BadRecord::at(file, lp, base_offset, error));
                return false;
            }
        };
        for msg in messages {
            if self.past_as_of(msg.offset, msg.timestamp) {
                return true;
            }
            self.stats.records += 1;
            let record = RecordAt {
                file,
                lp,
                offset: msg.offset,
                batch_position: m.position,
                at: m.position,
                timestamp: msg.timestamp,
            };
            self.data_record(&record, msg.key, msg.value, None);
        }
        false
    }

    /// Whether `--as-of` stops the replay before a record at `offset` stamped `timestamp`.
    fn past_as_of(&self, offset: i64, timestamp: i64) -> bool {
        match self.opts.as_of {
            Some(AsOf::Offset(end)) => offset >= end,
            Some(AsOf::Timestamp(ts)) => timestamp > ts,
            None => false,
        }
    }

    /// Apply one data record; one that does not decode is reported and skipped.
    fn data_record(
        &mut self,
        r: &RecordAt<'_>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        txn_producer: Option<i64>,
    ) {
        if let (None, Some(k)) = (txn_producer, key) {
            if self.replace_live(r, k, value) {
                return;
            }
        }
        if let Err(error) = self.record(r, key, value, txn_producer) {
            self.push_bad(BadRecord::at(r.file, r.lp, r.offset, error));
        }
    }
}
