//! Offline offset resets: where a group's committed offsets would go, by
//! the rules `kafka-consumer-groups --reset-offsets` follows
//! (`ConsumerGroupCommand.ConsumerGroupService.prepareOffsetsToReset`),
//! with the partitions' ends read from the files as ListOffsets would
//! answer them (read_uncommitted):
//!
//! - `--to-earliest`: the log start offset (of a topic with tiered
//!   storage, Kafka's, below the first local segment:
//!   [`crate::tiered::log_starts`]);
//! - `--to-latest`: the high watermark (the log end without a checkpoint);
//! - `--to-current`: the committed offset, else the latest;
//! - `--to-offset N`, `--shift-by N` (committed + N; refused without a
//!   committed offset) and a plan from a file: clamped into
//!   [log start, latest] (`checkOffsetsRange`), with a note;
//! - `--to-datetime T`, `--by-duration D` (now − D): the first offset
//!   stamped at or after T ([`Partition::offset_for_timestamp`]); none below
//!   the high watermark falls back to the latest, as the tool does
//!   ("Falling back to latest known offset"); refused for a topic with
//!   tiered storage when the record may live in a remote segment
//!   (`Catalog::remote_may_hold`).
//!
//! Which partitions exist comes from the KRaft metadata of the directories
//! when they have it, else from the partition folders in them
//! ([`Catalog`]); an unknown topic or partition is refused, and so is a
//! topic name Kafka's `Topic.validate` refuses.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::DecodeLimits;
use crate::inspect::consumer_lag::{partition_ends, PartitionEnds};
use crate::log::appender::validate_topic_name;
use crate::log::{DataDir, Partition};
use crate::offsets::Replay;
use crate::tiered::Tiering;

/// Where the list of topics and partitions comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogSource {
    /// The KRaft metadata of this directory.
    Metadata(PathBuf),
    /// The partition folders of the directories given.
    Folders,
}

/// The topics and partitions that exist, and the partition folders at hand.
#[derive(Debug)]
pub struct Catalog {
    pub source: CatalogSource,
    topics: BTreeMap<String, BTreeSet<i32>>,
    /// Live partition folders, with the data directory holding each (the first given wins).
    folders: BTreeMap<(String, i32), (Partition, PathBuf)>,
    /// Tiered storage: the log start of a topic with it is Kafka's, not
    /// the first local segment's.
    tiering: Tiering,
}

impl Catalog {
    /// Read what exists from `dirs`.
    pub fn open(dirs: &[PathBuf]) -> Result<Catalog> {
        let mut folders = BTreeMap::new();
        let opened = dirs
            .iter()
            .map(|d| DataDir::open(d))
            .collect::<Result<Vec<_>>>()?;
        for (d, path) in opened.iter().zip(dirs) {
            for p in d.live() {
                folders
                    .entry((p.topic.clone(), p.partition))
                    .or_insert_with(|| (p.clone(), path.clone()));
            }
        }
        let refs: Vec<&DataDir> = opened.iter().collect();
        for d in dirs {
            let Some(folder) = crate::metadata::metadata_folder(d) else {
                continue;
            };
            let replayed = crate::metadata::replay(&folder, None)?;
            // A catalog short of topics klog could not read would refuse
            // real ones: the metadata must be read in full.
            let incomplete = replayed.incomplete();
            if incomplete.iter().any(|s| {
                matches!(
                    s,
                    crate::metadata::image::Section::Topics | crate::metadata::image::Section::All
                )
            }) {
                let first = |s| replayed.findings.iter().find(|f| f.severity == s);
                let why = first(crate::log::findings::Severity::Error)
                    .or_else(|| first(crate::log::findings::Severity::Warning))
                    .map_or_else(String::new, |f| format!(": {f}"));
                return Err(Error::layout(
                    &folder,
                    format!("klog cannot read the topics of this metadata log in full{why}"),
                ));
            }
            let image = replayed.image;
            let topics = image
                .topics
                .values()
                .map(|t| (t.name.clone(), t.partitions.keys().copied().collect()))
                .collect();
            return Ok(Catalog {
                source: CatalogSource::Metadata(folder),
                topics,
                folders,
                tiering: Tiering::read(&refs, Some(&image))?,
            });
        }
        let mut topics: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for (t, p) in folders.keys() {
            topics.entry(t.clone()).or_default().insert(*p);
        }
        Ok(Catalog {
            source: CatalogSource::Folders,
            topics,
            folders,
            tiering: Tiering::read(&refs, None)?,
        })
    }

    fn says(&self) -> String {
        match &self.source {
            CatalogSource::Metadata(f) => format!("the KRaft metadata in {}", f.display()),
            CatalogSource::Folders => {
                "the partition folders of the directories given, which have no KRaft metadata"
                    .into()
            }
        }
    }

    /// Every partition of `topic`; an invalid or unknown topic is refused.
    pub fn partitions_of(&self, topic: &str) -> Result<Vec<i32>> {
        validate_topic_name(topic).map_err(Error::Invalid)?;
        self.topics
            .get(topic)
            .map(|ps| ps.iter().copied().collect())
            .ok_or_else(|| Error::Invalid(format!("unknown topic {topic:?} (by {})", self.says())))
    }

    /// Refuse an invalid topic name, an unknown topic or an unknown partition.
    pub fn check(&self, topic: &str, partition: i32) -> Result<()> {
        let partitions = self.partitions_of(topic)?;
        if !partitions.contains(&partition) {
            return Err(Error::Invalid(format!(
                "unknown partition {topic}-{partition}: {topic} has the partitions {partitions:?} (by {})",
                self.says()
            )));
        }
        Ok(())
    }

    /// Refuse a time whose first record may live in `p`'s remote segments,
    /// which klog cannot read: with tiered storage Kafka looks there first
    /// (`UnifiedLog.fetchOffsetByTimestamp` →
    /// `RemoteLogManager.findOffsetByTimestamp`: the first remote segment
    /// whose largest timestamp is at or after the time), and only then in
    /// the local log.
    fn remote_may_hold(&self, p: &Partition, ends: &PartitionEnds, t: i64) -> Result<()> {
        if ends.local_log_start <= ends.log_start {
            return Ok(());
        }
        let holder = match self.tiering.remote_of(p) {
            None => Some(format!(
                "no directory given holds its __remote_log_metadata, which would say whether offsets {}..={} \
                 hold one",
                ends.log_start,
                ends.local_log_start - 1
            )),
            Some(rp) => rp
                .readable()
                .filter(|s| s.end_offset >= ends.log_start)
                .find(|s| s.max_timestamp_ms >= t)
                .map(|s| {
                    format!(
                        "remote segment {}..={} holds records stamped up to {}",
                        s.start_offset,
                        s.end_offset,
                        crate::format::time::format_iso_ms(s.max_timestamp_ms)
                    )
                }),
        };
        match holder {
            None => Ok(()),
            Some(why) => Err(Error::Invalid(format!(
                "{}-{}: the first record stamped at or after {} may live in tiered storage, which klog cannot \
                 read ({why}): Kafka would look there first; give --to-offset instead",
                p.topic,
                p.partition,
                crate::format::time::format_iso_ms(t)
            ))),
        }
    }

    /// The ends of `topic`-`partition`, from its folder in the directories given.
    pub fn ends(&self, topic: &str, partition: i32) -> Result<(PartitionEnds, &Partition)> {
        self.check(topic, partition)?;
        let (p, dir) = self.folders.get(&(topic.to_string(), partition)).ok_or_else(|| {
            Error::Invalid(format!(
                "{topic}-{partition} has no folder in the directories given, so its log start and high \
                 watermark are unknown: give the log directory of a broker that holds it"
            ))
        })?;
        Ok((partition_ends(p, dir, &self.tiering)?, p))
    }
}

/// Where the new offsets come from (the SPEC of `kafka-consumer-groups`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    Earliest,
    Latest,
    Current,
    Offset(i64),
    ShiftBy(i64),
    /// The first offset stamped at or after this time (ms).
    Datetime(i64),
    /// Offsets from a plan file, by (topic, partition).
    Plan(BTreeMap<(String, i32), i64>),
}

/// One partition of a reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    pub topic: String,
    pub partition: i32,
    /// The committed offset now, if any.
    pub current: Option<i64>,
    pub new_offset: i64,
    pub log_start: i64,
    pub high_watermark: Option<i64>,
    pub log_end: i64,
    /// latest − new offset.
    pub lag_after: i64,
    /// Why the new offset is not what was asked (clamped, fallen back).
    pub note: Option<String>,
}

/// `requested` clamped into [log start, latest] (`checkOffsetsRange`), with a note when it moved.
pub fn clamp(
    topic: &str,
    partition: i32,
    requested: i64,
    ends: &PartitionEnds,
) -> (i64, Option<String>) {
    let latest = ends.latest();
    if requested > latest {
        (
            latest,
            Some(format!(
                "{topic}-{partition}: new offset {requested} is higher than the latest offset {latest}; set to {latest}"
            )),
        )
    } else if requested < ends.log_start {
        (
            ends.log_start,
            Some(format!(
                "{topic}-{partition}: new offset {requested} is lower than the earliest offset {}; set to {}",
                ends.log_start, ends.log_start
            )),
        )
    } else {
        (requested, None)
    }
}

/// The plan for `group` over `partitions` (for [`Spec::Plan`], its own keys).
pub fn plan(
    catalog: &Catalog,
    replay: &Replay,
    group: &str,
    partitions: &[(String, i32)],
    spec: &Spec,
    limits: DecodeLimits,
) -> Result<Vec<PlanRow>> {
    let keys: Vec<(String, i32)> = match spec {
        Spec::Plan(p) => p.keys().cloned().collect(),
        _ => partitions.to_vec(),
    };
    let mut rows = Vec::new();
    for (topic, partition) in keys {
        let (ends, p) = catalog.ends(&topic, partition)?;
        let current = replay.get(group, &topic, partition).map(|c| c.offset);
        let latest = ends.latest();
        let (new_offset, note) = match spec {
            Spec::Earliest => (ends.log_start, None),
            Spec::Latest => (latest, None),
            Spec::Current => match current {
                Some(c) => (c, None),
                None => (
                    latest,
                    Some(format!(
                        "{topic}-{partition}: no committed offset; set to the latest offset {latest}"
                    )),
                ),
            },
            Spec::Offset(n) => clamp(&topic, partition, *n, &ends),
            Spec::ShiftBy(n) => {
                let c = current.ok_or_else(|| {
                    Error::Invalid(format!(
                        "cannot shift the offset of {topic}-{partition}: group {group:?} has no committed offset there"
                    ))
                })?;
                clamp(&topic, partition, c.saturating_add(*n), &ends)
            }
            Spec::Plan(map) => {
                let n = map.get(&(topic.clone(), partition)).copied().unwrap_or(latest);
                clamp(&topic, partition, n, &ends)
            }
            Spec::Datetime(t) => match catalog
                .remote_may_hold(p, &ends, *t)
                .and_then(|()| p.offset_for_timestamp(*t, ends.log_start, limits))?
            {
                Some(found) if found.offset < latest => (found.offset, None),
                _ => (
                    latest,
                    Some(format!(
                        "{topic}-{partition}: no record stamped at or after {} below the latest offset; \
                         falling back to the latest offset {latest}",
                        crate::format::time::format_iso_ms(*t)
                    )),
                ),
            },
        };
        rows.push(PlanRow {
            topic,
            partition,
            current,
            new_offset,
            log_start: ends.log_start,
            high_watermark: ends.high_watermark,
            log_end: ends.log_end,
            lag_after: latest - new_offset,
            note,
        });
    }
    Ok(rows)
}

/// The longest line a plan may have: a group and a topic name (int16-length
/// strings in the offsets topic, at most 32,767 bytes each) quoted, two
/// numbers and the commas, with room to spare.
pub const PLAN_MAX_LINE: usize = 128 << 10;
/// The most rows a plan may have (a partition each).
pub const PLAN_MAX_ROWS: usize = 1_000_000;

/// Read a plan in `kafka-consumer-groups --export` CSV (`CsvUtils`: RFC
/// 4180, quoted where a field holds a comma or a quote):
/// `topic,partition,offset` rows, or `group,topic,partition,offset` rows of
/// which those of `group` are kept (`parseResetPlan`). Read line by line,
/// each at most [`PLAN_MAX_LINE`] bytes and at most [`PLAN_MAX_ROWS`] rows,
/// so no input (`/dev/zero`, a huge file) is held whole; `path` and the
/// line number name what is refused.
pub fn read_plan(
    input: impl std::io::Read,
    group: &str,
    path: &Path,
) -> Result<BTreeMap<(String, i32), i64>> {
    use std::io::BufRead;
    let mut input = std::io::BufReader::new(input);
    let mut out = BTreeMap::new();
    let mut line = Vec::new();
    let mut rows = 0usize;
    for number in 1.. {
        line.clear();
        let n = std::io::Read::take(&mut input, PLAN_MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(path, "read", e))?;
        if n == 0 {
            break;
        }
        let bad = |why: String| {
            Error::layout(
                path,
                format!("line {number}: {why} (expected topic,partition,offset or group,topic,partition,offset)"),
            )
        };
        if line.len() > PLAN_MAX_LINE {
            return Err(bad(format!("longer than {PLAN_MAX_LINE} bytes")));
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        rows += 1;
        if rows > PLAN_MAX_ROWS {
            return Err(bad(format!("more than {PLAN_MAX_ROWS} rows")));
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text);
        let mut record = csv::StringRecord::new();
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => return Err(bad(format!("not CSV: {e}"))),
        }
        let fields: Vec<&str> = record.iter().collect();
        let (g, t, p, o) = match fields.as_slice() {
            [t, p, o] => (group, *t, *p, *o),
            [g, t, p, o] => (*g, *t, *p, *o),
            _ => return Err(bad(format!("{} fields, not 3 or 4", fields.len()))),
        };
        let p: i32 = p
            .trim()
            .parse()
            .map_err(|_| bad(format!("the partition {p:?} is not a number")))?;
        let o: i64 = o
            .trim()
            .parse()
            .map_err(|_| bad(format!("the offset {o:?} is not a number")))?;
        if g == group {
            out.insert((t.to_string(), p), o);
        }
    }
    Ok(out)
}

/// The plan as `kafka-consumer-groups --export` prints it for one group:
/// `topic,partition,offset` lines (`CsvUtils.CsvRecordNoGroup`), the topic
/// (from the log) written as `cells` says and quoted as Kafka quotes it
/// ([`plan_field`]).
pub fn export_csv(rows: &[PlanRow], cells: crate::format::escape::CsvCells) -> String {
    rows.iter()
        .map(|r| {
            let topic = crate::format::escape::csv_cell(&r.topic, cells);
            format!("{},{},{}\n", plan_field(&topic), r.partition, r.new_offset)
        })
        .collect()
}

/// One text field of a plan as kafka-consumer-groups writes it: its
/// `CsvUtils` uses Jackson's `CsvMapper` with the default schema, whose
/// `CsvEncoder` quotes loosely rather than only where RFC 4180 must:
/// a value longer than 24 UTF-16 units (`MAX_QUOTE_CHECK`), or holding a
/// character below `-` (one past the largest of the separator `,`, the
/// quote `"` and the line feed: `_calcSafeChar`) or a backslash, is quoted,
/// a quote in it doubled. So a legal 25-character topic name is quoted,
/// as Kafka 4.4.0's `--export` writes it; both forms read back alike.
pub fn plan_field(s: &str) -> Cow<'_, str> {
    const MAX_QUOTE_CHECK: usize = 24;
    let quoted =
        s.encode_utf16().count() > MAX_QUOTE_CHECK || s.chars().any(|c| c < '-' || c == '\\');
    if quoted {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::plan_field;

    #[test]
    fn a_plan_field_is_quoted_where_kafka_quotes_it() {
        // Each value beside what kafka-consumer-groups' CsvUtils (Kafka
        // 4.4.0, jackson-dataformat-csv 2.21.7) writes for it as a topic.
        let kafka = [
            ("orders", "orders"),
            ("a.b_c-d", "a.b_c-d"),
            ("abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
            ("abcdefghijklmnopqrstuvwxy", "\"abcdefghijklmnopqrstuvwxy\""),
            ("a,b", "\"a,b\""),
            ("q\"t", "\"q\"\"t\""),
            ("sp ace", "\"sp ace\""),
            ("tab\tx", "\"tab\tx\""),
            ("nl\nx", "\"nl\nx\""),
            ("x+", "\"x+\""),
            ("x\\", "\"x\\\""),
            ("a=b", "a=b"),
            ("semi;c", "semi;c"),
            ("x~", "x~"),
            ("é", "é"),
            ("", ""),
        ];
        for (value, written) in kafka {
            assert_eq!(plan_field(value), written, "{value:?}");
        }
    }
}
