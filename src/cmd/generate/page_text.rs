//! The page text that belongs to no subcommand's file: klog(1)'s and
//! completions' EXAMPLES and SEE ALSO, and the topic pages of section 7.
//! A subcommand declares its own ([`crate::cmd::CommandEntry`]).

/// Examples of klog(1) and of `completions`: (command line, what it does).
pub(super) const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "klog",
        &[
            (
                "klog verify-crc /var/lib/kafka/data",
                "check every segment and index of a broker's log directory",
            ),
            (
                "klog lag --isolation read-committed /var/lib/kafka/data",
                "every group's lag as a read_committed consumer sees it",
            ),
        ],
    ),
    (
        "completions",
        &[(
            "klog completions bash > /etc/bash_completion.d/klog",
            "install bash completions",
        )],
    ),
];

/// Related pages of `completions`.
pub(super) const SEE_ALSO: &[(&str, &[&str])] = &[("completions", &[])];

/// The topic pages of section 7: (name, what it is about, its text).
pub(super) const TOPICS: &[(&str, &str, &str)] = &[
    (
        "output",
        "paths, stdout and stderr, times and the output formats of every klog command",
        include_str!("pages/output.7.md"),
    ),
    (
        "writers",
        "how klog appends to a log: the lock, the offsets partition, replicas, configuration",
        include_str!("pages/writers.7.md"),
    ),
    (
        "crash",
        "after a crash: find the damage, save what can be saved, reset the groups",
        include_str!("pages/crash.7.md"),
    ),
    (
        "brokers",
        "many brokers: klog summary on each, klog cluster over the summaries",
        include_str!("pages/brokers.7.md"),
    ),
    (
        "kafka",
        "Kafka 4.x log directories, and how klog is tested against real Kafka releases",
        include_str!("pages/kafka.7.md"),
    ),
    (
        "reliability",
        "what klog touches, hostile input, and how klog is tested against damage",
        include_str!("pages/reliability.7.md"),
    ),
];
