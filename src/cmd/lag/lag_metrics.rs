//! `lag --format prometheus`: the lag under kafka-lag-exporter's metric
//! names and labels.

use std::collections::BTreeMap;

use super::{LagOut, LagReport};
use crate::report::openmetrics::Metric;

/// The cluster id the data directories' meta.properties name (the first
/// that names one).
pub(super) fn cluster_name(dirs: &[kaen_log::log::DataDir]) -> String {
    dirs.iter()
        .find_map(|d| kaen_log::log::meta::cluster_id(&d.path))
        .unwrap_or_default()
}

impl LagReport {
    /// kafka-lag-exporter's metrics of these rows, by its names and labels
    /// (`state` and `is_simple_consumer` left out: the disks do not say
    /// them): each committed offset and its lag, each group's largest and
    /// summed lag, each group's lag per topic, each partition's latest and
    /// earliest offsets.
    pub(super) fn exporter_metrics(&self) -> Vec<Metric> {
        let cluster = || ("cluster_name", self.cluster_name.clone());
        let member = |r: &LagOut| {
            vec![
                cluster(),
                ("group", r.group.clone()),
                ("topic", r.topic.clone()),
                ("partition", r.partition.to_string()),
                ("member_host", r.host.clone().unwrap_or_default()),
                ("consumer_id", r.consumer_id.clone().unwrap_or_default()),
                ("client_id", r.client_id.clone().unwrap_or_default()),
            ]
        };
        let mut max_lag: BTreeMap<&str, i64> = BTreeMap::new();
        for r in &self.partitions {
            let m = max_lag.entry(&r.group).or_default();
            *m = (*m).max(r.lag.unwrap_or(0));
        }
        // A partition once, at its ends (the same for every group).
        let mut ends: BTreeMap<(&str, i32), &LagOut> = BTreeMap::new();
        for r in self.partitions.iter().filter(|r| r.log_start_offset.is_some()) {
            ends.entry((&r.topic, r.partition)).or_insert(r);
        }
        let partition = |r: &LagOut| {
            vec![
                cluster(),
                ("topic", r.topic.clone()),
                ("partition", r.partition.to_string()),
            ]
        };
        vec![
            Metric {
                name: "kafka_consumergroup_group_offset",
                help: "The offset the group committed for the partition.",
                samples: self.partitions.iter().map(|r| (member(r), r.committed_offset)).collect(),
            },
            Metric {
                name: "kafka_consumergroup_group_lag",
                help: "The partition's latest offset less the group's committed offset (the high watermark, or with --isolation read-committed the last stable offset).",
                samples: self
                    .partitions
                    .iter()
                    .filter_map(|r| Some((member(r), r.lag?)))
                    .collect(),
            },
            Metric {
                name: "kafka_consumergroup_group_max_lag",
                help: "The group's largest lag over its partitions.",
                samples: max_lag
                    .iter()
                    .map(|(g, l)| (vec![cluster(), ("group", g.to_string())], *l))
                    .collect(),
            },
            Metric {
                name: "kafka_consumergroup_group_sum_lag",
                help: "The sum of the group's positive lags.",
                samples: self
                    .groups
                    .iter()
                    .map(|g| (vec![cluster(), ("group", g.group.clone())], g.lag))
                    .collect(),
            },
            Metric {
                name: "kafka_consumergroup_group_topic_sum_lag",
                help: "The sum of the group's positive lags on one topic.",
                samples: self
                    .topics
                    .iter()
                    .map(|t| {
                        let labels =
                            vec![cluster(), ("group", t.group.clone()), ("topic", t.topic.clone())];
                        (labels, t.lag)
                    })
                    .collect(),
            },
            Metric {
                name: "kafka_partition_latest_offset",
                help: "The partition's latest offset: its high watermark, else its log end.",
                samples: ends
                    .values()
                    .filter_map(|r| Some((partition(r), r.high_watermark.or(r.log_end_offset)?)))
                    .collect(),
            },
            Metric {
                name: "kafka_partition_earliest_offset",
                help: "The partition's log start offset.",
                samples: ends
                    .values()
                    .filter_map(|r| Some((partition(r), r.log_start_offset?)))
                    .collect(),
            },
        ]
    }
}
