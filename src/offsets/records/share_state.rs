//! The share coordinator's record types in `__share_group_state`
//! (ShareSnapshot, ShareUpdate) as schema tables.

use super::{rt, value, RecordType};
use crate::format::schema::f;
use crate::format::schema::types::*;
use crate::format::schema::{nested, Field, Release, Schema, Ty};

// ShareSnapshotValue.json / ShareUpdateValue.json: a state batch.
static STATE_BATCHES: Ty = Ty::Array(&Ty::Struct(&[
    f!("FirstOffset", I64),
    f!("LastOffset", I64),
    f!("DeliveryState", I8),
    f!("DeliveryCount", I16),
]));
static SHARE_KEY: &[Field] = &[f!("GroupId", S), f!("TopicId", U), f!("Partition", I32)];
// DeliveryCompleteCount: tagged, from Kafka 4.2 (ShareSnapshotValue.json,
// ShareUpdateValue.json).
static SHARE_SNAPSHOT: &[Field] = &[
    f!("SnapshotEpoch", I32),
    f!("StateEpoch", I32),
    f!("LeaderEpoch", I32),
    f!("StartOffset", I64),
    f!("DeliveryCompleteCount", I32, tag: Some((0, 0)), since: Release::R4_2, default: "-1"),
    f!("CreateTimestamp", I64),
    f!("WriteTimestamp", I64),
    f!("StateBatches", STATE_BATCHES, nested: nested("StateBatch", 0, 0)),
];
static SHARE_UPDATE: &[Field] = &[
    f!("SnapshotEpoch", I32),
    f!("LeaderEpoch", I32),
    f!("StartOffset", I64),
    f!("DeliveryCompleteCount", I32, tag: Some((0, 0)), since: Release::R4_2, default: "-1"),
    f!("StateBatches", STATE_BATCHES, nested: nested("StateBatch", 0, 0)),
];

/// ShareSnapshotKey.json: the key of the share coordinator's record type 0.
pub const SHARE_SNAPSHOT_KEY: Schema = super::key("ShareSnapshot", SHARE_KEY);

/// The share coordinator's record types (`__share_group_state`):
/// ShareSnapshotKey.json (0) and ShareUpdateKey.json (1).
pub static SHARE_RECORDS: &[RecordType] = &[
    // ShareSnapshotKey/Value.json, ShareUpdateKey/Value.json (4.0's files:
    // SnapshotEpoch a uint16, no Create/WriteTimestamp)
    RecordType {
        file_since: Release::R4_1,
        ..rt(
            0,
            "ShareSnapshot",
            SHARE_KEY,
            value("ShareSnapshotValue", &[Release::R4_0], SHARE_SNAPSHOT),
        )
    },
    RecordType {
        file_since: Release::R4_1,
        ..rt(
            1,
            "ShareUpdate",
            SHARE_KEY,
            value("ShareUpdateValue", &[Release::R4_0], SHARE_UPDATE),
        )
    },
];
