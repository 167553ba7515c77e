//! What kafka-dump-log prints after a control record's metadata
//! (`DumpLogSegments.printControlRecord`): a transaction marker's type and
//! coordinator epoch, a KRaft control record's generated JSON
//! (`SnapshotHeader {…}`, `SnapshotFooter {…}`, `KRaftVersion {…}`,
//! `KRaftVoters {…}`, from 4.1 `LeaderChange: {…}`), written at the
//! version its `Version` field holds, as `*JsonConverter.write(record,
//! record.version())`; any other type as `controlType: <TYPE>(<id>)`.

use kaen_log::format::control::{ControlRecord, ControlType};
use kaen_log::format::kafka_json::{message_node, to_string};
use kaen_log::metadata::records::{decode_control_value, CONTROL};

use super::release::Tool;

/// The text after the record's metadata (with its leading space).
pub fn control_text(tool: Tool, c: &ControlRecord, value: Option<&[u8]>) -> String {
    let label = match c.kind {
        ControlType::Abort | ControlType::Commit => {
            return format!(
                " endTxnMarker: {} coordinatorEpoch: {}",
                c.kind.name(),
                c.coordinator_epoch.unwrap_or(0)
            )
        }
        ControlType::LeaderChange if tool.leader_change_json() => "LeaderChange:",
        ControlType::SnapshotHeader => "SnapshotHeader",
        ControlType::SnapshotFooter => "SnapshotFooter",
        ControlType::KraftVersion => "KRaftVersion",
        ControlType::KraftVoters => "KRaftVoters",
        _ => return other(c),
    };
    match json(tool, c.kind.id(), value) {
        Some(json) => format!(" {label} {json}"),
        None => other(c),
    }
}

/// `controlType: <TYPE>(<id>)`.
fn other(c: &ControlRecord) -> String {
    format!(" controlType: {}({})", c.kind.name(), c.kind.id())
}

/// The generated JSON of a KRaft control record's value (read at version
/// 0, as `ControlRecordUtils` reads it), if it decodes.
fn json(tool: Tool, type_id: i16, value: Option<&[u8]>) -> Option<String> {
    let (_, schema) = CONTROL.iter().find(|(t, _)| *t == type_id)?;
    let data = decode_control_value(type_id, value, 0)?.data?;
    let version = data
        .get("version")
        .and_then(serde_json::Value::as_i64)
        .and_then(|v| i16::try_from(v).ok())
        .unwrap_or(0);
    Some(to_string(&message_node(schema, version, &data, tool.0)))
}
