//! What a kafka-dump-log parser makes of one record, and the words its
//! parsers print for a record they do not read.

/// What a parser makes of a record: the key and the payload to print,
/// each only when present.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub key: Option<String>,
    pub payload: Option<String>,
}

impl Parsed {
    /// A record the parser does not read: Kafka's words in the key's place
    /// (`Error at offset <offset>, skipping. <why>`), no payload.
    pub fn error(offset: i64, why: &dyn std::fmt::Display) -> Parsed {
        Parsed {
            key: Some(format!("Error at offset {offset}, skipping. {why}")),
            payload: None,
        }
    }

    /// A record type the coordinator does not know
    /// (`Deserializer.UnknownRecordTypeException`).
    pub fn unknown_type(offset: i64, record_type: i16) -> Parsed {
        Parsed {
            key: Some(format!(
                "Unknown record type {record_type} at offset {offset}, skipping."
            )),
            payload: None,
        }
    }

    /// A coordinator record without a key: Kafka's parser throws (and the
    /// tool stops); klog prints its message in the key's place and goes on.
    pub fn missing_key(offset: i64) -> Parsed {
        Parsed {
            key: Some(format!(
                "Failed to decode message at offset {offset} using the specified decoder \
                 (message had a missing key)"
            )),
            payload: None,
        }
    }
}
