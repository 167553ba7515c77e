//! kafka-dump-log's message parsers (`DumpLogSegments.MessageParser`):
//! the key and payload printed after a record's metadata, by decoder flag.

use kaen_log::format::kafka_json::{constant_name, message_node, to_string};
use kaen_log::format::schema::Release;
use kaen_log::metadata::records::{decode_metadata, metadata_schema};
use serde_json::{Map, Value};

use super::release::Tool;
use super::{coordinator, txn_text};

/// Which parser reads a record's key and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parser {
    /// No decoder flag: `DecoderMessageParser` with `StringDecoder`, the
    /// bytes as UTF-8 (malformed sequences replaced).
    #[default]
    Strings,
    /// `--offsets-decoder`.
    Offsets,
    /// `--transaction-log-decoder`.
    TransactionLog,
    /// `--share-group-state-decoder`.
    ShareGroupState,
    /// `--cluster-metadata-decoder`.
    ClusterMetadata,
}

/// What a parser makes of a record: the key and the payload to print,
/// each only when present.
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl Parser {
    /// Whether what the parser prints is JSON, which klog escapes for the
    /// terminal as JSON (`\uXXXX`), not as text.
    pub fn prints_json(self, tool: Tool) -> bool {
        match self {
            Parser::Strings => false,
            Parser::TransactionLog => tool.transaction_log_json(),
            _ => true,
        }
    }

    /// The key and payload of the record at `offset`.
    pub fn parse(
        self,
        tool: Tool,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Parsed {
        match self {
            Parser::Strings => Parsed {
                key: key.map(|k| String::from_utf8_lossy(k).into_owned()),
                payload: value.map(|v| String::from_utf8_lossy(v).into_owned()),
            },
            Parser::Offsets => coordinator::offsets(tool, offset, key, value),
            Parser::ShareGroupState => coordinator::share_state(tool, offset, key, value),
            Parser::TransactionLog if tool.transaction_log_json() => {
                coordinator::transaction_log(tool, offset, key, value)
            }
            Parser::TransactionLog => txn_text::parse(offset, key, value),
            Parser::ClusterMetadata => Parsed {
                // No keys for metadata records.
                key: None,
                payload: Some(cluster_metadata(tool.0, offset, value)),
            },
        }
    }
}

/// `ClusterMetadataLogMessageParser`: `{"type":"<MetadataRecordType>",
/// "version":<n>,"data":{…}}`, or `Error at <offset>, skipping. <why>`
/// (no "offset" in these words).
fn cluster_metadata(release: Release, offset: i64, value: Option<&[u8]>) -> String {
    let Some(value) = value else {
        return format!("Error at {offset}, skipping. null value");
    };
    let rec = decode_metadata(value, 0);
    let schema = rec.frame.and_then(|f| metadata_schema(f.api_key));
    match (rec.frame, schema, &rec.data) {
        (Some(frame), Some(schema), Some(data)) => {
            let mut o = Map::new();
            o.insert("type".into(), Value::String(constant_name(schema.name)));
            o.insert("version".into(), Value::from(frame.version));
            o.insert(
                "data".into(),
                message_node(schema, frame.version, data, release),
            );
            to_string(&Value::Object(o))
        }
        _ => format!(
            "Error at {offset}, skipping. {}",
            rec.error.as_deref().unwrap_or("does not decode")
        ),
    }
}
