//! What each man page says beyond clap's `--help`: a subcommand's
//! EXAMPLES, SEE ALSO and DETAILS, and the topic pages of section 7. A new
//! subcommand's page text goes here (and in `pages/`), nowhere else.

/// Examples per subcommand: (command line, what it does).
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
        "dump-segment",
        &[
            (
                "klog dump-segment --records DIR/orders-0/00000000000000000000.log",
                "one line per batch and per record",
            ),
            (
                "klog dump-segment --print-data-log DIR/orders-0",
                "kafka-dump-log's line format, for its parsers",
            ),
            (
                "klog dump-segment --format jsonl --from-offset 100 --max-batches 10 DIR/orders-0",
                "ten batches from offset 100 as JSON lines",
            ),
            (
                "klog dump-segment --layout DIR/__consumer_offsets-7/00000000000000000000.log",
                "every field with its byte position",
            ),
        ],
    ),
    (
        "verify-crc",
        &[
            (
                "klog verify-crc DIR",
                "check a data directory; exit 1 on damage",
            ),
            (
                "klog verify-crc --deep --format json DIR",
                "also producer state; one JSON document",
            ),
            (
                "klog verify-crc --recovery-preview DIR",
                "what a restarting broker would cut",
            ),
            (
                "klog verify-crc --repair --dry-run DIR",
                "the repair plan, changing nothing",
            ),
        ],
    ),
    (
        "diff",
        &[(
            "klog diff broker1/orders-0 broker2/orders-0",
            "where two replicas diverge",
        )],
    ),
    (
        "replay-offsets",
        &[
            (
                "klog replay-offsets DIR",
                "the committed-offset table on stdout, the summary on stderr",
            ),
            (
                "klog replay-offsets --group billing --history DIR",
                "every commit of one group in log order",
            ),
            (
                "klog replay-offsets --as-of time:1700000000000 DIR",
                "the table as it was at that time",
            ),
        ],
    ),
    (
        "lag",
        &[
            (
                "klog lag DIR",
                "every group's lag against the high watermark",
            ),
            (
                "klog lag --columns kafka --group billing DIR",
                "kafka-consumer-groups --describe's columns",
            ),
            (
                "klog lag --fail-above 1000 --format csv DIR",
                "CSV; exit 1 when a partition lags more than 1000",
            ),
        ],
    ),
    (
        "groups",
        &[(
            "klog groups --members DIR",
            "every group of every protocol with its members",
        )],
    ),
    (
        "info",
        &[(
            "klog info DIR1 DIR2",
            "what a broker's log directories hold, checked against the KRaft metadata",
        )],
    ),
    (
        "metadata",
        &[(
            "klog metadata --topic orders DIR",
            "one topic's partitions and configs from the metadata log",
        )],
    ),
    (
        "tombstone",
        &[(
            "klog tombstone --group old-app --dry-run DIR",
            "the keys a tombstone run would delete",
        )],
    ),
    (
        "commit",
        &[(
            "klog commit --group billing --topic orders --partition 0 --offset 42 DIR",
            "append one offset commit",
        )],
    ),
    (
        "transactions",
        &[(
            "klog transactions --now-ms 1700000120000 DIR/payments-0",
            "producers, open and hanging transactions, the last stable offset",
        )],
    ),
    (
        "stats",
        &[(
            "klog stats DIR",
            "batches, records, codecs and producers per partition",
        )],
    ),
    (
        "produce",
        &[(
            "printf 'k1\\tv1\\n' | klog produce --topic orders --key-separator '\\t' DIR",
            "append records read from stdin",
        )],
    ),
    (
        "group-demo",
        &[(
            "klog group-demo --dir /tmp/demo --keep",
            "a consumer group's two numbers, done on disk",
        )],
    ),
    (
        "eos-demo",
        &[
            (
                "klog eos-demo --dir /tmp/eos --keep",
                "idempotence, transactions and fencing, done on disk",
            ),
            (
                "klog eos-demo --dir /tmp/eos --crash-at after-offsets",
                "one crash: the offset commit aborted with the invoices",
            ),
        ],
    ),
    ("reset-offsets", &[
        ("klog reset-offsets DIR --group billing --topic orders --to-datetime 2026-01-30T17:00:00Z", "the plan (a dry run): each partition's current and new offset"),
        ("klog reset-offsets DIR --group billing --all-topics --to-latest --execute", "append the commits through the append path"),
        ("klog reset-offsets DIR --group billing --all-topics --shift-by -100 --export > plan.csv", "kafka-consumer-groups' CSV, to review and replay with --from-file"),
    ]),
    ("summary", &[("klog summary --format json /var/lib/kafka/data > broker-1.json", "a broker's summary, to merge with the others'")]),
    ("cluster", &[("klog cluster summaries/", "replica divergence, lost partitions and group lag across brokers")]),
    (
        "completions",
        &[(
            "klog completions bash > /etc/bash_completion.d/klog",
            "install bash completions",
        )],
    ),
];

/// Related pages per subcommand.
pub(super) const SEE_ALSO: &[(&str, &[&str])] = &[
    (
        "dump-segment",
        &["verify-crc", "stats", "records(7)", "kafka(7)"],
    ),
    (
        "verify-crc",
        &["dump-segment", "diff", "info", "reliability(7)", "crash(7)"],
    ),
    ("diff", &["verify-crc", "brokers(7)"]),
    ("replay-offsets", &["lag", "groups", "commit", "tombstone"]),
    (
        "lag",
        &["replay-offsets", "groups", "transactions", "brokers(7)"],
    ),
    ("groups", &["replay-offsets", "lag", "metadata", "kafka(7)"]),
    ("info", &["metadata", "verify-crc", "kafka(7)"]),
    ("metadata", &["info", "groups", "records(7)", "kafka(7)"]),
    (
        "tombstone",
        &["commit", "reset-offsets", "replay-offsets", "writers(7)"],
    ),
    (
        "reset-offsets",
        &["commit", "tombstone", "lag", "writers(7)", "crash(7)"],
    ),
    ("summary", &["cluster", "info", "brokers(7)"]),
    ("cluster", &["summary", "lag", "brokers(7)"]),
    (
        "commit",
        &["tombstone", "replay-offsets", "lag", "writers(7)"],
    ),
    ("transactions", &["lag", "verify-crc", "eos-demo"]),
    ("stats", &["dump-segment"]),
    ("produce", &["dump-segment", "group-demo", "writers(7)"]),
    ("group-demo", &["produce", "lag", "eos-demo"]),
    ("eos-demo", &["transactions", "dump-segment", "group-demo"]),
    ("completions", &[]),
];

/// The DETAILS section of a subcommand's page: the reference beyond
/// `--help`, in the Markdown subset of [`roff`].
pub(super) const DETAILS: &[(&str, &str)] = &[
    ("dump-segment", include_str!("pages/dump-segment.md")),
    ("verify-crc", include_str!("pages/verify-crc.md")),
    ("replay-offsets", include_str!("pages/replay-offsets.md")),
    ("lag", include_str!("pages/lag.md")),
    ("groups", include_str!("pages/groups.md")),
    ("info", include_str!("pages/info.md")),
    ("metadata", include_str!("pages/metadata.md")),
    ("tombstone", include_str!("pages/tombstone.md")),
    ("commit", include_str!("pages/commit.md")),
    ("reset-offsets", include_str!("pages/reset-offsets.md")),
    ("transactions", include_str!("pages/transactions.md")),
    ("stats", include_str!("pages/stats.md")),
    ("produce", include_str!("pages/produce.md")),
    ("group-demo", include_str!("pages/group-demo.md")),
    ("eos-demo", include_str!("pages/eos-demo.md")),
];

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
