//! Many brokers, one verdict: each broker's log directories summarized on
//! their host ([`broker_summary`]), the summaries merged into per-partition
//! replica verdicts and cluster-wide group lag ([`merge`]), with Kafka's
//! leader-epoch truncation deciding where a replica diverged ([`epochs`]).

pub mod broker_summary;
pub mod check;
pub mod epochs;
pub mod merge;
