//! The group coordinator's newer record types (3 and up: consumer, share
//! and streams groups) as schema tables.

use super::{rt, value, RecordType};
use crate::format::schema::f;
use crate::format::schema::types::*;
use crate::format::schema::{nested, Field, Release, Ty};

static GROUP: &[Field] = &[f!("GroupId", S)];
static GROUP_MEMBER: &[Field] = &[f!("GroupId", S), f!("MemberId", S)];
static GROUP_REGEX: &[Field] = &[f!("GroupId", S), f!("RegularExpression", S)];

// ConsumerGroupMetadataValue.json: MetadataHash added in 4.1 (KIP-1101), tagged.
static CONSUMER_EPOCH: &[Field] = &[
    f!("Epoch", I32),
    f!("MetadataHash", I64, tag: Some((0, 0)), since: Release::R4_1),
];
// ShareGroupMetadataValue.json, StreamsGroupMetadataValue.json: MetadataHash untagged.
static EPOCH_HASH: &[Field] = &[f!("Epoch", I32), f!("MetadataHash", I64)];
// StreamsGroupMetadataValue.json: tags 0 and 1 from Kafka 4.2, 2 and 3 from 4.4.
static STREAMS_METADATA: &[Field] = &[
    f!("Epoch", I32),
    f!("MetadataHash", I64),
    f!("ValidatedTopologyEpoch", I32, tag: Some((0, 0)), since: Release::R4_2, default: "-1"),
    // "nullableVersions": "0+", default null: the generated writer leaves a
    // null tagged field out.
    f!(
        "LastAssignmentConfigs",
        Ty::Array(&Ty::Struct(&[f!("Key", S), f!("Value", S)])),
        nullable_from: Some(0),
        tag: Some((1, 0)),
        since: Release::R4_2
    ),
    f!("StoredDescriptionTopologyEpoch", I32, tag: Some((2, 0)), since: Release::R4_4, default: "-1"),
    f!("FailedDescriptionTopologyEpoch", I32, tag: Some((3, 0)), since: Release::R4_4, default: "-1"),
];
// {Consumer,Share,Streams}GroupTargetAssignmentMetadataValue.json:
// AssignmentTimestamp tagged from Kafka 4.3.
static ASSIGNMENT_EPOCH: &[Field] = &[
    f!("AssignmentEpoch", I32),
    f!("AssignmentTimestamp", I64, tag: Some((0, 0)), since: Release::R4_3),
];
static TOPIC_PARTITIONS: Ty = Ty::Array(&Ty::Struct(&[f!("TopicId", U), f!("Partitions", I32S)]));
// ConsumerGroupCurrentMemberAssignmentValue.json's TopicPartitions: the
// epoch each partition was assigned at, tagged (Kafka 4.3).
static ASSIGNED_TOPIC_PARTITIONS: Ty = Ty::Array(&Ty::Struct(&[
    f!("TopicId", U),
    f!("Partitions", I32S),
    f!(
        "AssignmentEpochs",
        I32S,
        nullable_from: Some(0),
        tag: Some((0, 0)),
        since: Release::R4_3
    ),
]));
static TOPIC_METADATA: &[Field] = &[f!(
    "Topics",
    Ty::Array(&Ty::Struct(&[
        f!("TopicId", U),
        f!("TopicName", S),
        f!("NumPartitions", I32),
        f!(
            "PartitionMetadata",
            Ty::Array(&Ty::Struct(&[f!("Partition", I32), f!("Racks", STRS)])),
            nested: nested("PartitionMetadata", 0, 0)
        ),
    ])),
    nested: nested("TopicMetadata", 0, 0)
)];
// ConsumerGroupMemberMetadataValue.json.
static CONSUMER_MEMBER: &[Field] = &[
    f!("InstanceId", S, nullable_from: Some(0)),
    f!("RackId", S, nullable_from: Some(0)),
    f!("ClientId", S),
    f!("ClientHost", S),
    f!("SubscribedTopicNames", STRS),
    f!("SubscribedTopicRegex", S, nullable_from: Some(0)),
    f!("RebalanceTimeoutMs", I32, default: "-1"),
    f!("ServerAssignor", S, nullable_from: Some(0)),
    f!(
        "ClassicMemberMetadata",
        Ty::Struct(&[
            f!("SessionTimeoutMs", I32),
            f!(
                "SupportedProtocols",
                Ty::Array(&Ty::Struct(&[f!("Name", S), f!("Metadata", Ty::Bytes)])),
                nested: nested("ClassicProtocol", 0, 0)
            ),
        ]),
        nullable_from: Some(0),
        tag: Some((0, 0)),
        nested: nested("ClassicMemberMetadata", 0, 0)
    ),
];
// ConsumerGroupCurrentMemberAssignmentValue.json.
static CONSUMER_ASSIGNMENT: &[Field] = &[
    f!("MemberEpoch", I32),
    f!("PreviousMemberEpoch", I32),
    f!("State", I8),
    f!("AssignedPartitions", ASSIGNED_TOPIC_PARTITIONS),
    f!("PartitionsPendingRevocation", ASSIGNED_TOPIC_PARTITIONS),
];
// {Consumer,Share}GroupTargetAssignmentMemberValue.json: TopicPartition
// declared inline (the current assignments' TopicPartitions is a common struct).
static TARGET_MEMBER: &[Field] = &[f!(
    "TopicPartitions",
    TOPIC_PARTITIONS,
    nested: nested("TopicPartition", 0, 0)
)];
// ShareGroupMemberMetadataValue.json.
static SHARE_MEMBER: &[Field] = &[
    f!("RackId", S, nullable_from: Some(0)),
    f!("ClientId", S),
    f!("ClientHost", S),
    f!("SubscribedTopicNames", STRS),
];
// ShareGroupCurrentMemberAssignmentValue.json.
static SHARE_ASSIGNMENT: &[Field] = &[
    f!("MemberEpoch", I32),
    f!("PreviousMemberEpoch", I32),
    f!("State", I8),
    f!("AssignedPartitions", TOPIC_PARTITIONS),
];
// ShareGroupStatePartitionMetadataValue.json.
static SHARE_STATE_PARTITIONS: &[Field] = &[
    f!(
        "InitializingTopics",
        Ty::Array(&Ty::Struct(&[
            f!("TopicId", U),
            f!("TopicName", S),
            f!("Partitions", I32S)
        ]))
    ),
    f!(
        "InitializedTopics",
        Ty::Array(&Ty::Struct(&[
            f!("TopicId", U),
            f!("TopicName", S),
            f!("Partitions", I32S)
        ]))
    ),
    f!(
        "DeletingTopics",
        Ty::Array(&Ty::Struct(&[f!("TopicId", U), f!("TopicName", S)]))
    ),
];
// ConsumerGroupRegularExpressionValue.json.
static REGEX_VALUE: &[Field] = &[f!("Topics", STRS), f!("Version", I64), f!("Timestamp", I64)];
// StreamsGroupMemberMetadataValue.json.
static STREAMS_MEMBER: &[Field] = &[
    f!("InstanceId", S, nullable_from: Some(0)),
    f!("RackId", S, nullable_from: Some(0)),
    f!("ClientId", S),
    f!("ClientHost", S),
    f!("RebalanceTimeoutMs", I32, default: "-1"),
    f!("TopologyEpoch", I32),
    f!("ProcessId", S),
    f!("UserEndpoint", Ty::Struct(&[f!("Host", S), f!("Port", Ty::Uint16)]), nullable_from: Some(0), default: "null"),
    f!(
        "ClientTags",
        Ty::Array(&Ty::Struct(&[f!("Key", S), f!("Value", S)]))
    ),
];
static TASK_IDS: Ty = Ty::Array(&Ty::Struct(&[
    f!("SubtopologyId", S),
    f!("Partitions", I32S),
]));
// StreamsGroupCurrentMemberAssignmentValue.json's TaskIds: the epoch each
// partition was assigned at, tagged (Kafka 4.2).
static ASSIGNED_TASK_IDS: Ty = Ty::Array(&Ty::Struct(&[
    f!("SubtopologyId", S),
    f!("Partitions", I32S),
    f!(
        "AssignmentEpochs",
        I32S,
        nullable_from: Some(0),
        tag: Some((0, 0)),
        since: Release::R4_2
    ),
]));
// StreamsGroupCurrentMemberAssignmentValue.json.
static STREAMS_ASSIGNMENT: &[Field] = &[
    f!("MemberEpoch", I32),
    f!("PreviousMemberEpoch", I32),
    f!("State", I8),
    f!("ActiveTasks", ASSIGNED_TASK_IDS),
    f!("StandbyTasks", ASSIGNED_TASK_IDS),
    f!("WarmupTasks", ASSIGNED_TASK_IDS),
    f!("ActiveTasksPendingRevocation", ASSIGNED_TASK_IDS),
    f!("StandbyTasksPendingRevocation", ASSIGNED_TASK_IDS),
    f!("WarmupTasksPendingRevocation", ASSIGNED_TASK_IDS),
];

// StreamsGroupTargetAssignmentMemberValue.json.
static STREAMS_TARGET_MEMBER: &[Field] = &[
    f!("ActiveTasks", TASK_IDS),
    f!("StandbyTasks", TASK_IDS),
    f!("WarmupTasks", TASK_IDS),
];
// StreamsGroupTopologyValue.json: the TopicInfo and TopicConfig common structs.
const TOPIC_INFO: Ty = Ty::Array(&Ty::Struct(&[
    f!("Name", S),
    f!("Partitions", I32),
    f!("ReplicationFactor", I16),
    f!(
        "TopicConfigs",
        Ty::Array(&Ty::Struct(&[f!("key", S), f!("value", S)]))
    ),
]));
const I16S: Ty = Ty::Array(&Ty::Int16);
static STREAMS_TOPOLOGY: &[Field] = &[
    f!("Epoch", I32),
    f!(
        "Subtopologies",
        Ty::Array(&Ty::Struct(&[
            f!("SubtopologyId", S),
            f!("SourceTopics", STRS),
            f!("SourceTopicRegex", STRS),
            f!("StateChangelogTopics", TOPIC_INFO),
            f!("RepartitionSinkTopics", STRS),
            f!("RepartitionSourceTopics", TOPIC_INFO),
            f!(
                "CopartitionGroups",
                Ty::Array(&Ty::Struct(&[
                    f!("SourceTopics", I16S),
                    f!("SourceTopicRegex", I16S),
                    f!("RepartitionSourceTopics", I16S),
                ])),
                nested: nested("CopartitionGroup", 0, 0)
            ),
        ])),
        nested: nested("Subtopology", 0, 0)
    ),
];

/// The group coordinator's record types from 3 on (0 and 1 are offset
/// commits and 2 classic group metadata: `crate::offsets`).
pub static GROUP_RECORDS: &[RecordType] = &[
    // ConsumerGroupMetadataKey/Value.json
    rt(
        3,
        "ConsumerGroupMetadata",
        GROUP,
        value(
            "ConsumerGroupMetadataValue",
            &[Release::R3_9],
            CONSUMER_EPOCH,
        ),
    ),
    // ConsumerGroupPartitionMetadataKey/Value.json
    rt(
        4,
        "ConsumerGroupPartitionMetadata",
        GROUP,
        value(
            "ConsumerGroupPartitionMetadataValue",
            &[Release::R3_9],
            TOPIC_METADATA,
        ),
    ),
    // ConsumerGroupMemberMetadataKey/Value.json
    rt(
        5,
        "ConsumerGroupMemberMetadata",
        GROUP_MEMBER,
        value(
            "ConsumerGroupMemberMetadataValue",
            &[Release::R3_9],
            CONSUMER_MEMBER,
        ),
    ),
    // ConsumerGroupTargetAssignmentMetadataKey/Value.json
    rt(
        6,
        "ConsumerGroupTargetAssignmentMetadata",
        GROUP,
        value(
            "ConsumerGroupTargetAssignmentMetadataValue",
            &[Release::R3_9],
            ASSIGNMENT_EPOCH,
        ),
    ),
    // ConsumerGroupTargetAssignmentMemberKey/Value.json
    rt(
        7,
        "ConsumerGroupTargetAssignmentMember",
        GROUP_MEMBER,
        value(
            "ConsumerGroupTargetAssignmentMemberValue",
            &[Release::R3_9],
            TARGET_MEMBER,
        ),
    ),
    // ConsumerGroupCurrentMemberAssignmentKey/Value.json
    rt(
        8,
        "ConsumerGroupCurrentMemberAssignment",
        GROUP_MEMBER,
        value(
            "ConsumerGroupCurrentMemberAssignmentValue",
            &[Release::R3_9],
            CONSUMER_ASSIGNMENT,
        ),
    ),
    // ShareGroupPartitionMetadataKey/Value.json of Kafka 4.0 (not read since 4.1)
    // 3.9's file had another layout (InitializedTopics, DeletingTopics),
    // which no coordinator read.
    RecordType {
        read_since: Release::R4_0,
        gone_since: Some(Release::R4_1),
        file_since: Release::R4_0,
        ..rt(
            9,
            "ShareGroupPartitionMetadata",
            GROUP,
            value(
                "ShareGroupPartitionMetadataValue",
                &[Release::R3_9],
                TOPIC_METADATA,
            ),
        )
    },
    // ShareGroupMemberMetadataKey/Value.json
    RecordType {
        read_since: Release::R4_0,
        ..rt(
            10,
            "ShareGroupMemberMetadata",
            GROUP_MEMBER,
            value(
                "ShareGroupMemberMetadataValue",
                &[Release::R3_9],
                SHARE_MEMBER,
            ),
        )
    },
    // ShareGroupMetadataKey/Value.json (MetadataHash from 4.1, untagged)
    RecordType {
        read_since: Release::R4_0,
        file_since: Release::R4_1,
        ..rt(
            11,
            "ShareGroupMetadata",
            GROUP,
            value("ShareGroupMetadataValue", &[Release::R3_9], EPOCH_HASH),
        )
    },
    // ShareGroupTargetAssignmentMetadataKey/Value.json
    RecordType {
        read_since: Release::R4_0,
        ..rt(
            12,
            "ShareGroupTargetAssignmentMetadata",
            GROUP,
            value(
                "ShareGroupTargetAssignmentMetadataValue",
                &[Release::R4_0],
                ASSIGNMENT_EPOCH,
            ),
        )
    },
    // ShareGroupTargetAssignmentMemberKey/Value.json
    RecordType {
        read_since: Release::R4_0,
        ..rt(
            13,
            "ShareGroupTargetAssignmentMember",
            GROUP_MEMBER,
            value(
                "ShareGroupTargetAssignmentMemberValue",
                &[Release::R4_0],
                TARGET_MEMBER,
            ),
        )
    },
    // ShareGroupCurrentMemberAssignmentKey/Value.json
    RecordType {
        read_since: Release::R4_0,
        ..rt(
            14,
            "ShareGroupCurrentMemberAssignment",
            GROUP_MEMBER,
            value(
                "ShareGroupCurrentMemberAssignmentValue",
                &[Release::R4_0],
                SHARE_ASSIGNMENT,
            ),
        )
    },
    // ShareGroupStatePartitionMetadataKey/Value.json (InitializingTopics
    // from 4.1, untagged)
    RecordType {
        read_since: Release::R4_0,
        file_since: Release::R4_1,
        ..rt(
            15,
            "ShareGroupStatePartitionMetadata",
            GROUP,
            value(
                "ShareGroupStatePartitionMetadataValue",
                &[Release::R4_0],
                SHARE_STATE_PARTITIONS,
            ),
        )
    },
    // ConsumerGroupRegularExpressionKey/Value.json
    RecordType {
        read_since: Release::R4_0,
        ..rt(
            16,
            "ConsumerGroupRegularExpression",
            GROUP_REGEX,
            value(
                "ConsumerGroupRegularExpressionValue",
                &[Release::R4_0],
                REGEX_VALUE,
            ),
        )
    },
    // StreamsGroupMetadataKey/Value.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            17,
            "StreamsGroupMetadata",
            GROUP,
            value(
                "StreamsGroupMetadataValue",
                &[Release::R4_1],
                STREAMS_METADATA,
            ),
        )
    },
    // StreamsGroupMemberMetadataKey/Value.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            19,
            "StreamsGroupMemberMetadata",
            GROUP_MEMBER,
            value(
                "StreamsGroupMemberMetadataValue",
                &[Release::R4_1],
                STREAMS_MEMBER,
            ),
        )
    },
    // StreamsGroupTargetAssignmentMetadataKey.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            20,
            "StreamsGroupTargetAssignmentMetadata",
            GROUP,
            value(
                "StreamsGroupTargetAssignmentMetadataValue",
                &[Release::R4_1],
                ASSIGNMENT_EPOCH,
            ),
        )
    },
    // StreamsGroupTargetAssignmentMemberKey/Value.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            21,
            "StreamsGroupTargetAssignmentMember",
            GROUP_MEMBER,
            value(
                "StreamsGroupTargetAssignmentMemberValue",
                &[Release::R4_1],
                STREAMS_TARGET_MEMBER,
            ),
        )
    },
    // StreamsGroupCurrentMemberAssignmentKey/Value.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            22,
            "StreamsGroupCurrentMemberAssignment",
            GROUP_MEMBER,
            value(
                "StreamsGroupCurrentMemberAssignmentValue",
                &[Release::R4_1],
                STREAMS_ASSIGNMENT,
            ),
        )
    },
    // StreamsGroupTopologyKey/Value.json
    RecordType {
        read_since: Release::R4_1,
        ..rt(
            23,
            "StreamsGroupTopology",
            GROUP,
            value(
                "StreamsGroupTopologyValue",
                &[Release::R4_1],
                STREAMS_TOPOLOGY,
            ),
        )
    },
];
