//! The compression codec ids of a batch's attributes (bits 0..2) and
//! Kafka's names for them (`CompressionType`); decompressing is
//! [`compression`](super::compression)'s.

use std::fmt;

/// A batch's compression codec (attribute bits 0..2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Compression {
    /// The codec for id 0..4.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            _ => return None,
        })
    }
    /// The id stored in the attributes.
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }
    /// Kafka's name for the codec.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The codec an attributes id names, as klog and kafka-dump-log print
    /// it: its name, or `unknown(N)` for an id no codec has.
    pub fn label_of_id(id: u8) -> String {
        match Compression::from_id(id) {
            Some(c) => c.name().to_string(),
            None => format!("unknown({id})"),
        }
    }
    /// Parse Kafka's name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::None, Self::Gzip, Self::Snappy, Self::Lz4, Self::Zstd]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
