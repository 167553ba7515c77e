//! The floor for `klog verify-crc`: read FILE once, front to back, and
//! CRC-32C every byte with the same crate klog uses. No framing, no header
//! rules, no records, one thread: what any CRC-checking reader pays at least.
//!
//! A Cargo example (`cargo build --release --example crc_floor`), built by
//! `tests/bench/run.sh`. Prints the byte count and the CRC so the work
//! cannot be optimized away.
//!
//! Usage: crc_floor FILE [BUFFER_BYTES]   (default 128 KiB, as GNU cat reads)

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: crc_floor FILE [BUFFER_BYTES]");
        return ExitCode::from(2);
    };
    let size = args
        .next()
        .and_then(|s| s.to_str()?.parse().ok())
        .unwrap_or(128 << 10);
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("crc_floor: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let mut buf = vec![0u8; size];
    let (mut crc, mut total) = (0u32, 0u64);
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                crc = crc32c::crc32c_append(crc, &buf[..n]);
                total += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("crc_floor: read: {e}");
                return ExitCode::from(2);
            }
        }
    }
    println!("{total} bytes, crc32c {crc:08x}");
    ExitCode::SUCCESS
}
