//! Interoperability with an independent implementation of the v2 record
//! batch, the `kafka-protocol` crate (0.18): batches klog writes decode with
//! its `RecordBatchDecoder`, and batches its `RecordBatchEncoder` writes
//! decode with klog, record for record, for every codec.
//!
//! What kafka-protocol 0.18 models differently from Kafka (and klog), each
//! pinned by a test below so a change on either side is noticed:
//! - headers are an `IndexMap<StrBytes, _>`: a repeated header key keeps one
//!   entry (the last value, at the first key's place) and a header key that
//!   is not UTF-8 fails the whole batch; Kafka's headers are a list of
//!   (String, bytes) and klog keeps every header as stored;
//! - LogAppendTime batches: it reports baseTimestamp + delta per record,
//!   where Kafka (and klog) report the batch's maxTimestamp; its encoder
//!   never sets the timestamp-type bit;
//! - its encoder takes baseTimestamp = the smallest record timestamp (klog
//!   and the Java producer use the first record's), so the two encodings of
//!   records whose first timestamp is not the smallest differ in bytes yet
//!   decode to the same records.
//!
//! Three gaps that older notes list for this crate do not hold for 0.18 and
//! are exercised as ordinary cases here: a null header value (-1) decodes to
//! `None`; timestampDelta is read as a varlong (a delta beyond i32 works);
//! snappy-java (xerial) framing is read and written, as klog writes it.

use bytes::Bytes;
use kaen_log::format::{
    encode_batch, BatchSpec, BatchView, Compression, DecodeLimits, NewRecord, RecordView,
    TimestampType,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression as KpCompression, Record, RecordBatchDecoder, RecordBatchEncoder,
    RecordEncodeOptions, TimestampType as KpTimestampType,
};

const T0: i64 = 1_700_000_000_000;

const CODECS: [(Compression, KpCompression); 5] = [
    (Compression::None, KpCompression::None),
    (Compression::Gzip, KpCompression::Gzip),
    (Compression::Snappy, KpCompression::Snappy),
    (Compression::Lz4, KpCompression::Lz4),
    (Compression::Zstd, KpCompression::Zstd),
];

type Headers = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// The records both sides must agree on: keys, null keys, empty keys and
/// values, null values (tombstones), binary values, headers (empty value,
/// null value), a timestamp before the first one (negative delta), a delta
/// beyond i32, and enough data to span several compression blocks.
/// Header keys are unique and UTF-8 (see the module docs for why).
fn cross_check_records() -> Vec<NewRecord> {
    let mut recs = vec![
        NewRecord {
            key: Some(b"k0".to_vec()),
            value: Some(b"v0".to_vec()),
            headers: vec![
                (b"trace".to_vec(), Some(b"abc".to_vec())),
                (b"empty".to_vec(), Some(Vec::new())),
            ],
            timestamp: T0,
        },
        NewRecord {
            key: None,
            value: Some((0..=255u8).collect()),
            headers: vec![],
            timestamp: T0 + 5,
        },
        NewRecord {
            key: Some(b"k2".to_vec()),
            value: None,
            headers: vec![(b"null-value".to_vec(), None)],
            timestamp: T0 - 3,
        },
        NewRecord {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: vec![
                (b"a".to_vec(), Some(b"1".to_vec())),
                ("ключ".as_bytes().to_vec(), Some(vec![0xff, 0x00])),
            ],
            timestamp: T0 + 3_000_000_000,
        },
    ];
    for i in 4..120u32 {
        recs.push(NewRecord {
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(
                (0..700u32)
                    .map(|j| (i.wrapping_mul(31) ^ j.wrapping_mul(7)) as u8)
                    .collect(),
            ),
            headers: vec![(b"i".to_vec(), Some(i.to_be_bytes().to_vec()))],
            timestamp: T0 + i64::from(i),
        });
    }
    recs
}

/// Batch headers to try: a plain producer, and a transactional idempotent one.
fn specs(codec: Compression) -> [BatchSpec; 2] {
    [
        BatchSpec {
            base_offset: 0,
            partition_leader_epoch: 0,
            compression: codec,
            ..BatchSpec::default()
        },
        BatchSpec {
            base_offset: 1_000_000,
            partition_leader_epoch: 5,
            compression: codec,
            timestamp_type: TimestampType::CreateTime,
            transactional: true,
            control: false,
            producer_id: 4242,
            producer_epoch: 7,
            base_sequence: 100,
            log_append_time: None,
        },
    ]
}

fn kp_headers(r: &Record) -> Headers {
    r.headers
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_ref().map(|b| b.to_vec())))
        .collect()
}

fn klog_headers(r: &RecordView<'_>) -> Headers {
    r.headers()
        .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
        .collect()
}

/// One record as klog decoded it, owned.
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Headers,
}

/// klog's decoding of one whole batch: CRC and header rules checked, all records.
fn klog_decode<'a>(bytes: &'a [u8], ctx: &str) -> (BatchView<'a>, Vec<Decoded>) {
    let view = BatchView::new(bytes, 0).unwrap_or_else(|e| panic!("{ctx}: klog BatchView: {e}"));
    assert!(view.crc_valid(), "{ctx}: klog says the CRC is wrong");
    view.check_header()
        .unwrap_or_else(|e| panic!("{ctx}: klog header rules: {e}"));
    let mut scratch = Vec::new();
    let records = view
        .records(&mut scratch, DecodeLimits::default())
        .unwrap_or_else(|e| panic!("{ctx}: klog records: {e}"))
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{ctx}: klog record: {e}"));
            Decoded {
                offset: r.offset,
                timestamp: r.timestamp,
                key: r.key.map(<[u8]>::to_vec),
                value: r.value.map(<[u8]>::to_vec),
                headers: klog_headers(&r),
            }
        })
        .collect();
    (view, records)
}

/// kafka-protocol's decoding of one whole batch (and nothing after it).
fn kp_decode(bytes: &[u8]) -> anyhow::Result<(KpCompression, Vec<Record>)> {
    let mut buf = Bytes::copy_from_slice(bytes);
    let set = RecordBatchDecoder::decode(&mut buf)?;
    anyhow::ensure!(buf.is_empty(), "{} bytes left after one batch", buf.len());
    anyhow::ensure!(set.version == 2, "version {}", set.version);
    Ok((set.compression, set.records))
}

fn kp_encode(records: &[Record], codec: KpCompression) -> Vec<u8> {
    let mut out = Vec::new();
    RecordBatchEncoder::encode(
        &mut out,
        records,
        &RecordEncodeOptions {
            version: 2,
            compression: codec,
        },
    )
    .unwrap_or_else(|e| panic!("{codec:?}: kafka-protocol encode: {e}"));
    out
}

/// (a) Every batch klog writes, uncompressed and with each codec, decodes
/// with kafka-protocol to the same records and producer fields.
#[test]
fn klog_batches_decode_with_kafka_protocol() {
    let recs = cross_check_records();
    for (codec, kp_codec) in CODECS {
        for spec in specs(codec) {
            let ctx = format!("klog→kafka-protocol {codec} base {}", spec.base_offset);
            let bytes = encode_batch(&spec, &recs).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let (compression, got) =
                kp_decode(&bytes).unwrap_or_else(|e| panic!("{ctx}: kafka-protocol: {e:#}"));
            assert_eq!(compression, kp_codec, "{ctx}: codec");
            assert_eq!(got.len(), recs.len(), "{ctx}: record count");
            for (i, (g, want)) in got.iter().zip(&recs).enumerate() {
                let rctx = format!("{ctx} record {i}");
                assert_eq!(g.offset, spec.base_offset + i as i64, "{rctx}: offset");
                assert_eq!(g.timestamp, want.timestamp, "{rctx}: timestamp");
                assert_eq!(g.timestamp_type, KpTimestampType::Creation, "{rctx}");
                assert_eq!(g.key.as_deref(), want.key.as_deref(), "{rctx}: key");
                assert_eq!(g.value.as_deref(), want.value.as_deref(), "{rctx}: value");
                assert_eq!(kp_headers(g), want.headers, "{rctx}: headers");
                assert_eq!(g.producer_id, spec.producer_id, "{rctx}: producer_id");
                assert_eq!(
                    g.producer_epoch, spec.producer_epoch,
                    "{rctx}: producer_epoch"
                );
                assert_eq!(
                    g.sequence,
                    spec.base_sequence.wrapping_add(i as i32),
                    "{rctx}: sequence"
                );
                assert_eq!(
                    g.partition_leader_epoch, spec.partition_leader_epoch,
                    "{rctx}: partition_leader_epoch"
                );
                assert_eq!(g.transactional, spec.transactional, "{rctx}: transactional");
                assert!(!g.control, "{rctx}: control");
            }
        }
    }
}

/// klog's control batches (a COMMIT marker) read as control records there too.
#[test]
fn klog_control_batch_decodes_with_kafka_protocol() {
    let (key, value) = kaen_log::format::control::encode_marker(true, 9);
    let spec = BatchSpec {
        base_offset: 77,
        partition_leader_epoch: 3,
        transactional: true,
        control: true,
        producer_id: 12,
        producer_epoch: 1,
        ..BatchSpec::default()
    };
    let rec = NewRecord {
        key: Some(key.clone()),
        value: Some(value.clone()),
        timestamp: T0,
        ..NewRecord::default()
    };
    let bytes = encode_batch(&spec, &[rec]).expect("encode marker");
    let (_, got) = kp_decode(&bytes).unwrap_or_else(|e| panic!("control batch: {e:#}"));
    assert_eq!(got.len(), 1, "control batch: record count");
    let g = &got[0];
    assert!(g.control && g.transactional, "control batch: attributes");
    assert_eq!((g.offset, g.producer_id, g.producer_epoch), (77, 12, 1));
    assert_eq!(g.key.as_deref(), Some(&key[..]), "control batch: key");
    assert_eq!(g.value.as_deref(), Some(&value[..]), "control batch: value");
}

/// Known gap, pinned: a repeated header key. klog keeps both headers in
/// order; kafka-protocol keeps one map entry holding the last value.
#[test]
fn duplicate_header_keys_collapse_in_kafka_protocol() {
    let rec = NewRecord {
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        headers: vec![
            (b"dup".to_vec(), Some(b"first".to_vec())),
            (b"other".to_vec(), Some(b"x".to_vec())),
            (b"dup".to_vec(), Some(b"second".to_vec())),
        ],
        timestamp: T0,
    };
    let bytes = encode_batch(&BatchSpec::default(), std::slice::from_ref(&rec)).expect("encode");
    let (_, klog) = klog_decode(&bytes, "duplicate header keys");
    assert_eq!(
        klog[0].headers, rec.headers,
        "klog keeps every header in order"
    );
    let (_, kp) = kp_decode(&bytes).unwrap_or_else(|e| panic!("duplicate header keys: {e:#}"));
    assert_eq!(
        kp_headers(&kp[0]),
        vec![
            (b"dup".to_vec(), Some(b"second".to_vec())),
            (b"other".to_vec(), Some(b"x".to_vec())),
        ],
        "kafka-protocol collapses a repeated header key (last value wins)"
    );
}

/// Known gap, pinned: a header key that is not UTF-8 (Kafka's Java client
/// cannot write one, but the format allows it). klog reads the bytes;
/// kafka-protocol rejects the batch.
#[test]
fn non_utf8_header_key_fails_in_kafka_protocol() {
    let rec = NewRecord {
        value: Some(b"v".to_vec()),
        headers: vec![(vec![0xff, 0xfe], Some(b"x".to_vec()))],
        timestamp: T0,
        ..NewRecord::default()
    };
    let bytes = encode_batch(&BatchSpec::default(), std::slice::from_ref(&rec)).expect("encode");
    let (_, klog) = klog_decode(&bytes, "non-UTF-8 header key");
    assert_eq!(
        klog[0].headers, rec.headers,
        "klog reads the raw header key"
    );
    let err = match kp_decode(&bytes) {
        Ok(_) => {
            panic!("kafka-protocol now accepts a non-UTF-8 header key: update the module docs")
        }
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.to_ascii_lowercase().contains("utf-8"),
        "kafka-protocol fails for another reason: {err}"
    );
}

/// Known difference, pinned: in a LogAppendTime batch Kafka's reader gives
/// every record the batch's maxTimestamp; klog does the same, kafka-protocol
/// gives baseTimestamp + delta.
#[test]
fn log_append_time_differs_in_kafka_protocol() {
    let recs: Vec<NewRecord> = (0..3)
        .map(|i| NewRecord {
            value: Some(vec![i as u8]),
            timestamp: T0 + i64::from(i) * 10,
            ..NewRecord::default()
        })
        .collect();
    let spec = BatchSpec {
        timestamp_type: TimestampType::LogAppendTime,
        ..BatchSpec::default()
    };
    let bytes = encode_batch(&spec, &recs).expect("encode");
    let (view, klog) = klog_decode(&bytes, "LogAppendTime");
    assert_eq!(view.header.max_timestamp, T0 + 20);
    assert!(
        klog.iter().all(|r| r.timestamp == T0 + 20),
        "klog: every record has maxTimestamp"
    );
    let (_, kp) = kp_decode(&bytes).unwrap_or_else(|e| panic!("LogAppendTime: {e:#}"));
    assert!(kp
        .iter()
        .all(|r| r.timestamp_type == KpTimestampType::LogAppend));
    let kp_ts: Vec<i64> = kp.iter().map(|r| r.timestamp).collect();
    assert_eq!(
        kp_ts,
        vec![T0, T0 + 10, T0 + 20],
        "kafka-protocol: base + delta even for LogAppendTime"
    );
}

/// The records as kafka-protocol models them, for a given batch header.
fn kp_records(spec: &BatchSpec, recs: &[NewRecord]) -> Vec<Record> {
    recs.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut rec = Record {
                transactional: spec.transactional,
                control: spec.control,
                delete_horizon: false,
                partition_leader_epoch: spec.partition_leader_epoch,
                producer_id: spec.producer_id,
                producer_epoch: spec.producer_epoch,
                timestamp_type: KpTimestampType::Creation,
                offset: spec.base_offset + i as i64,
                // kafka-protocol batches consecutive records only while
                // offset − sequence stays the same, so the sequence runs
                // along with the offset even without a producer (-1, 0, 1, …).
                sequence: spec.base_sequence.wrapping_add(i as i32),
                timestamp: r.timestamp,
                key: r.key.clone().map(Bytes::from),
                value: r.value.clone().map(Bytes::from),
                headers: Default::default(),
            };
            for (k, v) in &r.headers {
                let k = String::from_utf8(k.clone()).expect("cross-check header keys are UTF-8");
                rec.headers
                    .insert(StrBytes::from_string(k), v.clone().map(Bytes::from));
            }
            rec
        })
        .collect()
}

/// (b) Every batch kafka-protocol writes (version 2, uncompressed and each
/// codec it supports) decodes with klog: valid CRC, the same header fields
/// and the same records.
#[test]
fn kafka_protocol_batches_decode_with_klog() {
    let recs = cross_check_records();
    let min_ts = recs.iter().map(|r| r.timestamp).min().expect("records");
    let max_ts = recs.iter().map(|r| r.timestamp).max().expect("records");
    for (codec, kp_codec) in CODECS {
        for spec in specs(codec) {
            let ctx = format!("kafka-protocol→klog {codec} base {}", spec.base_offset);
            let bytes = kp_encode(&kp_records(&spec, &recs), kp_codec);
            let (view, got) = klog_decode(&bytes, &ctx);
            let h = view.header;
            assert_eq!(h.compression(), Some(codec), "{ctx}: codec");
            assert_eq!(h.base_offset, spec.base_offset, "{ctx}: base_offset");
            assert_eq!(
                h.last_offset_delta as usize,
                recs.len() - 1,
                "{ctx}: last_offset_delta"
            );
            assert_eq!(h.records_count as usize, recs.len(), "{ctx}: records_count");
            assert_eq!(h.producer_id, spec.producer_id, "{ctx}: producer_id");
            assert_eq!(
                h.producer_epoch, spec.producer_epoch,
                "{ctx}: producer_epoch"
            );
            assert_eq!(h.base_sequence, spec.base_sequence, "{ctx}: base_sequence");
            assert_eq!(
                h.partition_leader_epoch, spec.partition_leader_epoch,
                "{ctx}: partition_leader_epoch"
            );
            assert_eq!(
                h.is_transactional(),
                spec.transactional,
                "{ctx}: transactional"
            );
            assert!(!h.is_control(), "{ctx}: control");
            assert_eq!(
                h.timestamp_type(),
                TimestampType::CreateTime,
                "{ctx}: ts type"
            );
            // kafka-protocol's base timestamp is the smallest, not the first.
            assert_eq!(h.base_timestamp, min_ts, "{ctx}: base_timestamp");
            assert_eq!(h.max_timestamp, max_ts, "{ctx}: max_timestamp");
            assert_eq!(got.len(), recs.len(), "{ctx}: record count");
            for (i, (g, want)) in got.iter().zip(&recs).enumerate() {
                let rctx = format!("{ctx} record {i}");
                assert_eq!(g.offset, spec.base_offset + i as i64, "{rctx}: offset");
                assert_eq!(g.timestamp, want.timestamp, "{rctx}: timestamp");
                assert_eq!(g.key, want.key, "{rctx}: key");
                assert_eq!(g.value, want.value, "{rctx}: value");
                assert_eq!(g.headers, want.headers, "{rctx}: headers");
            }
        }
    }
}

/// With the first timestamp the smallest, both encoders agree on every
/// header field, so an uncompressed batch is the same bytes from both; the
/// snappy section starts with the same snappy-java header.
#[test]
fn both_encoders_write_identical_uncompressed_batches() {
    let recs: Vec<NewRecord> = cross_check_records()
        .into_iter()
        .filter(|r| r.timestamp >= T0)
        .collect();
    assert!(recs.len() > 100);
    for spec in specs(Compression::None) {
        let ctx = format!("identical bytes base {}", spec.base_offset);
        let klog = encode_batch(&spec, &recs).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let kp = kp_encode(&kp_records(&spec, &recs), KpCompression::None);
        assert!(klog == kp, "{ctx}: klog and kafka-protocol bytes differ");
    }
    let spec = specs(Compression::Snappy)[0];
    let klog = encode_batch(&spec, &recs).expect("klog snappy");
    let kp = kp_encode(&kp_records(&spec, &recs), KpCompression::Snappy);
    let xerial = |b: &[u8]| b[61..61 + 16].to_vec();
    assert_eq!(xerial(&klog), xerial(&kp), "snappy-java stream header");
    assert_eq!(
        &klog[61..61 + 8],
        kaen_log::format::compression::XERIAL_MAGIC,
        "klog writes the snappy-java magic"
    );
}

/// A log made of kafka-protocol's batches (all codecs, offsets increasing)
/// passes klog's verification end to end.
#[test]
fn kafka_protocol_log_passes_klog_verify() {
    let recs = cross_check_records();
    let mut log = Vec::new();
    let mut base = 0;
    for (codec, kp_codec) in CODECS {
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: 0,
            compression: codec,
            ..BatchSpec::default()
        };
        log.extend_from_slice(&kp_encode(&kp_records(&spec, &recs), kp_codec));
        base += recs.len() as i64;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("00000000000000000000.log");
    std::fs::write(&path, &log).expect("write log");
    let report = kaen_log::inspect::verify::verify_path(
        &path,
        &kaen_log::inspect::verify::Options::default(),
    )
    .expect("verify runs");
    let problems: Vec<String> = report.findings.iter().map(|p| p.detail.clone()).collect();
    assert!(report.ok(), "kafka-protocol log: {problems:?}");
    assert_eq!(report.checked.batches, CODECS.len() as u64);
    assert_eq!(report.checked.records, (recs.len() * CODECS.len()) as u64);
}
