//! What an append may write to: a valid topic name, and a partition
//! folder inside the locked data directory.

use std::path::Path;

use crate::error::{Error, Result};

/// Refuse a partition folder whose real location is not inside the locked
/// data directory: a folder symlinked from another data directory is under
/// that directory's lock (perhaps a running broker's), not this one.
pub fn check_real_parent(partition_dir: &Path, data_dir: &Path) -> Result<()> {
    let real =
        std::fs::canonicalize(partition_dir).map_err(|e| Error::io(partition_dir, "resolve", e))?;
    let locked = std::fs::canonicalize(data_dir).map_err(|e| Error::io(data_dir, "resolve", e))?;
    if real.parent() != Some(locked.as_path()) {
        return Err(Error::layout(
            partition_dir,
            format!(
                "is really {}, outside the locked data directory {}: refusing to write \
                 under another directory's lock",
                real.display(),
                locked.display()
            ),
        ));
    }
    Ok(())
}

/// Kafka's `Topic.validate`: at most 249 characters of [a-zA-Z0-9._-], not
/// `.` or `..`; and a partition number that is not negative.
pub(super) fn check_name(topic: &str, partition: i32) -> Result<()> {
    validate_topic_name(topic).map_err(Error::Invalid)?;
    if partition < 0 {
        return Err(Error::Invalid(format!(
            "invalid topic/partition {topic:?}/{partition}: a partition number is not negative"
        )));
    }
    Ok(())
}

/// Kafka's `Topic.validate` (`detectInvalidTopic`), with its messages: not
/// empty, `.` or `..`, at most 249 characters, only ASCII alphanumerics,
/// `.`, `_` and `-`.
pub fn validate_topic_name(topic: &str) -> std::result::Result<(), String> {
    let why = if topic.is_empty() {
        "the empty string is not allowed".to_string()
    } else if topic == "." || topic == ".." {
        format!("'{topic}' is not allowed")
    } else if topic.len() > MAX_TOPIC_NAME {
        format!(
            "topic name of {} characters: Kafka allows at most {MAX_TOPIC_NAME}",
            topic.len()
        )
    } else if !topic
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        format!(
            "{topic:?} contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        )
    } else {
        return Ok(());
    };
    Err(format!("Topic name is invalid: {why}"))
}

/// Kafka's `Topic.MAX_NAME_LENGTH`.
pub const MAX_TOPIC_NAME: usize = 249;
