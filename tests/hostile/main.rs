//! Hostile input and hostile filesystems: each test reproduces one attack
//! and asserts the exit status, the message, and that it ends in bounded
//! time. Named after the item of the hostile-input review it answers
//! (`rN_...`). The slow ones (1 GiB inputs, long soaks) live in
//! tests/hostile/soak.sh; tests/hostile/campaign.py searches for new ones
//! (every command on randomly damaged copies of the fixtures).

#[path = "../cli/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "../lib/builder.rs"]
#[allow(dead_code)]
mod builder;

mod amplify;
mod cluster;
mod coordinator;
mod diff;
mod files;
mod groups;
mod injection;
mod jobs;
mod measure;
mod metadata;
mod records;
mod repair;
mod resync;
mod swap;
mod txnlog;
mod writers;
