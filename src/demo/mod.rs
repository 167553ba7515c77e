//! The scripted demonstrations, run for real against a data directory
//! through the append path and the replay: [`delivery`] behind
//! `klog group-demo`, [`eos`] behind `klog eos-demo`.

pub mod delivery;
pub mod eos;
