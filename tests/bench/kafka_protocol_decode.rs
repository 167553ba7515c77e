//! Full decode of one segment with an independent decoder, the
//! `kafka-protocol` crate (0.18): the file is read in 4 MiB chunks (as
//! klog's `SegmentReader` reads it) into one `BytesMut`, split into
//! batches by their length fields (offset: int64, batchLength: int32, so
//! a batch is 12 + batchLength bytes), and each batch is handed to
//! `RecordBatchDecoder::decode`, which checks the CRC-32C, decompresses
//! and decodes every record into a `Record` (key and value are `Bytes`
//! slices of the batch, headers an `IndexMap`). Each record's key and value
//! lengths are summed, and every batch's records are dropped before the
//! next is decoded, so memory stays at about one chunk and one batch.
//!
//! A Cargo example (`cargo build --release --example kafka_protocol_decode`,
//! using the dev-dependencies `kafka-protocol` and `bytes`), built and timed
//! by `tests/bench/run.sh` next to `klog_decode.rs`.
//!
//! Usage: kafka_protocol_decode FILE
//!
//! Prints `<records> records in <batches> batches (<key bytes> key bytes,
//! <value bytes> value bytes)`, the same line as `klog_decode`; exits 1 on
//! the first error (kafka-protocol rejects magic 0/1 message sets).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

use bytes::BytesMut;
use kafka_protocol::records::RecordBatchDecoder;

/// Bytes per read, as klog's segment reader.
const CHUNK: usize = 4 << 20;
/// offset: int64 + batchLength: int32.
const LOG_OVERHEAD: usize = 12;

#[derive(Default)]
struct Totals {
    batches: u64,
    records: u64,
    key_bytes: u64,
    value_bytes: u64,
}

/// Append up to `CHUNK` bytes from `file` to `buf` without zero-filling
/// the spare capacity first; returns the bytes read (0 at the end).
fn fill(file: &File, buf: &mut BytesMut) -> io::Result<usize> {
    buf.reserve(CHUNK);
    loop {
        let spare = buf.spare_capacity_mut();
        // SAFETY: `spare` is writable memory of `spare.len()` bytes owned by
        // `buf`; read(2) writes at most that many bytes into it.
        let n = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = n as usize;
        // SAFETY: read(2) initialised the first `n` bytes of the spare capacity.
        unsafe { buf.set_len(buf.len() + n) };
        return Ok(n);
    }
}

fn decode(file: &File) -> Result<Totals, String> {
    let mut buf = BytesMut::with_capacity(2 * CHUNK);
    let mut t = Totals::default();
    let mut position = 0u64;
    loop {
        // Decode every whole batch in the buffer.
        while let Some(len) = buf.get(8..LOG_OVERHEAD) {
            let batch_length = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
            let total = usize::try_from(batch_length)
                .map_err(|_| format!("position {position}: negative batchLength {batch_length}"))?
                + LOG_OVERHEAD;
            if buf.len() < total {
                break;
            }
            let mut batch = buf.split_to(total).freeze();
            let set = RecordBatchDecoder::decode(&mut batch)
                .map_err(|e| format!("position {position}: {e:#}"))?;
            t.batches += 1;
            for r in &set.records {
                t.records += 1;
                t.key_bytes += r.key.as_ref().map_or(0, |k| k.len() as u64);
                t.value_bytes += r.value.as_ref().map_or(0, |v| v.len() as u64);
            }
            position += total as u64;
        }
        match fill(file, &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    if !buf.is_empty() {
        return Err(format!(
            "position {position}: {} bytes at the end do not form a whole batch",
            buf.len()
        ));
    }
    Ok(t)
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: kafka_protocol_decode FILE");
        return ExitCode::from(2);
    };
    let shown = path.to_string_lossy().into_owned();
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kafka_protocol_decode: {shown}: {e}");
            return ExitCode::from(2);
        }
    };
    match decode(&file) {
        Ok(t) => {
            println!(
                "{} records in {} batches ({} key bytes, {} value bytes)",
                t.records, t.batches, t.key_bytes, t.value_bytes
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kafka_protocol_decode: {shown}: {e}");
            ExitCode::FAILURE
        }
    }
}
