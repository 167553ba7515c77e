//! Read buffers whose first byte lies on a page boundary.
//!
//! The kernel copies page-cache bytes into a read's buffer, and on Linux
//! that copy costs several times as much system time when the buffer is
//! larger than the core's caches and does not start on a cache-line
//! boundary. A `Vec<u8>` of more than 128 KiB starts 16 bytes past a page
//! (where the C library puts a large allocation), so readers that keep
//! large buffers read into these instead.

use std::ops::{Deref, DerefMut};

/// Where a buffer's bytes start: a page, which is also a cache line.
const ALIGN: usize = 4096;

/// A zero-initialised byte buffer starting on an `ALIGN` boundary; it
/// dereferences to its bytes.
#[derive(Default)]
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A buffer of `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        if len == 0 {
            return AlignedBuf::default();
        }
        let raw = vec![0u8; len + ALIGN];
        // Always within ALIGN for a byte pointer; should it not be, the
        // buffer is merely slower.
        let start = match raw.as_ptr().align_offset(ALIGN) {
            s if s < ALIGN => s,
            _ => 0,
        };
        AlignedBuf { raw, start, len }
    }

    /// Make the buffer at least `len` bytes long. Growing allocates anew
    /// (the old bytes are not kept: the buffer is about to be read into).
    pub fn grow_to(&mut self, len: usize) {
        if len > self.raw.len().saturating_sub(self.start) {
            *self = AlignedBuf::zeroed(len);
        } else if len > self.len {
            self.len = len;
        }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.raw
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.raw
            .get_mut(self.start..self.start + self.len)
            .unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_page_and_grows_without_moving_what_it_hands_out() {
        for len in [1, 100, 4096, 65536, 2 << 20] {
            let mut b = AlignedBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0, "len {len}");
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 7;
            b.grow_to(len / 2);
            assert_eq!(b.len(), len, "never shrinks");
            b.grow_to(len * 2 + 1);
            assert_eq!(b.len(), len * 2 + 1);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        }
        let mut e = AlignedBuf::default();
        assert!(e.is_empty());
        e.grow_to(10);
        assert_eq!(e.len(), 10);
    }
}
