//! The fields of a decoded record (its JSON form): an absent or mistyped
//! field reads as 0, the empty string or `None`.

use serde_json::Value;

use super::{Listener, Uuid};

pub(super) fn int(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}

/// A bool field (false when the record has none, which a record as read
/// always has).
pub(super) fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

pub(super) fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

pub(super) fn ints(v: Option<&Value>) -> Option<Box<[i32]>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_i64)
            .map(|x| x as i32)
            .collect()
    })
}

/// A uuid field (its text form in the decoded record).
pub(super) fn uuid(v: &Value, k: &str) -> Uuid {
    v.get(k)
        .and_then(Value::as_str)
        .and_then(|s| Uuid::parse(s).ok())
        .unwrap_or(Uuid::ZERO)
}

pub(super) fn uuids(v: Option<&Value>) -> Option<Box<[Uuid]>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(|u| u.as_str().and_then(|s| Uuid::parse(s).ok()))
            .collect()
    })
}

pub(super) fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    })
}

pub(super) fn listeners(v: &Value) -> Vec<Listener> {
    v.get("endPoints")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Listener {
                    name: text(e, "name"),
                    host: text(e, "host"),
                    port: int(e, "port") as u16,
                    security_protocol: int(e, "securityProtocol") as i16,
                })
                .collect()
        })
        .unwrap_or_default()
}
