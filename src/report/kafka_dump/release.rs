//! What kafka-dump-log prints differently from one Kafka release to the
//! next: the tool's own code changed (`kafka.tools.DumpLogSegments`, Scala
//! up to 4.2, `org.apache.kafka.tools.DumpLogSegments`, Java, from 4.3),
//! not the records, so these rules go by the release klog mimics
//! (`dump-segment --kafka-release`). What depends on a record (its
//! version, the tagged fields it holds) is read from the record.

use kaen_log::format::schema::Release;

/// The release whose kafka-dump-log klog prints as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool(pub Release);

impl Default for Tool {
    /// The newest release klog knows.
    fn default() -> Self {
        Tool(Release::R4_4)
    }
}

/// The releases `--kafka-release` takes, as named there.
pub const RELEASES: &[(&str, Release)] = &[
    ("3.9", Release::R3_9),
    ("4.0", Release::R4_0),
    ("4.1", Release::R4_1),
    ("4.2", Release::R4_2),
    ("4.3", Release::R4_3),
    ("4.4", Release::R4_4),
];

/// `--kafka-release`: `4.1` or `4.1.1` (the patch level changes nothing
/// kafka-dump-log prints).
pub fn parse(text: &str) -> Result<Tool, String> {
    let minor = text.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    RELEASES
        .iter()
        .find(|(name, _)| *name == minor)
        .map(|(_, r)| Tool(*r))
        .ok_or_else(|| {
            let names: Vec<&str> = RELEASES.iter().map(|(n, _)| *n).collect();
            format!("klog knows kafka-dump-log of {}", names.join(", "))
        })
}

impl Tool {
    /// The Scala tool (3.9 to 4.2, `kafka.tools.DumpLogSegments.dumpLog`):
    /// a legacy record's line ends `crc: N}` (a stray brace in its format
    /// string), and with `--skip-record-metadata` a payload after no key
    /// is ` payload: …`, not `| payload: …`.
    pub fn scala(self) -> bool {
        self.0 <= Release::R4_2
    }

    /// `--transaction-log-decoder` prints the generated JSON of the key and
    /// value from 4.1 (`TransactionLogMessageParser extends
    /// CoordinatorRecordMessageParser`); before, the text of
    /// `TransactionLog.formatRecordKeyAndValue`.
    pub fn transaction_log_json(self) -> bool {
        self.0 >= Release::R4_1
    }

    /// 4.4's `TransactionLogMessageParser.valueAsJson` replaces the
    /// `transactionStatus` number with its name (`TransactionState.stateName`;
    /// a number it does not know as a string).
    pub fn transaction_status_name(self) -> bool {
        self.0 >= Release::R4_4
    }

    /// A LEADER_CHANGE control record prints as `LeaderChange: {json}`
    /// from 4.1 (`printControlRecord`); before, as any other control type:
    /// `controlType: LEADER_CHANGE(2)`.
    pub fn leader_change_json(self) -> bool {
        self.0 >= Release::R4_1
    }

    /// The field naming a share state value's version: 4.0's
    /// `ShareGroupStateMessageParser.jsonString` wrote it as `type`, 4.1's
    /// `CoordinatorRecordMessageParser.prepareValue` as `version`.
    pub fn share_value_version_key(self) -> &'static str {
        if self.0 <= Release::R4_0 {
            "type"
        } else {
            "version"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names() {
        assert_eq!(parse("4.1.1"), Ok(Tool(Release::R4_1)));
        assert_eq!(parse("3.9"), Ok(Tool(Release::R3_9)));
        assert!(parse("3.8").unwrap_err().contains("3.9, 4.0"));
        assert!(parse("4").is_err());
    }
}
