//! The library test binary: format rules, interoperability and hostile input.

mod builder;
mod corruption;
mod crash_points;
mod crash_storage;
mod divergence;
mod fuzz_regressions;
mod indexes;
mod interop;
mod kraft_records;
mod layers;
mod lock;
mod meter;
mod peer_vectors;
mod pending;
mod producer_state;
mod read_committed;
mod repair;
mod resync;
mod salvage;
mod sweeps;
mod time_lookup;
