//! The scripted demonstrations, run for real against a data directory
//! through the append path and the replay: [`group_run`] behind
//! `klog group-demo` (its consumer runs in [`delivery`]), [`eos`] behind
//! `klog eos-demo`.

pub mod delivery;
pub mod eos;
pub mod group_run;
