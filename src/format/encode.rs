//! Encoding one v2 batch: header fields into a buffer, gaps for
//! `batchLength` and `crc`, the records (compressed if asked), then the
//! gaps back-filled. The CRC function and the field positions are the ones
//! the reader uses ([`batch::batch_crc`], [`batch`] constants).

use crate::format::batch::{self, attr, TimestampType};
use crate::format::compression::{self, Compression};
use crate::format::varint::{put_varint, put_varlong};

/// A record to be written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRecord {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
}

impl NewRecord {
    /// The fewest bytes this record can take in an uncompressed records
    /// section: its key, value and header bytes, and at least one byte for
    /// each varint (`DefaultRecord`: length, timestampDelta, offsetDelta,
    /// keyLength, valueLength, headerCount, and per header its key and
    /// value lengths) and the attributes byte.
    pub fn min_encoded_len(&self) -> u64 {
        let len = |b: &Option<Vec<u8>>| b.as_ref().map_or(0, |b| b.len() as u64);
        let headers: u64 = self
            .headers
            .iter()
            .map(|(k, v)| 2 + k.len() as u64 + len(v))
            .sum();
        7 + len(&self.key) + len(&self.value) + headers
    }
}

/// Everything in a batch header that is not derived from the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSpec {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub compression: Compression,
    pub timestamp_type: TimestampType,
    pub transactional: bool,
    pub control: bool,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    /// With `timestamp_type` LogAppendTime: the broker's clock at the
    /// append, which becomes the batch's maxTimestamp whatever the records
    /// carry (`LogValidator`, `setMaxTimestamp(LOG_APPEND_TIME, now)`;
    /// baseTimestamp and the records' deltas stay as sent).
    pub log_append_time: Option<i64>,
}

impl Default for BatchSpec {
    fn default() -> Self {
        BatchSpec {
            base_offset: 0,
            partition_leader_epoch: -1,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            transactional: false,
            control: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            log_append_time: None,
        }
    }
}

impl BatchSpec {
    /// The attributes field for this spec.
    pub fn attributes(&self) -> i16 {
        let mut a = i16::from(self.compression.id());
        if self.timestamp_type == TimestampType::LogAppendTime {
            a |= attr::TIMESTAMP_TYPE;
        }
        if self.transactional {
            a |= attr::TRANSACTIONAL;
        }
        if self.control {
            a |= attr::CONTROL;
        }
        a
    }
}

/// Append one record's bytes (length varint first) to `out`; `body` is scratch space.
fn put_record(
    out: &mut Vec<u8>,
    body: &mut Vec<u8>,
    r: &NewRecord,
    offset_delta: i32,
    ts_delta: i64,
) {
    body.clear();
    body.push(0); // attributes: int8
    put_varlong(body, ts_delta); // timestampDelta: varlong
    put_varint(body, offset_delta); // offsetDelta: varint
    put_bytes(body, r.key.as_deref()); // keyLength: varint, key
    put_bytes(body, r.value.as_deref()); // valueLength: varint, value
    put_varint(body, r.headers.len() as i32); // headerCount: varint
    for (k, v) in &r.headers {
        put_bytes(body, Some(k)); // headerKeyLength: varint, key
        put_bytes(body, v.as_deref()); // headerValueLength: varint, value
    }
    put_varint(out, body.len() as i32); // length: varint
    out.extend_from_slice(body);
}

fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_varint(out, -1),
        Some(b) => {
            put_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// Encode one batch holding `records` (at least one) with offsets
/// `spec.base_offset..spec.base_offset + records.len()`.
pub fn encode_batch(spec: &BatchSpec, records: &[NewRecord]) -> std::io::Result<Vec<u8>> {
    let first = records.first().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a batch needs at least one record",
        )
    })?;
    let base_timestamp = first.timestamp;
    let max_timestamp = match (spec.timestamp_type, spec.log_append_time) {
        (TimestampType::LogAppendTime, Some(now)) => now,
        _ => records
            .iter()
            .map(|r| r.timestamp)
            .max()
            .unwrap_or(base_timestamp),
    };

    let mut plain = Vec::with_capacity(records.len() * 32);
    let mut body = Vec::new();
    for (i, r) in records.iter().enumerate() {
        put_record(
            &mut plain,
            &mut body,
            r,
            i as i32,
            r.timestamp.wrapping_sub(base_timestamp),
        );
    }
    let section = match spec.compression {
        Compression::None => plain,
        codec => compression::compress(codec, &plain)?,
    };

    let mut out = Vec::with_capacity(batch::HEADER_LEN + section.len());
    out.extend_from_slice(&spec.base_offset.to_be_bytes()); // baseOffset: int64
    out.extend_from_slice(&[0; 4]); // batchLength: int32 (gap, filled below)
    out.extend_from_slice(&spec.partition_leader_epoch.to_be_bytes()); // partitionLeaderEpoch: int32
    out.push(2); // magic: int8
    out.extend_from_slice(&[0; 4]); // crc: uint32 (gap, filled below)
    out.extend_from_slice(&spec.attributes().to_be_bytes()); // attributes: int16
    out.extend_from_slice(&((records.len() - 1) as i32).to_be_bytes()); // lastOffsetDelta: int32
    out.extend_from_slice(&base_timestamp.to_be_bytes()); // baseTimestamp: int64
    out.extend_from_slice(&max_timestamp.to_be_bytes()); // maxTimestamp: int64
    out.extend_from_slice(&spec.producer_id.to_be_bytes()); // producerId: int64
    out.extend_from_slice(&spec.producer_epoch.to_be_bytes()); // producerEpoch: int16
    out.extend_from_slice(&spec.base_sequence.to_be_bytes()); // baseSequence: int32
    out.extend_from_slice(&(records.len() as i32).to_be_bytes()); // recordsCount: int32
    debug_assert_eq!(out.len(), batch::HEADER_LEN);
    out.extend_from_slice(&section);

    // batchLength is an int32: a larger batch cannot be framed.
    let batch_length = i32::try_from(out.len() - batch::LOG_OVERHEAD).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "a batch of {} bytes does not fit batchLength (int32)",
                out.len()
            ),
        )
    })?;
    if let Some(gap) = out.get_mut(batch::BATCH_LENGTH..batch::BATCH_LENGTH + 4) {
        gap.copy_from_slice(&batch_length.to_be_bytes());
    }
    let crc = batch::batch_crc(&out);
    if let Some(gap) = out.get_mut(batch::CRC..batch::CRC + 4) {
        gap.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{BatchView, DecodeLimits};

    #[test]
    fn reproduces_the_reference_vector_byte_for_byte() {
        let spec = BatchSpec {
            partition_leader_epoch: 0,
            ..BatchSpec::default()
        };
        let rec = NewRecord {
            value: Some(b"hi".to_vec()),
            timestamp: 1_700_000_000_000,
            ..Default::default()
        };
        let bytes = encode_batch(&spec, &[rec]).unwrap();
        assert_eq!(bytes, crate::format::batch::tests_support::HI);
    }

    #[test]
    fn reproduces_the_commit_marker_vector() {
        let (key, value) = crate::format::control::encode_marker(true, 7);
        let spec = BatchSpec {
            base_offset: 5,
            partition_leader_epoch: 0,
            transactional: true,
            control: true,
            producer_id: 1000,
            producer_epoch: 0,
            ..BatchSpec::default()
        };
        let rec = NewRecord {
            key: Some(key),
            value: Some(value),
            timestamp: 1_700_000_000_000,
            ..Default::default()
        };
        let bytes = encode_batch(&spec, &[rec]).unwrap();
        assert_eq!(bytes.len(), 78);
        let view = BatchView::new(&bytes, 0).unwrap();
        assert_eq!(view.header.crc, 0xDBC1_80DA);
        assert!(view.crc_valid());
    }

    #[test]
    fn compressed_batches_round_trip() {
        let recs: Vec<NewRecord> = (0..50)
            .map(|i| NewRecord {
                key: Some(format!("k{i}").into_bytes()),
                value: if i % 7 == 0 {
                    None
                } else {
                    Some(vec![i as u8; 40])
                },
                headers: vec![(b"h".to_vec(), None), (b"h".to_vec(), Some(b"x".to_vec()))],
                timestamp: 1_000 + i,
            })
            .collect();
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let spec = BatchSpec {
                base_offset: 100,
                compression: codec,
                ..BatchSpec::default()
            };
            let bytes = encode_batch(&spec, &recs).unwrap();
            let view = BatchView::new(&bytes, 0).unwrap();
            assert!(view.crc_valid());
            let mut scratch = Vec::new();
            let got: Vec<_> = view
                .records(&mut scratch, DecodeLimits::default())
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(got.len(), 50);
            for (i, (g, want)) in got.iter().zip(&recs).enumerate() {
                assert_eq!(g.offset, 100 + i as i64);
                assert_eq!(g.timestamp, want.timestamp);
                assert_eq!(g.key, want.key.as_deref());
                assert_eq!(g.value, want.value.as_deref());
                let hs: Vec<_> = g
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect();
                assert_eq!(hs, want.headers);
            }
        }
    }
}
