//! The version that starts a coordinator record's value (the "Kafka
//! protocol" encoding of internal-topic keys and values is read and written
//! by the schema interpreter, [`crate::format::schema`]).

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

/// Read the int16 version that starts a coordinator record value and check
/// it against the versions Kafka reads for its schema: one outside them is
/// refused, as `CoordinatorRecordSerde.deserialize` refuses it (it throws
/// `UnknownRecordVersionException` before the generated reader runs, and
/// `CoordinatorLoaderImpl` fails the partition's load).
pub fn read_value_version(
    c: &mut Cursor<'_>,
    schema: &'static str,
    known: std::ops::RangeInclusive<i16>,
) -> Result<i16, DecodeError> {
    let at = c.position();
    let version = c.i16()?;
    if !known.contains(&version) {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::RecordVersion {
                schema,
                version,
                lowest: *known.start(),
                newest: *known.end(),
            },
        ));
    }
    Ok(version)
}
