//! What the image keeps besides brokers and topics: configs
//! (`ConfigurationsDelta`), features (`FeaturesDelta`), the producer id
//! block (`ProducerIdsDelta`), ACLs, SCRAM credentials, delegation tokens
//! and client quotas (kept by key, their secrets not).

use serde_json::Value;

use super::fields::{int, text};
use super::{Image, Problem, ProducerIds, Section};

/// The metadata.version feature levels Kafka 4.4 knows
/// (`MetadataVersion`: IBP_3_3_IV3 = 7 … IBP_4_5_IV0 = 34);
/// `MetadataVersion.fromFeatureLevel` throws on any other.
pub const METADATA_VERSION_LEVELS: std::ops::RangeInclusive<i64> = 7..=34;

impl Image {
    /// ConfigRecord: a null value deletes the key.
    pub(super) fn set_config(&mut self, d: &Value) {
        let key = (int(d, "resourceType") as i8, text(d, "resourceName"));
        let name = text(d, "name");
        match d.get("value").and_then(Value::as_str) {
            Some(v) => {
                self.configs
                    .entry(key)
                    .or_default()
                    .insert(name, v.to_string());
            }
            None => {
                if let Some(m) = self.configs.get_mut(&key) {
                    m.remove(&name);
                    if m.is_empty() {
                        self.configs.remove(&key);
                    }
                }
            }
        }
    }

    /// FeatureLevelRecord: level 0 removes a feature other than
    /// metadata.version; a metadata.version level Kafka does not know
    /// throws.
    pub(super) fn set_feature_level(&mut self, d: &Value) -> Result<(), Problem> {
        let name = text(d, "name");
        let level = int(d, "featureLevel");
        match name.as_str() {
            "metadata.version" if !METADATA_VERSION_LEVELS.contains(&level) => {
                return Err(Problem {
                    incomplete: Some(Section::All),
                    ..Problem::rejected(format!(
                        "FeatureLevelRecord: metadata.version level {level} is not one Kafka 4.4 knows \
                         ({}..={}; MetadataVersion.fromFeatureLevel throws): a newer Kafka wrote this log",
                        METADATA_VERSION_LEVELS.start(),
                        METADATA_VERSION_LEVELS.end()
                    ))
                });
            }
            "metadata.version" => {
                self.features.insert(name, level as i16);
            }
            // FeaturesDelta.replay skips kraft.version (KAFKA-18979).
            "kraft.version" => {}
            _ if level == 0 => {
                self.features.remove(&name);
            }
            _ => {
                self.features.insert(name, level as i16);
            }
        }
        Ok(())
    }

    /// ProducerIdsRecord: the latest block.
    pub(super) fn set_producer_ids(&mut self, d: &Value) {
        self.producer_ids = Some(ProducerIds {
            broker_id: int(d, "brokerId") as i32,
            broker_epoch: int(d, "brokerEpoch"),
            next_producer_id: int(d, "nextProducerId"),
        });
    }

    /// The ACL, SCRAM, delegation token and client quota records
    /// (`name`, one of [`Section::Security`]'s), by key.
    pub(super) fn apply_security(&mut self, name: &str, d: &Value) {
        match name {
            "AccessControlEntryRecord" => {
                self.acls.insert(text(d, "id"));
            }
            "RemoveAccessControlEntryRecord" => {
                self.acls.remove(&text(d, "id"));
            }
            "UserScramCredentialRecord" => {
                self.scram_credentials
                    .insert((text(d, "name"), int(d, "mechanism")));
            }
            "RemoveUserScramCredentialRecord" => {
                self.scram_credentials
                    .remove(&(text(d, "name"), int(d, "mechanism")));
            }
            "DelegationTokenRecord" => {
                self.delegation_tokens.insert(text(d, "tokenId"));
            }
            "RemoveDelegationTokenRecord" => {
                self.delegation_tokens.remove(&text(d, "tokenId"));
            }
            "ClientQuotaRecord" => self.set_client_quota(d),
            _ => {}
        }
    }

    /// ClientQuotaRecord: `remove` drops the key, else the value is set.
    fn set_client_quota(&mut self, d: &Value) {
        let entity = d.get("entity").map(Value::to_string).unwrap_or_default();
        let key = (entity, text(d, "key"));
        if d.get("remove").and_then(Value::as_bool) == Some(true) {
            self.client_quotas.remove(&key);
        } else {
            let v = d.get("value").and_then(Value::as_f64).unwrap_or(0.0);
            self.client_quotas.insert(key, v);
        }
    }
}
