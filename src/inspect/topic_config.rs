//! A topic's log configuration as the broker owning a log directory
//! resolves it, for klog's writers and index rebuilds.
//!
//! Kafka's order, highest first (`LogManager.fetchTopicConfigOverrides`:
//! `LogConfig.fromProps(defaults, topic overrides)`, the defaults from
//! `KafkaConfig.extractLogConfigMap` after `DynamicBrokerConfig` laid the
//! dynamic configs over the static ones):
//! 1. `--config KEY=VALUE` given to klog (it stands for what klog cannot
//!    read: the broker's `server.properties`, or a value to force);
//! 2. the topic's own config (a ConfigRecord of resource type topic);
//! 3. the broker's dynamic config (resource type broker, named by its node
//!    id), under the broker synonym of the topic key
//!    (`ServerTopicConfigSynonyms`: `log.segment.bytes`, `log.roll.ms`
//!    then `log.roll.hours`, `log.index.size.max.bytes`,
//!    `log.index.interval.bytes`, `message.max.bytes`,
//!    `log.message.timestamp.type`);
//! 4. the cluster-wide dynamic default (resource type broker, empty name);
//! 5. Kafka's default (`LogConfig`, `ServerLogConfigs`).
//!
//! The static `server.properties` is not in a log directory, so klog cannot
//! see it: a value set only there must be given with `--config`. Every
//! value used is reported with where it came from.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::log::AppendConfig;
use crate::metadata::image::Image;

/// A topic config key klog uses, its broker synonyms in Kafka's order
/// (with how a synonym's value converts), and Kafka's default.
struct Key {
    topic: &'static str,
    broker: &'static [(&'static str, Convert)],
    default: &'static str,
}

#[derive(Clone, Copy)]
enum Convert {
    Same,
    /// `ConfigSynonym.HOURS_TO_MILLISECONDS`.
    HoursToMs,
}

/// The keys, in the order they are reported.
const KEYS: [Key; 6] = [
    Key {
        topic: "segment.bytes",
        broker: &[("log.segment.bytes", Convert::Same)],
        default: "1073741824",
    },
    Key {
        topic: "segment.ms",
        broker: &[
            ("log.roll.ms", Convert::Same),
            ("log.roll.hours", Convert::HoursToMs),
        ],
        default: "604800000",
    },
    Key {
        topic: "segment.index.bytes",
        broker: &[("log.index.size.max.bytes", Convert::Same)],
        default: "10485760",
    },
    Key {
        topic: "index.interval.bytes",
        broker: &[("log.index.interval.bytes", Convert::Same)],
        default: "4096",
    },
    Key {
        topic: "max.message.bytes",
        broker: &[("message.max.bytes", Convert::Same)],
        default: "1048588",
    },
    Key {
        topic: "message.timestamp.type",
        broker: &[("log.message.timestamp.type", Convert::Same)],
        default: "CreateTime",
    },
];

/// `ConfigResource.Type` ids in the metadata's ConfigRecords.
const TOPIC_RESOURCE: i8 = 2;
const BROKER_RESOURCE: i8 = 4;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--config KEY=VALUE`.
    Flag,
    /// The topic's config in the KRaft metadata.
    Topic,
    /// The broker's dynamic config in the metadata, under this name.
    Broker(i32, String),
    /// The cluster-wide dynamic default in the metadata, under this name.
    ClusterDefault(String),
    /// Kafka's default.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => f.write_str("--config"),
            Source::Topic => f.write_str("topic config"),
            Source::Broker(node, name) => write!(f, "broker {node}'s {name}"),
            Source::ClusterDefault(name) => write!(f, "cluster default {name}"),
            Source::Default => f.write_str("Kafka's default"),
        }
    }
}

/// One resolved value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    pub value: String,
    pub source: Source,
}

/// A topic's resolved log configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicConfig {
    pub topic: String,
    pub settings: Vec<Setting>,
}

/// Parse `--config KEY=VALUE` flags; only the keys klog uses are accepted.
pub fn parse_overrides(flags: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for flag in flags {
        let Some((k, v)) = flag.split_once('=') else {
            return Err(Error::Invalid(format!(
                "--config {flag:?}: expected KEY=VALUE"
            )));
        };
        if !KEYS.iter().any(|key| key.topic == k) {
            let known: Vec<&str> = KEYS.iter().map(|k| k.topic).collect();
            return Err(Error::Invalid(format!(
                "--config {k}: klog uses only the topic configs {}",
                known.join(", ")
            )));
        }
        out.insert(k.to_string(), v.trim().to_string());
    }
    Ok(out)
}

/// Resolve `topic`'s configuration for the broker owning `data_dir` (its
/// node id from `meta.properties`), from `image` (the newest KRaft metadata
/// image among the directories written: topic configs are the cluster's,
/// whichever broker's copy of the metadata log holds them) and `overrides`.
pub fn resolve(
    image: Option<&Image>,
    data_dir: &Path,
    topic: &str,
    overrides: &BTreeMap<String, String>,
) -> TopicConfig {
    resolve_in(image, crate::log::meta::node_id(data_dir), topic, overrides)
}

/// [`resolve`] over an image already replayed.
pub fn resolve_in(
    image: Option<&Image>,
    node: Option<i32>,
    topic: &str,
    overrides: &BTreeMap<String, String>,
) -> TopicConfig {
    let configs = |t: i8, name: &str| image.and_then(|i| i.configs.get(&(t, name.to_string())));
    let topic_configs = configs(TOPIC_RESOURCE, topic);
    let node_configs = node.and_then(|n| configs(BROKER_RESOURCE, &n.to_string()));
    let defaults = configs(BROKER_RESOURCE, "");
    let synonym = |m: Option<&BTreeMap<String, String>>, key: &Key| {
        key.broker.iter().find_map(|(name, convert)| {
            let v = m?.get(*name)?;
            let v = match convert {
                Convert::Same => v.clone(),
                Convert::HoursToMs => v
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .and_then(|h| h.checked_mul(3_600_000))
                    .map_or_else(|| v.clone(), |ms| ms.to_string()),
            };
            Some((v, name.to_string()))
        })
    };
    let settings = KEYS
        .iter()
        .map(|key| {
            let (value, source) = if let Some(v) = overrides.get(key.topic) {
                (v.clone(), Source::Flag)
            } else if let Some(v) = topic_configs.and_then(|m| m.get(key.topic)) {
                (v.clone(), Source::Topic)
            } else if let (Some((v, name)), Some(n)) = (synonym(node_configs, key), node) {
                (v, Source::Broker(n, name))
            } else if let Some((v, name)) = synonym(defaults, key) {
                (v, Source::ClusterDefault(name))
            } else {
                (key.default.to_string(), Source::Default)
            };
            Setting {
                key: key.topic,
                value,
                source,
            }
        })
        .collect();
    TopicConfig {
        topic: topic.to_string(),
        settings,
    }
}

impl TopicConfig {
    /// The value of `key` (one of the keys above).
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.key == key)
    }

    fn number(&self, key: &str) -> Result<i64> {
        let s = self
            .get(key)
            .ok_or_else(|| Error::Invalid(format!("{key}: not resolved")))?;
        s.value.trim().parse().map_err(|_| {
            Error::Invalid(format!(
                "{key}={:?} ({}) is not a number",
                s.value, s.source
            ))
        })
    }

    /// `index.interval.bytes`.
    pub fn index_interval_bytes(&self) -> Result<u64> {
        let v = self.number("index.interval.bytes")?;
        u64::try_from(v)
            .map_err(|_| Error::Invalid(format!("index.interval.bytes={v} is negative")))
    }

    /// The append path's configuration. `now_ms` is the broker's clock for
    /// `message.timestamp.type=LogAppendTime`.
    pub fn append_config(&self, now_ms: i64) -> Result<AppendConfig> {
        let bytes = |key: &str| -> Result<u64> {
            let v = self.number(key)?;
            u64::try_from(v).map_err(|_| Error::Invalid(format!("{key}={v} is negative")))
        };
        let log_append_time = match self.get("message.timestamp.type").map(|s| s.value.as_str()) {
            Some("LogAppendTime") => Some(now_ms),
            Some("CreateTime") | None => None,
            Some(other) => {
                return Err(Error::Invalid(format!(
                    "message.timestamp.type={other:?}: Kafka knows CreateTime and LogAppendTime"
                )))
            }
        };
        Ok(AppendConfig {
            segment_bytes: bytes("segment.bytes")?,
            index_interval_bytes: bytes("index.interval.bytes")?,
            max_batch_bytes: bytes("max.message.bytes")?,
            segment_index_bytes: bytes("segment.index.bytes")?,
            segment_ms: self.number("segment.ms")?,
            log_append_time,
            aborted_txn: Some(crate::txn::aborted_txn),
            ..AppendConfig::default()
        })
    }

    /// `key=value (source), ...` for people.
    pub fn describe(&self) -> String {
        self.settings
            .iter()
            .map(|s| format!("{}={} ({})", s.key, s.value, s.source))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// [`describe`](Self::describe) of `keys` only.
    pub fn describe_only(&self, keys: &[&str]) -> String {
        self.settings
            .iter()
            .filter(|s| keys.contains(&s.key))
            .map(|s| format!("{}={} ({})", s.key, s.value, s.source))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(entries: &[(i8, &str, &str, &str)]) -> Image {
        let mut img = Image::default();
        for (t, name, k, v) in entries {
            img.configs
                .entry((*t, name.to_string()))
                .or_default()
                .insert(k.to_string(), v.to_string());
        }
        img
    }

    #[test]
    fn kafka_order_topic_then_broker_then_cluster_default_then_default() {
        let img = image(&[
            (2, "orders", "index.interval.bytes", "512"),
            (4, "1", "log.index.interval.bytes", "1024"),
            (4, "1", "log.segment.bytes", "2000000"),
            (4, "", "log.segment.bytes", "3000000"),
            (4, "", "log.roll.hours", "2"),
            (4, "", "message.max.bytes", "5000"),
            (4, "2", "message.max.bytes", "6000"),
        ]);
        let none = BTreeMap::new();
        let c = resolve_in(Some(&img), Some(1), "orders", &none);
        let got: Vec<(&str, &str, String)> = c
            .settings
            .iter()
            .map(|s| (s.key, s.value.as_str(), s.source.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "segment.bytes",
                    "2000000",
                    "broker 1's log.segment.bytes".into()
                ),
                (
                    "segment.ms",
                    "7200000",
                    "cluster default log.roll.hours".into()
                ),
                ("segment.index.bytes", "10485760", "Kafka's default".into()),
                ("index.interval.bytes", "512", "topic config".into()),
                (
                    "max.message.bytes",
                    "5000",
                    "cluster default message.max.bytes".into()
                ),
                (
                    "message.timestamp.type",
                    "CreateTime",
                    "Kafka's default".into()
                ),
            ]
        );
        // log.roll.ms is the first synonym: it wins over log.roll.hours.
        let img = image(&[(4, "", "log.roll.hours", "2"), (4, "", "log.roll.ms", "5")]);
        let c = resolve_in(Some(&img), None, "t", &none);
        assert_eq!(c.get("segment.ms").unwrap().value, "5");
        // --config wins over everything.
        let flags = parse_overrides(&["index.interval.bytes=100".into()]).unwrap();
        let c = resolve_in(None, None, "orders", &flags);
        assert_eq!(c.index_interval_bytes().unwrap(), 100);
        assert!(parse_overrides(&["retention.ms=1".into()]).is_err());
        assert!(parse_overrides(&["index.interval.bytes".into()]).is_err());
    }

    #[test]
    fn append_config_carries_every_value() {
        let img = image(&[(2, "t", "message.timestamp.type", "LogAppendTime")]);
        let c = resolve_in(Some(&img), None, "t", &BTreeMap::new());
        let a = c.append_config(77).unwrap();
        assert_eq!(a.log_append_time, Some(77));
        assert_eq!(
            (
                a.segment_bytes,
                a.index_interval_bytes,
                a.max_batch_bytes,
                a.segment_index_bytes,
                a.segment_ms
            ),
            (1 << 30, 4096, 1048588, 10 << 20, 604_800_000)
        );
        let defaults = AppendConfig::default();
        let k = resolve_in(None, None, "t", &BTreeMap::new())
            .append_config(0)
            .unwrap();
        assert_eq!(
            (k.segment_bytes, k.index_interval_bytes, k.max_batch_bytes),
            (
                defaults.segment_bytes,
                defaults.index_interval_bytes,
                defaults.max_batch_bytes
            )
        );
    }
}
