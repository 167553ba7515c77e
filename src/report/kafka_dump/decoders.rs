//! kafka-dump-log's `--key-decoder-class` and `--value-decoder-class`:
//! the `org.apache.kafka.tools.api.Decoder`s Kafka ships, by class name.
//! `DumpLogSegments.DecoderMessageParser` runs the key's decoder, then the
//! value's, on the bytes of a record that has them, and prints what they
//! return; a decoder that throws stops the tool ([`Thrown`]).

use kaen_log::format::schema::Release;

use super::release::Tool;

/// Kafka's default for both options (and what an option given without a
/// class name means: joptsimple's `withOptionalArg().defaultsTo(...)`).
pub const STRING_DECODER: &str = "org.apache.kafka.tools.api.StringDecoder";

/// What a decoder class makes of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    /// `StringDecoder`: the bytes as UTF-8, malformed sequences replaced.
    #[default]
    String,
    /// `IntegerDecoder`: `ByteBuffer.wrap(bytes).getInt()`, the first 4
    /// bytes big-endian; fewer throw.
    Integer,
    /// `LongDecoder`: `getLong()`, the first 8 bytes.
    Long,
}

/// One decoder class, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassDecoder {
    kind: Kind,
    /// Named by its deprecated `kafka.serializer` name, which 3.9's tool
    /// converts, saying so on stdout (`DumpLogSegments.convertDeprecatedDecoderClass`).
    deprecated: bool,
}

/// Why a decoder threw: the exception Kafka's tool stops with, and what
/// was wrong with the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thrown {
    pub exception: &'static str,
    pub why: String,
}

const SIMPLE_NAMES: [(&str, Kind); 3] = [
    ("StringDecoder", Kind::String),
    ("IntegerDecoder", Kind::Integer),
    ("LongDecoder", Kind::Long),
];

impl ClassDecoder {
    /// The decoder a class name stands for in `tool`'s kafka-dump-log.
    /// klog runs no Java: it knows Kafka's own decoders, and refuses any
    /// other class, and `DefaultDecoder`, whose byte array Kafka's tool
    /// prints as its identity (`[B@` and a hash code, different every run).
    pub fn named(name: &str, tool: Tool) -> Result<ClassDecoder, String> {
        let (package, simple) = name.rsplit_once('.').unwrap_or(("", name));
        let kind = SIMPLE_NAMES
            .iter()
            .find(|(n, _)| *n == simple)
            .map(|(_, k)| *k);
        match (package, kind) {
            ("org.apache.kafka.tools.api", Some(kind)) => Ok(ClassDecoder {
                kind,
                deprecated: false,
            }),
            ("kafka.serializer", Some(kind)) if tool.0 <= Release::R3_9 => Ok(ClassDecoder {
                kind,
                deprecated: true,
            }),
            ("kafka.serializer", Some(_)) => Err(format!(
                "{name}: Kafka 4.0 removed the kafka.serializer decoders (its kafka-dump-log \
                 fails to load the class); name org.apache.kafka.tools.api.{simple}, or give \
                 --kafka-release 3.9"
            )),
            (_, _) if simple == "DefaultDecoder" => Err(format!(
                "{name}: kafka-dump-log prints what DefaultDecoder returns, a byte array, as \
                 its identity ([B@ and a hash code, different every run), not its bytes; \
                 `--decoder none` shows the bytes"
            )),
            _ => Err(format!(
                "{name}: klog runs no Java classes; it knows Kafka's own decoders: \
                 org.apache.kafka.tools.api.StringDecoder, IntegerDecoder and LongDecoder"
            )),
        }
    }

    /// 3.9's line on stdout for a deprecated name, printed each time its
    /// tool makes the parser (once per log file, value's decoder first).
    pub fn deprecation_line(self) -> Option<String> {
        let simple = SIMPLE_NAMES.iter().find(|(_, k)| *k == self.kind)?.0;
        self.deprecated.then(|| {
            format!(
                "kafka.serializer.{simple} is deprecated. Please use \
                 org.apache.kafka.tools.api.{simple} instead"
            )
        })
    }

    /// What `fromBytes` returns, as the tool prints it.
    pub fn decode(self, bytes: &[u8]) -> Result<String, Thrown> {
        let first = |n: usize, name: &str| -> Result<Vec<u8>, Thrown> {
            bytes.get(..n).map(<[u8]>::to_vec).ok_or_else(|| Thrown {
                exception: "java.nio.BufferUnderflowException",
                why: format!("{name} reads {n} bytes, there are {}", bytes.len()),
            })
        };
        Ok(match self.kind {
            Kind::String => String::from_utf8_lossy(bytes).into_owned(),
            Kind::Integer => {
                let b = first(4, "IntegerDecoder")?;
                i32::from_be_bytes([b[0], b[1], b[2], b[3]]).to_string()
            }
            Kind::Long => {
                let b = first(8, "LongDecoder")?;
                let mut a = [0u8; 8];
                a.copy_from_slice(&b);
                i64::from_be_bytes(a).to_string()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R44: Tool = Tool(Release::R4_4);

    #[test]
    fn kafka_decoders_by_name() {
        let int = ClassDecoder::named("org.apache.kafka.tools.api.IntegerDecoder", R44).unwrap();
        // ByteBuffer.getInt: big-endian, the first four bytes; bytes after
        // them are not read.
        assert_eq!(int.decode(&[0xff, 0xff, 0xff, 0xfe, 9]).unwrap(), "-2");
        let short = int.decode(&[1, 2]).unwrap_err();
        assert_eq!(short.exception, "java.nio.BufferUnderflowException");
        let long = ClassDecoder::named("org.apache.kafka.tools.api.LongDecoder", R44).unwrap();
        assert_eq!(
            long.decode(&(1i64 << 40).to_be_bytes()).unwrap(),
            "1099511627776"
        );
        assert!(long.decode(&[0; 7]).is_err());
        let string = ClassDecoder::named(STRING_DECODER, R44).unwrap();
        assert_eq!(string.decode(b"a\xffb").unwrap(), "a\u{fffd}b");
        assert_eq!(string.deprecation_line(), None);
    }

    #[test]
    fn deprecated_names_only_in_3_9() {
        let old = ClassDecoder::named("kafka.serializer.LongDecoder", Tool(Release::R3_9)).unwrap();
        assert_eq!(
            old.deprecation_line().unwrap(),
            "kafka.serializer.LongDecoder is deprecated. Please use \
             org.apache.kafka.tools.api.LongDecoder instead"
        );
        assert!(ClassDecoder::named("kafka.serializer.LongDecoder", R44)
            .unwrap_err()
            .contains("Kafka 4.0 removed"));
        assert!(
            ClassDecoder::named("org.apache.kafka.tools.api.DefaultDecoder", R44)
                .unwrap_err()
                .contains("[B@")
        );
        assert!(ClassDecoder::named("com.example.Avro", R44).is_err());
    }
}
