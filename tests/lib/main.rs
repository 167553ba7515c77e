//! The library test binary: format rules, interoperability and hostile input.

mod builder;
mod corruption;
mod fuzz_regressions;
mod interop;
mod peer_vectors;
mod repair;
mod sweeps;
