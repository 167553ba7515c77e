package klogoracle;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/**
 * The tiered-storage scenario of the Kafka oracle (tests/kafka/tiered.sh):
 * a cluster whose brokers run Kafka's test-only LocalTieredStorage as their
 * RemoteStorageManager and the default TopicBasedRemoteLogMetadataManager
 * (`__remote_log_metadata`). Compiled with Driver.java, whose helpers it uses.
 *
 * Subcommands:
 *   scenario BOOTSTRAP OUT DATA REMOTE   the topics, records, transactions and groups, waits
 *                                        until the older segments live in remote storage only,
 *                                        then records Kafka's answers into OUT
 *   record BOOTSTRAP OUT NAME            list offsets of the tiered topics into OUT/NAME
 *   craft FILE                           a segment of `__remote_log_metadata` records, some of
 *                                        them damaged, built with Kafka's own serde and
 *                                        MemoryRecords (kafka-dump-log's answer on it is the
 *                                        expectation for klog's decoder on broken records)
 */
public final class Tiered {
    static final List<String> TOPICS = List.of("tiered", "tiered-trim");
    /** The offset DeleteRecords moves tiered-trim's log start to. */
    static final long TRIM_TO = 12;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "scenario" -> {
                Driver.bootstrap = args[1];
                Driver.out = Paths.get(args[2]);
                Files.createDirectories(Driver.out);
                Driver.runThenHalt(() -> scenario(Paths.get(args[3]), Paths.get(args[4])));
            }
            case "record" -> {
                Driver.bootstrap = args[1];
                Driver.out = Paths.get(args[2]);
                Driver.runThenHalt(() -> {
                    try (Admin a = Driver.admin(Driver.bootstrap)) {
                        writeOffsets(a, Driver.out.resolve(args[3]));
                    }
                });
            }
            case "craft" -> craft(Paths.get(args[1]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static Map<String, String> tieredConfig() {
        // Segments of 400 bytes (Driver.createTopic); at most 600 bytes kept locally
        // (local.retention.bytes): the rest lives in remote storage only, for ever
        // (retention.ms=-1: the records' timestamps, BASE_TS + n, are older than the
        // 7-day default, which would delete them at once, locally and remotely).
        return Map.of("remote.storage.enable", "true", "local.retention.bytes", "600", "retention.ms", "-1");
    }

    static void scenario(Path data, Path remote) throws Exception {
        try (Admin a = Driver.admin(Driver.bootstrap)) {
            Driver.createTopic(a, "tiered", Driver.rf3(1), tieredConfig());
            try (var pr = Driver.producer("tiered-producer", Map.of())) {
                Driver.produceBatched(pr, "tiered", 0, 0, 20, 5, 0, "tiered");
            }
            try (var pr = Driver.txnProducer("tiered-abort")) {
                pr.beginTransaction();
                Driver.produceBatched(pr, "tiered", 0, 20, 5, 5, 0, "aborted");
                pr.abortTransaction();
            }
            try (var pr = Driver.txnProducer("tiered-commit")) {
                pr.beginTransaction();
                Driver.produceBatched(pr, "tiered", 0, 26, 5, 5, 0, "committed");
                pr.commitTransaction();
            }
            try (var pr = Driver.producer("tiered-producer", Map.of())) {
                Driver.produceBatched(pr, "tiered", 0, 32, 20, 5, 0, "tiered");
            }
            Driver.note("tiered: 20 records (0-19), tiered-abort aborts 20-24 (marker 25), tiered-commit commits 26-30 "
                + "(marker 31), 20 records (32-51): log end 52");
            TopicPartition tp = new TopicPartition("tiered", 0);
            Driver.assignCommit("tiered-g", Map.of(tp, 10L));
            Driver.assignCommit("tiered-txn-g", Map.of(tp, 20L));
            Driver.assignCommit("tiered-local-g", Map.of(tp, 50L));
            Driver.note("groups: tiered-g committed 10, tiered-txn-g 20 (in the aborted transaction), tiered-local-g 50");

            Driver.createTopic(a, "tiered-trim", Driver.rf3(1), tieredConfig());
            try (var pr = Driver.producer("trim-producer", Map.of())) {
                Driver.produceBatched(pr, "tiered-trim", 0, 0, 30, 5, 0, "trim");
            }
            // Segments 0-9 and 10-19 copied to remote storage before DeleteRecords.
            waitTiered(a, new TopicPartition("tiered-trim", 0), 19, 120);
            a.deleteRecords(Map.of(new TopicPartition("tiered-trim", 0), RecordsToDelete.beforeOffset(TRIM_TO)))
                .all().get(30, TimeUnit.SECONDS);
            Driver.note("tiered-trim: 30 records (0-29) in batches of 5, DeleteRecords before " + TRIM_TO);
            waitRemoteTrimmed(remote, "tiered-trim", TRIM_TO, 120);
            // Both transactions' batches and markers live in remote segments only, on every replica.
            waitLocalStart(a, data, tp, 32, 180);
            record(a);
        }
        Files.write(Driver.out.resolve("driver-log.txt"), Driver.log);
    }

    /** The base offset of the first local segment of `tp` in each broker's log directory. */
    static Map<Integer, Long> localStarts(Path data, TopicPartition tp) throws Exception {
        Map<Integer, Long> m = new TreeMap<>();
        for (int n = 1; n <= 3; n++) {
            File[] logs = data.resolve("broker-" + n).resolve(tp.toString()).toFile().listFiles((d, name) -> name.endsWith(".log"));
            if (logs == null) continue;
            long first = Long.MAX_VALUE;
            for (File f : logs) first = Math.min(first, Long.parseLong(f.getName().substring(0, 20)));
            m.put(n, first);
        }
        return m;
    }

    /** Wait (at most SECS) until every replica's local log, and the leader's earliest-local, start at FROM or later. */
    static void waitLocalStart(Admin a, Path data, TopicPartition tp, long from, int secs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        String last = "";
        while (System.nanoTime() < deadline) {
            Map<Integer, Long> starts = localStarts(data, tp);
            long local = Driver.offsets(a, List.of(tp), OffsetSpec.earliestLocal(), IsolationLevel.READ_UNCOMMITTED).get(tp).offset();
            last = "earliest-local " + local + ", first local segments " + starts;
            if (local >= from && starts.size() == 3 && starts.values().stream().allMatch(s -> s >= from)) {
                Driver.note(tp + ": " + last);
                return;
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException(tp + ": local log never started at " + from + " or later (" + last + ")");
    }

    /** Wait (at most SECS) until the remote storage holds TP up to offset UPTO (ListOffsets latest-tiered). */
    static void waitTiered(Admin a, TopicPartition tp, long upTo, int secs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        long tiered = -1;
        while (System.nanoTime() < deadline) {
            tiered = one(a, tp, OffsetSpec.latestTiered(), IsolationLevel.READ_UNCOMMITTED);
            if (tiered >= upTo) return;
            Thread.sleep(500);
        }
        throw new IllegalStateException(tp + ": remote storage holds offsets up to " + tiered + ", not " + upTo);
    }

    /**
     * Wait (at most SECS) until the remote storage of TOPIC holds at most one segment
     * starting below TO: the one holding TO, the others deleted by the expiration task.
     */
    static void waitRemoteTrimmed(Path remote, String topic, long to, int secs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        long below = -1;
        while (System.nanoTime() < deadline) {
            below = 0;
            try (var files = Files.walk(remote)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    String name = p.getFileName().toString();
                    if (p.getParent().getFileName().toString().startsWith(topic + "-0-") && name.endsWith(".log")
                            && Long.parseLong(name.substring(0, name.indexOf('-'))) < to) below++;
                }
            }
            if (below <= 1) return;
            Thread.sleep(500);
        }
        throw new IllegalStateException(topic + ": " + below + " remote segments still start below " + to);
    }

    static void record(Admin a) throws Exception {
        Path out = Driver.out;
        writeOffsets(a, out.resolve("list-offsets.json"));
        TopicPartition tp = new TopicPartition("tiered", 0);
        List<String> groups = new ArrayList<>();
        for (String g : List.of("tiered-g", "tiered-local-g", "tiered-txn-g")) {
            var committed = Driver.groupOffsets(a, g, "classic");
            groups.add(String.format("  {\"group\": %s, \"topic\": \"tiered\", \"partition\": 0, \"committed\": %d}",
                Driver.js(g), committed.getOrDefault(tp, -1L)));
            Driver.describeGroup(g, "classic");
        }
        Files.writeString(out.resolve("groups.json"), "[\n" + String.join(",\n", groups) + "\n]\n");
        List<String> resumed = new ArrayList<>();
        for (String[] r : List.of(new String[] {"tiered-g", "read_uncommitted"}, new String[] {"tiered-txn-g", "read_committed"},
                new String[] {"tiered-txn-g", "read_uncommitted"}, new String[] {"tiered-local-g", "read_uncommitted"})) {
            resumed.add(resume(r[0], tp, r[1]));
        }
        Files.writeString(out.resolve("resume.json"), "[\n" + String.join(",\n", resumed) + "\n]\n");
        List<String> reads = new ArrayList<>();
        for (String topic : TOPICS) {
            for (String iso : List.of("read_uncommitted", "read_committed")) {
                reads.add(String.format("  {\"topic\": %s, \"partition\": 0, \"isolation\": %s, \"offsets\": %s}",
                    Driver.js(topic), Driver.js(iso), Driver.readAll(a, new TopicPartition(topic, 0), iso)));
            }
        }
        Files.writeString(out.resolve("consumed.json"), "[\n" + String.join(",\n", reads) + "\n]\n");
        Path t = out.resolve("tools");
        String tx = "org.apache.kafka.tools.TransactionsCommand";
        Driver.runTool(t.resolve("transactions-describe-producers-tiered-0.txt"), tx, "--bootstrap-server", Driver.bootstrap,
            "describe-producers", "--topic", "tiered", "--partition", "0");
        Driver.runTool(t.resolve("transactions-list.txt"), tx, "--bootstrap-server", Driver.bootstrap, "list");
        for (String time : List.of("-1", "-2", "-4", "-5")) {
            Driver.runTool(t.resolve("get-offsets-" + time.substring(1) + ".txt"), "org.apache.kafka.tools.GetOffsetShell",
                "--bootstrap-server", Driver.bootstrap, "--topic", "tiered.*", "--time", time);
        }
    }

    /** Per partition of the tiered topics: Admin.listOffsets for each OffsetSpec of tiered storage. */
    static void writeOffsets(Admin a, Path file) throws Exception {
        List<String> lines = new ArrayList<>();
        for (String topic : TOPICS) {
            TopicPartition tp = new TopicPartition(topic, 0);
            Map<String, Long> o = new LinkedHashMap<>();
            o.put("earliest", one(a, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED));
            o.put("earliest_local", one(a, tp, OffsetSpec.earliestLocal(), IsolationLevel.READ_UNCOMMITTED));
            o.put("latest_tiered", one(a, tp, OffsetSpec.latestTiered(), IsolationLevel.READ_UNCOMMITTED));
            o.put("latest_read_uncommitted", one(a, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
            o.put("latest_read_committed", one(a, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            var d = a.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().get(0);
            StringBuilder b = new StringBuilder(String.format("  {\"topic\": %s, \"partition\": 0, \"leader\": %d",
                Driver.js(topic), d.leader() == null ? -1 : d.leader().id()));
            o.forEach((k, v) -> b.append(", \"").append(k).append("\": ").append(v));
            // By timestamp: in the remote range, in the local one, past the data records.
            List<String> byTs = new ArrayList<>();
            for (long n : List.of(5L, 25L, 45L)) {
                var r = Driver.offsets(a, List.of(tp), OffsetSpec.forTimestamp(Driver.BASE_TS + n), IsolationLevel.READ_UNCOMMITTED).get(tp);
                byTs.add(String.format("{\"query\": %d, \"offset\": %d, \"timestamp\": %d}", Driver.BASE_TS + n, r.offset(), r.timestamp()));
            }
            b.append(", \"for_timestamp\": [").append(String.join(", ", byTs)).append("]");
            lines.add(b.append("}").toString());
        }
        Files.writeString(file, "[\n" + String.join(",\n", lines) + "\n]\n");
    }

    static long one(Admin a, TopicPartition tp, OffsetSpec spec, IsolationLevel iso) throws Exception {
        return Driver.offsets(a, List.of(tp), spec, iso).get(tp).offset();
    }

    /**
     * A consumer of GROUP with ISO resuming on TP from its committed offset (auto.offset.reset=none:
     * an offset out of range would throw, not reset): the offset of the first record it receives.
     */
    static String resume(String group, TopicPartition tp, String iso) {
        Properties p = Driver.consumerProps(group, "classic");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, iso);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
        String first = "null", error = "null";
        long position = -1;
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            position = c.position(tp, Duration.ofSeconds(20));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (first.equals("null") && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                    if (first.equals("null")) first = String.valueOf(r.offset());
                }
            }
        } catch (Exception e) {
            error = Driver.js(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return String.format("  {\"group\": %s, \"topic\": %s, \"partition\": %d, \"isolation\": %s, \"position\": %d, "
            + "\"first_offset\": %s, \"error\": %s}", Driver.js(group), Driver.js(tp.topic()), tp.partition(), Driver.js(iso),
            position, first, error);
    }

    // ---- a crafted segment of remote log metadata ------------------------------------

    static void craft(Path file) throws Exception {
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        TopicIdPartition tip = new TopicIdPartition(Uuid.fromString("a2xvZy10aWVyZWQtMDAwMQ"), new TopicPartition("crafted", 0));
        RemoteLogSegmentId id = new RemoteLogSegmentId(tip, Uuid.fromString("a2xvZy1zZWdtZW50LTAwMQ"));
        Map<Integer, Long> epochs = Map.of(0, 0L, 2, 15L);
        var copied = new RemoteLogSegmentMetadata(id, 0, 29, 1767225600029L, 1, 1767225601000L, 420,
            Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs, true);
        var update = new RemoteLogSegmentMetadataUpdate(id, 1767225602000L,
            Optional.of(new RemoteLogSegmentMetadata.CustomMetadata(new byte[] {1, 2, 3})), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1);
        var delete = new RemotePartitionDeleteMetadata(tip, RemotePartitionDeleteState.DELETE_PARTITION_MARKED, 1767225603000L, 2);
        var snapshot = new RemoteLogSegmentMetadataSnapshot(id.id(), 0, 29, 1767225600029L, 3, 1767225604000L, 420,
            Optional.of(new RemoteLogSegmentMetadata.CustomMetadata(new byte[0])), RemoteLogSegmentState.DELETE_SEGMENT_STARTED, epochs, false);
        byte[] seg = serde.serialize(copied);
        byte[] upd = serde.serialize(update);
        byte[] del = serde.serialize(delete);
        // The segment metadata record: frame (3 bytes), then the segment id entry (the topic
        // entry: name, topic id, partition, tags; the segment uuid; tags), then StartOffset.
        int startAt = 3 + (1 + "crafted".length()) + 16 + 4 + 1 + 16 + 1;
        int epochsAt = startAt + 8 + 8 + 4 + 8 + 8;
        List<byte[]> values = new ArrayList<>();
        values.add(seg);
        values.add(upd);
        values.add(del);
        values.add(serde.serialize(snapshot));
        values.add(null);                                                   // a tombstone
        values.add(new byte[0]);                                            // empty
        values.add(with(seg, 0, 0));                                        // frame version 0
        values.add(with(seg, 0, 2));                                        // frame version 2
        values.add(with(seg, 1, 9));                                        // apiKey 9
        values.add(with(seg, 2, 1));                                        // version 1
        values.add(with(upd, 2, 1));                                        // version 1 of an update
        values.add(Arrays.copyOf(seg, seg.length - 5));                     // cut short
        values.add(Arrays.copyOf(seg, seg.length + 2));                     // two bytes of garbage
        values.add(with(upd, upd.length - 2, 9));                           // segment state 9
        values.add(with(del, del.length - 2, 7));                           // partition delete state 7
        values.add(with(seg, seg.length - 2, 9));                           // its tagged TxnIndexEmpty said 9 bytes long
        values.add(with(seg, seg.length - 5, 9));                           // segment state 9 in a segment record
        byte[] negative = seg.clone();
        ByteBuffer.wrap(negative).putLong(startAt, -4);                     // StartOffset -4
        values.add(negative);
        byte[] backwards = seg.clone();
        ByteBuffer.wrap(backwards).putLong(startAt + 8, -1);                // EndOffset -1 < StartOffset 0
        values.add(backwards);
        values.add(with(seg, epochsAt, 1));                                 // no leader epochs (then the entries' bytes)
        values.add(new byte[] {(byte) 0x81});                               // a varint that never ends
        List<SimpleRecord> records = new ArrayList<>();
        long ts = 1767225600000L;
        for (byte[] v : values) records.add(new SimpleRecord(ts++, null, v));
        MemoryRecords mr = MemoryRecords.withRecords(Compression.NONE, records.toArray(SimpleRecord[]::new));
        Files.createDirectories(file.getParent());
        byte[] bytes = new byte[mr.buffer().remaining()];
        mr.buffer().duplicate().get(bytes);
        Files.write(file, bytes);
    }

    static byte[] with(byte[] b, int at, int value) {
        byte[] c = b.clone();
        c[at] = (byte) value;
        return c;
    }
}
