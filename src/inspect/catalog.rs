//! Every record type and version klog decodes, read from the tables that
//! define them: the metadata records and KRaft control records
//! ([`crate::metadata::records`]), the group and share coordinators'
//! records ([`crate::offsets::records`]) with the consumer protocol's
//! messages inside a classic group's members, and the transaction log's
//! key and value versions ([`crate::txn::txnlog`]). Each table says, per version,
//! the Kafka release that introduced it ([`Release`]); nothing here repeats
//! that knowledge.
//!
//! `klog generate man` writes the catalog as the klog-records(7) page, and
//! `klog generate tables` as JSON, field by field, for
//! `tests/kafka/schemas.sh`, which holds it against the schema files of a
//! Kafka release's jars.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use serde::Serialize;
use serde_json::Value;

use crate::format::schema::{Field, Release, Schema, Ty, OPEN};
use crate::metadata::records::{CONTROL, METADATA};
use crate::offsets::records::{
    RecordType, CLASSIC_RECORDS, CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION,
    GROUP_RECORDS, SHARE_RECORDS,
};
use crate::txn::txnlog;

/// The log a record type lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Log {
    /// `__cluster_metadata-0`, its snapshots and `bootstrap.checkpoint`.
    Metadata,
    /// The KRaft control records of the same files.
    Control,
    /// `__consumer_offsets` (the group coordinator).
    Group,
    /// `__share_group_state` (the share coordinator).
    Share,
    /// `__transaction_state` (the transaction coordinator).
    Transaction,
}

impl Log {
    pub fn name(self) -> &'static str {
        match self {
            Log::Metadata => "metadata",
            Log::Control => "kraft-control",
            Log::Group => "group-coordinator",
            Log::Share => "share-coordinator",
            Log::Transaction => "transaction-log",
        }
    }
}

/// Which part of a record a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// A metadata record's or a control record's value (the whole record).
    Record,
    Key,
    Value,
    /// A message inside a field of a record's value: the consumer
    /// protocol's subscription and assignment in each member of a classic
    /// group (GroupMetadata, record type 2).
    Embedded,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::Record => "record",
            Part::Key => "key",
            Part::Value => "value",
            Part::Embedded => "embedded",
        }
    }
}

/// One schema klog reads.
#[derive(Debug, Clone)]
pub struct Entry {
    pub log: Log,
    /// The apiKey, control type or record type.
    pub id: i16,
    pub part: Part,
    /// Kafka's name of the schema (the `name` of its JSON file).
    pub name: String,
    /// The versions read, each with the release that introduced it; empty
    /// for a coordinator key, which carries no version of its own.
    pub versions: (i16, i16),
    pub since: &'static [Release],
    /// The field table, when klog decodes the schema through one.
    pub schema: Option<&'static Schema>,
    /// The first release whose schema file of this name has this layout
    /// (see [`RecordType::file_since`]).
    pub file_since: Release,
    /// The first release that no longer reads the record type, if any.
    pub removed: Option<Release>,
}

impl Entry {
    fn of(log: Log, id: i16, part: Part, name: String, schema: &'static Schema) -> Entry {
        Entry {
            log,
            id,
            part,
            name,
            versions: schema.versions,
            since: schema.since,
            schema: Some(schema),
            file_since: Release::R3_9,
            removed: None,
        }
    }

    /// The version ranges that share a release, lowest first:
    /// `(first, last, release)`.
    pub fn release_ranges(&self) -> Vec<(i16, i16, Release)> {
        let mut out: Vec<(i16, i16, Release)> = Vec::new();
        for (v, r) in (self.versions.0..).zip(self.since.iter().copied()) {
            match out.last_mut() {
                Some((_, last, rel)) if *rel == r && *last + 1 == v => *last = v,
                _ => out.push((v, v, r)),
            }
        }
        out
    }
}

/// A coordinator's record types as entries: each type's key and value.
fn coordinator(log: Log, types: &'static [RecordType], out: &mut Vec<Entry>) {
    for t in types {
        let of = |part, name, schema| Entry {
            file_since: t.file_since,
            removed: t.gone_since,
            ..Entry::of(log, t.id, part, name, schema)
        };
        // Kafka names a key file after its record type: `<Type>Key`.
        out.push(Entry {
            since: &[],
            ..of(Part::Key, format!("{}Key", t.name), &t.key)
        });
        out.push(of(Part::Value, t.value.name.into(), &t.value));
    }
}

/// Every schema klog reads, log by log, in record type order.
pub fn entries() -> Vec<Entry> {
    let mut out = Vec::new();
    for (id, s) in METADATA {
        out.push(Entry::of(
            Log::Metadata,
            *id as i16,
            Part::Record,
            s.name.into(),
            s,
        ));
    }
    for (id, s) in CONTROL {
        out.push(Entry::of(Log::Control, *id, Part::Record, s.name.into(), s));
    }
    coordinator(Log::Group, CLASSIC_RECORDS, &mut out);
    for schema in [
        &CONSUMER_PROTOCOL_SUBSCRIPTION,
        &CONSUMER_PROTOCOL_ASSIGNMENT,
    ] {
        out.push(Entry::of(
            Log::Group,
            2,
            Part::Embedded,
            schema.name.into(),
            schema,
        ));
    }
    coordinator(Log::Group, GROUP_RECORDS, &mut out);
    coordinator(Log::Share, SHARE_RECORDS, &mut out);
    for (part, schema) in [
        (Part::Key, &txnlog::TRANSACTION_LOG_KEY),
        (Part::Value, &txnlog::TRANSACTION_LOG_VALUE),
    ] {
        out.push(Entry::of(
            Log::Transaction,
            0,
            part,
            schema.name.into(),
            schema,
        ));
    }
    out
}

/// Versions in the syntax of Kafka's schema files: `0+`, `3`, `1-2`.
pub fn version_range(from: i16, to: i16) -> String {
    if to == OPEN {
        format!("{from}+")
    } else if from == to {
        from.to_string()
    } else {
        format!("{from}-{to}")
    }
}

/// A type in the syntax of Kafka's schema files; a struct is `struct`
/// (Kafka names each struct type; the comparison looks at its fields).
fn type_name(ty: &Ty) -> String {
    match ty {
        Ty::String => "string".into(),
        Ty::Bytes => "bytes".into(),
        Ty::Array(elem) => format!("[]{}", type_name(elem)),
        Ty::Struct(_) => "struct".into(),
        scalar => scalar.scalar_name().unwrap_or("struct").into(),
    }
}

fn struct_fields(ty: &Ty) -> Option<&'static [Field]> {
    match ty {
        Ty::Array(elem) => struct_fields(elem),
        Ty::Struct(fields) => Some(fields),
        _ => None,
    }
}

/// A field of a schema as the catalog lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FieldJson {
    name: &'static str,
    #[serde(rename = "type")]
    ty: String,
    versions: String,
    nullable_versions: Option<String>,
    tag: Option<u32>,
    tagged_versions: Option<String>,
    since: &'static str,
    default: Value,
    nested: Option<NestedJson>,
    /// A struct's (or an array of structs') own fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<Vec<FieldJson>>,
}

/// A nested struct whose class checks the version.
#[derive(Serialize)]
struct NestedJson {
    name: &'static str,
    versions: String,
}

fn fields_json(fields: &[Field]) -> Vec<FieldJson> {
    fields
        .iter()
        .map(|f| FieldJson {
            name: f.name,
            ty: type_name(&f.ty),
            versions: version_range(f.versions.0, f.versions.1),
            nullable_versions: f.nullable_from.map(|n| version_range(n, OPEN)),
            tag: f.tag.map(|(t, _)| t),
            tagged_versions: f.tag.map(|(_, from)| version_range(from, OPEN)),
            since: f.since.name(),
            default: f.default_value(),
            nested: f.nested.map(|n| NestedJson {
                name: n.name,
                versions: version_range(n.versions.0, n.versions.1),
            }),
            fields: struct_fields(&f.ty).map(fields_json),
        })
        .collect()
}

/// A schema as the catalog lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SchemaJson {
    log: &'static str,
    id: i16,
    part: &'static str,
    name: String,
    valid_versions: String,
    flexible_versions: Option<String>,
    since: Vec<&'static str>,
    file_since: &'static str,
    removed: Option<&'static str>,
    fields: Option<Vec<FieldJson>>,
}

/// The catalog: every release compared, and every schema.
#[derive(Serialize)]
pub struct CatalogJson {
    releases: Vec<&'static str>,
    schemas: Vec<SchemaJson>,
}

/// The catalog as its JSON shows it: per schema its log, type, part, Kafka name,
/// `validVersions`, `flexibleVersions`, the release of each version, the
/// release whose schema file first has this layout (`fileSince`), the
/// release that no longer reads it (`removed`, null if none) and its fields
/// (each with the release that added it: `since`; its `default` as a
/// decoded value; for a nested struct whose class checks the version, its
/// name and versions: `nested`; null when klog has no field table for it).
pub fn document() -> CatalogJson {
    let schemas = entries()
        .iter()
        .map(|e| SchemaJson {
            log: e.log.name(),
            id: e.id,
            part: e.part.name(),
            name: e.name.clone(),
            valid_versions: version_range(e.versions.0, e.versions.1),
            flexible_versions: e.schema.map(|s| {
                s.flexible_from
                    .map_or("none".to_string(), |f| version_range(f, OPEN))
            }),
            since: e.since.iter().map(|r| r.name()).collect(),
            file_since: e.file_since.name(),
            removed: e.removed.map(Release::name),
            fields: e.schema.map(|s| fields_json(s.fields)),
        })
        .collect();
    CatalogJson {
        releases: Release::ALL.iter().map(|r| r.name()).collect(),
        schemas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_version_has_a_release() {
        for e in entries() {
            if e.part == Part::Key && e.log != Log::Transaction {
                assert!(e.since.is_empty(), "{}", e.name);
                continue;
            }
            assert_eq!(
                e.since.len() as i32,
                i32::from(e.versions.1) - i32::from(e.versions.0) + 1,
                "{}: one release per version",
                e.name
            );
            // A later version never comes from an earlier release.
            assert!(e.since.windows(2).all(|w| w[0] <= w[1]), "{}", e.name);
        }
    }

    #[test]
    fn ranges_group_versions_by_release() {
        let e = entries()
            .into_iter()
            .find(|e| e.name == "RegisterBrokerRecord")
            .unwrap();
        assert_eq!(
            e.release_ranges(),
            [(0, 3, Release::R3_9), (4, 4, Release::R4_3)]
        );
        assert_eq!(version_range(0, OPEN), "0+");
        assert_eq!(version_range(1, 1), "1");
        assert_eq!(version_range(0, 4), "0-4");
    }

    /// Every field of every table, nested ones included, with its path.
    fn all_fields(e: &Entry) -> Vec<(String, &'static Field)> {
        fn walk(prefix: &str, fields: &'static [Field], out: &mut Vec<(String, &'static Field)>) {
            for f in fields {
                let path = format!("{prefix}.{}", f.name);
                if let Some(inner) = struct_fields(&f.ty) {
                    walk(&path, inner, out);
                }
                out.push((path, f));
            }
        }
        let mut out = Vec::new();
        if let Some(s) = e.schema {
            walk(&e.name, s.fields, &mut out);
        }
        out
    }

    #[test]
    fn every_default_is_one_of_its_type_and_nested_classes_hold_structs() {
        for e in entries() {
            for (path, f) in all_fields(&e) {
                assert!(
                    crate::format::schema::defaults::parse(&f.ty, f.default).is_ok(),
                    "{path}: default {:?}",
                    f.default
                );
                if let Some(n) = f.nested {
                    assert!(struct_fields(&f.ty).is_some(), "{path} is no struct");
                    // The class reads a part of the versions of the message.
                    assert!(
                        e.versions.0 <= n.versions.0 && n.versions.1 <= e.versions.1,
                        "{path}: {n:?}"
                    );
                }
            }
        }
    }

    /// The `default` of each field in the schema files of 3.9.2 to 4.4.0,
    /// and the versions of the nested classes that check them
    /// (`RegisterBrokerRecord.BrokerEndpoint.HIGHEST_SUPPORTED_VERSION` is
    /// 4 in 4.4.0's jar, `TransactionLogValue.PartitionsSchema`'s 1).
    #[test]
    fn defaults_and_nested_versions_are_the_schema_files() {
        let field = |schema: &str, path: &str| {
            let e = entries().into_iter().find(|e| e.name == schema).unwrap();
            all_fields(&e)
                .into_iter()
                .find(|(p, _)| *p == format!("{schema}.{path}"))
                .unwrap()
                .1
        };
        let default = |schema: &str, path: &str| field(schema, path).default_value();
        assert_eq!(default("PartitionChangeRecord", "Leader"), json!(-2));
        assert_eq!(
            default("PartitionChangeRecord", "LeaderRecoveryState"),
            json!(-1)
        );
        assert_eq!(default("PartitionChangeRecord", "Isr"), Value::Null);
        assert_eq!(default("PartitionRecord", "LeaderRecoveryState"), json!(0));
        assert_eq!(default("PartitionRecord", "LeaderEpoch"), json!(-1));
        assert_eq!(
            default("PartitionRecord", "EligibleLeaderReplicas"),
            Value::Null
        );
        assert_eq!(default("RegisterBrokerRecord", "Fenced"), json!(true));
        assert_eq!(default("RegisterBrokerRecord", "LogDirs"), json!([]));
        assert_eq!(
            default("RegisterBrokerRecord", "CordonedLogDirs"),
            Value::Null
        );
        assert_eq!(
            default("BrokerRegistrationChangeRecord", "Fenced"),
            json!(0)
        );
        assert_eq!(default("ProducerIdsRecord", "BrokerEpoch"), json!(-1));
        assert_eq!(default("AbortTransactionRecord", "Reason"), Value::Null);
        assert_eq!(
            default("TransactionLogValue", "PreviousProducerId"),
            json!(-1)
        );
        assert_eq!(
            default("TransactionLogValue", "NextProducerEpoch"),
            json!(-1)
        );
        assert_eq!(
            default("TransactionLogValue", "ClientTransactionVersion"),
            json!(0)
        );
        assert_eq!(default("OffsetCommitValue", "leaderEpoch"), json!(-1));
        assert_eq!(
            default("OffsetCommitValue", "topicId"),
            json!(crate::format::schema::ZERO_UUID)
        );
        assert_eq!(
            default("GroupMetadataValue", "currentStateTimestamp"),
            json!(-1)
        );
        assert_eq!(
            default("GroupMetadataValue", "members.groupInstanceId"),
            Value::Null
        );
        assert_eq!(
            default("StreamsGroupMetadataValue", "ValidatedTopologyEpoch"),
            json!(-1)
        );
        assert_eq!(
            default("StreamsGroupMetadataValue", "LastAssignmentConfigs"),
            json!([])
        );
        assert_eq!(
            default("StreamsGroupMemberMetadataValue", "UserEndpoint"),
            Value::Null
        );
        assert_eq!(
            default("ShareSnapshotValue", "DeliveryCompleteCount"),
            json!(-1)
        );
        assert_eq!(
            default("ConsumerGroupMetadataValue", "MetadataHash"),
            json!(0)
        );
        assert_eq!(
            default("ConsumerProtocolSubscription", "GenerationId"),
            json!(-1)
        );
        assert_eq!(
            default("ConsumerProtocolAssignment", "UserData"),
            Value::Null
        );
        // A nullable struct without a default is a new struct, not null.
        assert_eq!(
            default("ConsumerGroupMemberMetadataValue", "ClassicMemberMetadata"),
            json!({"sessionTimeoutMs": 0, "supportedProtocols": []})
        );
        let nested =
            |schema: &str, path: &str| field(schema, path).nested.map(|n| (n.name, n.versions));
        let classes = [
            (
                "RegisterBrokerRecord",
                "EndPoints",
                "BrokerEndpoint",
                (0, 4),
            ),
            ("RegisterBrokerRecord", "Features", "BrokerFeature", (0, 4)),
            (
                "RegisterControllerRecord",
                "EndPoints",
                "ControllerEndpoint",
                (0, 0),
            ),
            ("ClientQuotaRecord", "Entity", "EntityData", (0, 0)),
            ("VotersRecord", "Voters.Endpoints", "Endpoint", (0, 0)),
            (
                "TransactionLogValue",
                "TransactionPartitions",
                "PartitionsSchema",
                (0, 1),
            ),
            ("ShareUpdateValue", "StateBatches", "StateBatch", (0, 0)),
            // A field of versions 1+ in a message of 0-3: its class reads 1-3.
            (
                "ConsumerProtocolSubscription",
                "OwnedPartitions",
                "TopicPartition",
                (1, 3),
            ),
        ];
        for (schema, path, class, versions) in classes {
            assert_eq!(
                nested(schema, path),
                Some((class, versions)),
                "{schema}.{path}"
            );
        }
        // Common structs read any version.
        assert_eq!(nested("LeaderChangeMessage", "Voters"), None);
        assert_eq!(nested("GroupMetadataValue", "members"), None);
        assert_eq!(
            nested(
                "ShareGroupCurrentMemberAssignmentValue",
                "AssignedPartitions"
            ),
            None
        );
        assert_eq!(
            nested("ShareGroupTargetAssignmentMemberValue", "TopicPartitions"),
            Some(("TopicPartition", (0, 0)))
        );
    }

    /// The schema files of 3.9.2 to 4.4.0 (`common/message/*.json` of each
    /// release's jars): the release a tagged field came in, the release
    /// whose file first holds a layout, the release that dropped a type.
    #[test]
    fn fields_and_layouts_name_their_release() {
        let tables = serde_json::to_value(document()).unwrap();
        let schema = |name: &str| {
            tables["schemas"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .unwrap()
                .clone()
        };
        let field = |s: &Value, name: &str| {
            s["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == name)
                .unwrap()
                .clone()
        };
        let streams = schema("StreamsGroupMetadataValue");
        assert_eq!(field(&streams, "Epoch")["since"], "3.9 or earlier");
        assert_eq!(field(&streams, "ValidatedTopologyEpoch")["since"], "4.2");
        assert_eq!(field(&streams, "LastAssignmentConfigs")["since"], "4.2");
        assert_eq!(
            field(&streams, "LastAssignmentConfigs")["nullableVersions"],
            "0+"
        );
        assert_eq!(
            field(&streams, "StoredDescriptionTopologyEpoch")["since"],
            "4.4"
        );
        let txn = schema("TransactionLogValue");
        assert_eq!(field(&txn, "ClientTransactionVersion")["since"], "4.0");
        assert_eq!(field(&txn, "NextProducerEpoch")["since"], "4.1");
        assert_eq!(schema("LegacyOffsetCommitValue")["fileSince"], "4.1");
        assert_eq!(schema("ShareSnapshotValue")["fileSince"], "4.1");
        assert_eq!(schema("OffsetCommitValue")["fileSince"], "3.9 or earlier");
        assert_eq!(schema("ShareGroupPartitionMetadataValue")["removed"], "4.1");
        assert_eq!(schema("OffsetCommitValue")["removed"], Value::Null);
    }
}
