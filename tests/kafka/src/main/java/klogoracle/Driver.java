package klogoracle;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka oracle's driver: runs the scenarios against a running 3-node
 * cluster (KRaft, or ZooKeeper for 3.x) with the real Java clients and
 * records Kafka's answers. One source for every release of the matrix: it is
 * compiled against the release's jars, and what a release lacks (KIP-848
 * consumer groups and share groups without KRaft, Admin.listGroups before
 * 4.0, streams groups before 4.2) is skipped here, by release, and reached
 * through reflection where the API itself differs. The scenarios it ran are
 * written to OUT/scenarios.txt, one name a line, for the manifest.
 *
 * Environment (run.sh sets it): KLOG_ORACLE_CTL, the control script for
 * broker stops, restarts and kills; KLOG_ORACLE_RELEASE, the Kafka release;
 * KLOG_ORACLE_MODE, kraft or zookeeper; KLOG_ORACLE_OFFSETS_PARTITIONS, the
 * partition count of __consumer_offsets; KLOG_ORACLE_DATA, the folder holding
 * broker-N/ (the log directories, read for the cleaner's checkpoints).
 *
 * Subcommands:
 *   ports N                      N free loopback TCP ports, one a line
 *   wait-ready BOOTSTRAP N SECS  exit 0 once N brokers answer, else 1
 *   scenarios BOOTSTRAP OUT      every scenario, then the recorded answers
 *   record BOOTSTRAP OUT         the recorded answers alone, of a cluster as it stands (e.g.
 *                                restarted on directories something else wrote into)
 *   crash BOOTSTRAP OUT          the crash scenario up to every node down (see crash())
 *   record-crash BOOTSTRAP OUT   what the cluster restarted on the crashed directories serves
 *   wait-leader BOOTSTRAP TOPIC PARTITION NODE SECS   exit 0 once NODE leads, else 1
 *   txn-victim BOOTSTRAP         a transactional producer that prints SENT mid-transaction and waits to be killed
 *   tool OUTFILE CLASS ARGS...   run a Kafka tool's main in this JVM, stdout to OUTFILE
 *   tools LISTFILE               the same for each line of LISTFILE (tab-separated:
 *                                OUTFILE, CLASS, ARGS...). A CLASS written `stderr:CLASS`
 *                                also records the tool's stderr: its System.err (and
 *                                scala.Console.err) bytes go to OUTFILE with `.txt` replaced
 *                                by `.stderr.txt` (`.stderr.txt` appended to another name),
 *                                written even when empty; if the tool's main threw (not an
 *                                exit call), one more line `threw: <the exception's
 *                                toString()>` ends that file, and the line counts as
 *                                recorded, not failed
 */
public final class Driver {
    /** Every record timestamp is BASE_TS + n: by-timestamp lookups are deterministic. */
    static final long BASE_TS = 1767225600000L; // 2026-01-01T00:00:00Z

    static String bootstrap;
    static Path out;
    static final List<String> log = new ArrayList<>();
    /** The scenarios run, in order: OUT/scenarios.txt. */
    static final List<String> ran = new ArrayList<>();

    static final String RELEASE = System.getenv().getOrDefault("KLOG_ORACLE_RELEASE", "0.0.0");
    static final boolean KRAFT = !"zookeeper".equals(System.getenv("KLOG_ORACLE_MODE"));
    static final int OFFSETS_PARTITIONS = Integer.parseInt(System.getenv().getOrDefault("KLOG_ORACLE_OFFSETS_PARTITIONS", "3"));

    /** The release is MAJOR.MINOR or later. */
    static boolean atLeast(int major, int minor) {
        String[] v = RELEASE.split("\\.");
        int ma = Integer.parseInt(v[0]), mi = Integer.parseInt(v[1]);
        return ma > major || (ma == major && mi >= minor);
    }

    /** KIP-848 consumer groups: KRaft only (3.9 had them as early access, in KRaft). */
    static boolean consumerGroups() {
        return KRAFT;
    }

    /** KIP-932 share groups: a preview from 4.1 (share.version=1), production from 4.2. */
    static boolean shareGroups() {
        return KRAFT && atLeast(4, 1);
    }

    /** KIP-1071 streams groups: production from 4.2 (streams.version=1). */
    static boolean streamsGroups() {
        return KRAFT && atLeast(4, 2);
    }

    /**
     * The topic config for a segment size under 1 MiB: `segment.bytes` has
     * that floor from 4.1 (LogConfig), where `internal.segment.bytes` (for
     * tests) overrides it; up to 4.0 `segment.bytes` itself takes 14 bytes up.
     */
    static String segmentBytesKey() {
        return atLeast(4, 1) ? "internal.segment.bytes" : "segment.bytes";
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "ports" -> ports(Integer.parseInt(args[1]));
            case "txn-victim" -> {
                bootstrap = args[1];
                txnVictim();
            }
            case "wait-ready" -> System.exit(waitReady(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3])) ? 0 : 1);
            case "scenarios" -> {
                bootstrap = args[1];
                out = Paths.get(args[2]);
                Files.createDirectories(out);
                // The open transaction's producer is never closed: halt.
                runThenHalt(Driver::scenarios);
            }
            case "record" -> {
                bootstrap = args[1];
                out = Paths.get(args[2]);
                Files.createDirectories(out);
                try (Admin a = admin(bootstrap)) {
                    record(a);
                }
                System.exit(0);
            }
            case "wait-in-sync" -> System.exit(waitInSync(args[1], Integer.parseInt(args[2])) ? 0 : 1);
            case "crash", "record-crash" -> {
                bootstrap = args[1];
                out = Paths.get(args[2]);
                Files.createDirectories(out);
                boolean crash = args[0].equals("crash");
                runThenHalt(() -> {
                    try (Admin a = admin(bootstrap)) {
                        if (crash) crash(a);
                        else recordCrash(a);
                    }
                });
            }
            case "wait-leader" -> {
                try (Admin a = admin(args[1])) {
                    TopicPartition tp = new TopicPartition(args[2], Integer.parseInt(args[3]));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Integer.parseInt(args[5]));
                    int want = Integer.parseInt(args[4]);
                    int leader = -1;
                    while (System.nanoTime() < deadline) {
                        try {
                            leader = leaderOf(a, tp);
                        } catch (Exception e) {
                            leader = -1;
                        }
                        if (leader == want) System.exit(0);
                        Thread.sleep(300);
                    }
                    System.err.println(tp + ": leader " + leader + ", not " + want);
                    System.exit(1);
                }
            }
            case "record-writers" -> {
                bootstrap = args[1];
                out = Paths.get(args[2]);
                Files.createDirectories(out);
                try (Admin a = admin(bootstrap)) {
                    recordWriters(a, java.util.Arrays.copyOfRange(args, 3, args.length));
                }
                System.exit(0);
            }
            case "tool" -> {
                String[] rest = java.util.Arrays.copyOfRange(args, 3, args.length);
                int code = runTool(Paths.get(args[1]), args[2], rest);
                System.exit(code);
            }
            case "tools" -> {
                int failed = 0;
                for (String line : Files.readAllLines(Paths.get(args[1]))) {
                    if (line.isBlank()) continue;
                    String[] f = line.split("\t");
                    if (f[1].startsWith(STDERR_MARK)) {
                        Path outFile = Paths.get(f[0]);
                        int code = runTool(outFile, stderrFile(outFile), f[1].substring(STDERR_MARK.length()),
                            java.util.Arrays.copyOfRange(f, 2, f.length));
                        if (code == THREW) {
                            System.err.println("tool threw (recorded): " + line);
                        } else if (code != 0) {
                            System.err.println("tool exit " + code + ": " + line);
                            failed++;
                        }
                        continue;
                    }
                    int code = runTool(Paths.get(f[0]), f[1], java.util.Arrays.copyOfRange(f, 2, f.length));
                    // kafka-metadata-shell runs its command while the snapshot loads: a run
                    // may print nothing or part of the image (seen on 4.0 and 4.1). Five
                    // runs; the longest answer (the image loaded in full) is kept.
                    if (f[1].endsWith("MetadataShell")) {
                        byte[] longest = Files.readAllBytes(Paths.get(f[0]));
                        for (int again = 0; again < 4 && code == 0; again++) {
                            code = runTool(Paths.get(f[0]), f[1], java.util.Arrays.copyOfRange(f, 2, f.length));
                            byte[] now = Files.readAllBytes(Paths.get(f[0]));
                            if (now.length > longest.length) longest = now;
                        }
                        Files.write(Paths.get(f[0]), longest);
                    }
                    if (code != 0) {
                        System.err.println("tool exit " + code + ": " + line);
                        failed++;
                    }
                }
                System.exit(failed == 0 ? 0 : 1);
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /** Run `s`, print what failed, and halt: a producer left open would keep the JVM alive. */
    static void runThenHalt(Scenario s) {
        int code = 0;
        try {
            s.run();
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }

    static void ports(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            held.add(s);
            System.out.println(s.getLocalPort());
        }
        for (ServerSocket s : held) s.close();
    }

    static Admin admin(String bs) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20000);
        return Admin.create(p);
    }

    static boolean waitReady(String bs, int n, int secs) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        try (Admin a = admin(bs)) {
            while (System.nanoTime() < deadline) {
                try {
                    int brokers = a.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
                    if (brokers >= n) return true;
                } catch (Exception e) {
                    // not yet
                }
                Thread.sleep(500);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /**
     * Wait (at most SECS) until every partition of every topic, internal ones
     * included, has a leader and all its replicas in sync: the followers have
     * fetched from the leaders (and truncated, if they were going to).
     */
    static boolean waitInSync(String bs, int secs) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        String last = "";
        try (Admin a = admin(bs)) {
            while (System.nanoTime() < deadline) {
                try {
                    var names = a.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                        .names().get(10, TimeUnit.SECONDS);
                    List<String> behind = new ArrayList<>();
                    for (var d : a.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS).values()) {
                        for (var p : d.partitions()) {
                            if (p.leader() == null || p.isr().size() < p.replicas().size()) behind.add(d.name() + "-" + p.partition());
                        }
                    }
                    if (behind.isEmpty()) return true;
                    last = behind.toString();
                } catch (Exception e) {
                    last = e.toString();
                }
                Thread.sleep(500);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.err.println("not in sync within " + secs + " s: " + last);
        return false;
    }

    // ---- helpers ------------------------------------------------------------

    static void note(String s) {
        System.err.println("[driver] " + s);
        log.add(s);
    }

    static void ctl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getenv("KLOG_ORACLE_CTL"));
        Collections.addAll(cmd, args);
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("ctl " + String.join(" ", args) + " timed out");
        }
        if (p.exitValue() != 0) throw new IllegalStateException("ctl " + String.join(" ", args) + " failed");
    }

    static Properties producerProps(String clientId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 60000); // a batch closes at flush()
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 65536);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120000);
        return p;
    }

    static KafkaProducer<String, String> producer(String clientId, Map<String, Object> extra) {
        Properties p = producerProps(clientId);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static Properties consumerProps(String group, String protocol) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, group + "-client");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return p;
    }

    /** Records key-<n>/value text with timestamps BASE_TS + tsBase + n, flushed every batch records. */
    static void produce(KafkaProducer<String, String> pr, String topic, int partition, int from, int count, int batch,
                        long tsBase, String valuePrefix) throws Exception {
        for (int i = from; i < from + count; i++) {
            pr.send(new ProducerRecord<>(topic, partition, BASE_TS + tsBase + i, "key-" + i, valuePrefix + "-" + i)).get(0, TimeUnit.SECONDS);
        }
    }

    static void produceBatched(KafkaProducer<String, String> pr, String topic, int partition, int from, int count, int batch,
                               long tsBase, String valuePrefix) throws Exception {
        List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            fs.add(pr.send(new ProducerRecord<>(topic, partition, BASE_TS + tsBase + i, "key-" + i, valuePrefix + "-" + i)));
            if ((i - from + 1) % batch == 0) pr.flush();
        }
        pr.flush();
        for (var f : fs) f.get(60, TimeUnit.SECONDS);
    }

    static void createTopic(Admin a, String name, Map<Integer, List<Integer>> assignment, Map<String, String> cfg) throws Exception {
        NewTopic t = new NewTopic(name, assignment);
        Map<String, String> c = new HashMap<>();
        c.put(segmentBytesKey(), "400");
        c.put("index.interval.bytes", "100"); // index entries even in tiny segments
        c.put("min.insync.replicas", "2");
        c.putAll(cfg);
        t.configs(c);
        a.createTopics(List.of(t)).all().get(60, TimeUnit.SECONDS);
        waitLeaders(a, name, assignment);
    }

    static void waitLeaders(Admin a, String name, Map<Integer, List<Integer>> assignment) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                TopicDescription d = a.describeTopics(List.of(name)).allTopicNames().get(10, TimeUnit.SECONDS).get(name);
                boolean ok = d.partitions().size() == assignment.size();
                for (TopicPartitionInfo p : d.partitions()) {
                    ok &= p.leader() != null && p.leader().id() == assignment.get(p.partition()).get(0)
                        && p.isr().size() == assignment.get(p.partition()).size();
                }
                if (ok) return;
            } catch (Exception e) {
                // metadata not yet propagated
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("topic " + name + " has no leaders after 60 s");
    }

    static Map<Integer, List<Integer>> rf3(int partitions) {
        Map<Integer, List<Integer>> m = new LinkedHashMap<>();
        for (int p = 0; p < partitions; p++) m.put(p, List.of(1, 2, 3));
        return m;
    }

    static void waitIsr(Admin a, String topic, int partition, int size, int secs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        while (System.nanoTime() < deadline) {
            TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
            if (d.partitions().get(partition).isr().size() == size) return;
            Thread.sleep(250);
        }
        throw new IllegalStateException(topic + "-" + partition + " ISR never reached " + size);
    }

    /** A consumer that reads `upTo` records of tp (assigned by its group) and commits offset `commit`. */
    static void groupCommit(String group, String protocol, TopicPartition tp, long upTo, long commit) {
        Properties p = consumerProps(group, protocol);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(tp.topic()));
            long seen = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen < upTo && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    if (r.partition() == tp.partition()) seen++;
                }
            }
            if (seen < upTo) throw new IllegalStateException(group + " read " + seen + " of " + upTo);
            c.commitSync(Map.of(tp, new OffsetAndMetadata(commit, "")), Duration.ofSeconds(30));
        }
    }

    static void assignCommit(String group, Map<TopicPartition, Long> offsets) {
        Properties p = consumerProps(group, "classic");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            Map<TopicPartition, OffsetAndMetadata> m = new LinkedHashMap<>();
            offsets.forEach((tp, o) -> m.put(tp, new OffsetAndMetadata(o)));
            c.commitSync(m, Duration.ofSeconds(30));
        }
    }

    // ---- the scenarios -------------------------------------------------------

    static KafkaProducer<String, String> openTxnProducer;

    static void scenarios() throws Exception {
        try (Admin a = admin(bootstrap)) {
            run("plain", () -> plainAndCodecs(a));
            run("idempotent", () -> idempotent(a));
            run("transactions", () -> transactions(a));
            run("consume-transform-produce", () -> consumeTransformProduce(a));
            run("groups", () -> groups(a));
            if (consumerGroups()) run("consumer-group", () -> consumerGroup(a));
            if (shareGroups()) run("share-group", () -> shareGroup(a));
            if (streamsGroups()) run("streams-group", () -> streamsGroup(a));
            run("offset-and-group-deletion", () -> offsetAndGroupDeletion(a));
            run("offset-resets", () -> offsetResets(a));
            run("compacted", () -> compacted(a));
            run("rebalances", () -> rebalances(a));
            run("transaction-timed-out", () -> transactionTimedOut(a));
            run("recreated", () -> recreated(a));
            run("follower-restart", () -> followerRestart(a));
            run("diverged", () -> diverged(a));
            record(a);
            run("killed", () -> killMidProduce(a));
            recordKilled(a);
        }
        Files.write(out.resolve("driver-log.txt"), log);
        Files.write(out.resolve("scenarios.txt"), ran);
    }

    interface Scenario {
        void run() throws Exception;
    }

    static void run(String name, Scenario s) throws Exception {
        long t0 = System.nanoTime();
        s.run();
        ran.add(name);
        System.err.printf("[driver] scenario %s done in %.1f s%n", name, (System.nanoTime() - t0) / 1e9);
    }

    static void plainAndCodecs(Admin a) throws Exception {
        createTopic(a, "plain", rf3(1), Map.of());
        try (var pr = producer("plain-producer", Map.of())) {
            produceBatched(pr, "plain", 0, 0, 30, 5, 0, "plain");
        }
        note("plain: 30 records in 6 batches of 5, timestamps BASE+0..29");
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
        createTopic(a, "codecs", rf3(codecs.length), Map.of());
        for (int p = 0; p < codecs.length; p++) {
            try (var pr = producer("codec-" + codecs[p], Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codecs[p]))) {
                produceBatched(pr, "codecs", p, 0, 12, 4, 100, codecs[p]);
            }
            note("codecs-" + p + ": 12 records in 3 batches of 4, compression " + codecs[p]);
        }
    }

    static void idempotent(Admin a) throws Exception {
        createTopic(a, "idempotent", rf3(1), Map.of());
        try (var pr = producer("idem-producer", Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5))) {
            produceBatched(pr, "idempotent", 0, 0, 20, 5, 200, "idem");
        }
        note("idempotent: 20 records in 4 batches of 5 from one idempotent producer");
    }

    static KafkaProducer<String, String> txnProducer(String id) {
        var pr = producer(id + "-client", Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
            ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 900000));
        pr.initTransactions();
        return pr;
    }

    static void transactions(Admin a) throws Exception {
        createTopic(a, "txn", rf3(1), Map.of());
        try (var pr = txnProducer("tx-commit")) {
            pr.beginTransaction();
            produceBatched(pr, "txn", 0, 0, 5, 5, 300, "committed");
            pr.commitTransaction();
        }
        try (var pr = txnProducer("tx-abort")) {
            pr.beginTransaction();
            produceBatched(pr, "txn", 0, 5, 5, 5, 300, "aborted");
            pr.abortTransaction();
        }
        try (var pr = txnProducer("tx-commit")) {
            pr.beginTransaction();
            produceBatched(pr, "txn", 0, 10, 3, 3, 300, "committed");
            pr.commitTransaction();
        }
        openTxnProducer = txnProducer("tx-open");
        openTxnProducer.beginTransaction();
        produceBatched(openTxnProducer, "txn", 0, 13, 4, 4, 300, "open");
        note("txn: tx-commit commits 5 (offsets 0-4, marker 5), tx-abort aborts 5 (6-10, marker 11), "
            + "tx-commit commits 3 (12-14, marker 15), tx-open leaves 4 open (16-19): LSO 16, HW 20");
    }

    static void consumeTransformProduce(Admin a) throws Exception {
        createTopic(a, "ctp-in", rf3(1), Map.of());
        createTopic(a, "ctp-out", rf3(1), Map.of());
        try (var pr = producer("ctp-source", Map.of())) {
            produceBatched(pr, "ctp-in", 0, 0, 10, 10, 400, "in");
        }
        TopicPartition in = new TopicPartition("ctp-in", 0);
        Properties cp = consumerProps("ctp-app", "classic");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);
        try (var pr = txnProducer("ctp-app-tx"); var c = new KafkaConsumer<String, String>(cp)) {
            c.subscribe(List.of("ctp-in"));
            int done = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (done < 10 && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                if (recs.isEmpty()) continue;
                pr.beginTransaction();
                long next = -1;
                for (ConsumerRecord<String, String> r : recs) {
                    pr.send(new ProducerRecord<>("ctp-out", 0, r.timestamp() + 50, r.key(), r.value().toUpperCase(Locale.ROOT)));
                    next = r.offset() + 1;
                    done++;
                }
                pr.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(next)), c.groupMetadata());
                pr.commitTransaction();
            }
            if (done != 10) throw new IllegalStateException("ctp-app transformed " + done + " of 10");
        }
        note("ctp-in: 10 records; group ctp-app (classic, read_committed) transformed them into ctp-out "
            + "in transactions of ctp-app-tx with sendOffsetsToTransaction: committed offset 10 on ctp-in-0");
    }

    static void groups(Admin a) throws Exception {
        TopicPartition plain = new TopicPartition("plain", 0);
        groupCommit("classic-g", "classic", plain, 30, 20);
        note("classic-g (group.protocol=classic): read plain-0, committed 20");
        groupCommit("txn-reader-g", "classic", new TopicPartition("txn", 0), 1, 16);
        note("txn-reader-g: committed 16 on txn-0 (the LSO)");
        TopicPartition codecs0 = new TopicPartition("codecs", 0);
        assignCommit("codecs-g", Map.of(codecs0, 12L, new TopicPartition("codecs", 1), 8L,
            new TopicPartition("codecs", 2), 4L, new TopicPartition("codecs", 3), 0L, new TopicPartition("codecs", 4), 11L));
        note("codecs-g (assign, no subscription): committed codecs-0..4 = 12, 8, 4, 0, 11");
    }

    static void consumerGroup(Admin a) {
        groupCommit("consumer-g", "consumer", new TopicPartition("plain", 0), 30, 25);
        note("consumer-g (group.protocol=consumer, KIP-848): read plain-0, committed 25");
    }

    /**
     * A share group (KIP-932) with explicit acknowledgement: offsets 0-5
     * ACCEPTed, 6-7 RELEASEd (each time they are delivered), 8-9 REJECTed,
     * then the consumer closes: its state in __share_group_state keeps the
     * released records available with their delivery counts and the rejected
     * ones archived.
     */
    static void shareGroup(Admin a) throws Exception {
        createTopic(a, "share", rf3(1), Map.of());
        try (var pr = producer("share-source", Map.of())) {
            produceBatched(pr, "share", 0, 0, 10, 10, 500, "share");
        }
        // ConfigResource.Type.GROUP (4.0 on) by name: this source compiles against 3.9 as well.
        a.incrementalAlterConfigs(Map.of(
            new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.valueOf("GROUP"), "share-g"),
            List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "share-g");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "share-g-client");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", "explicit");
        Set<Long> seen = new TreeSet<>();
        Map<String, Integer> acks = new TreeMap<>();
        try (var c = new KafkaShareConsumer<String, String>(p)) {
            c.subscribe(List.of("share"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen.size() < 10 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    AcknowledgeType t = r.offset() < 6 ? AcknowledgeType.ACCEPT
                        : r.offset() < 8 ? AcknowledgeType.RELEASE : AcknowledgeType.REJECT;
                    c.acknowledge(r, t);
                    acks.merge(t.toString(), 1, Integer::sum);
                    seen.add(r.offset());
                }
                c.commitSync(Duration.ofSeconds(30));
            }
        }
        if (seen.size() != 10) throw new IllegalStateException("share-g saw " + seen + " of offsets 0-9");
        note("share: 10 records; share group share-g (explicit acknowledgement) ACCEPTed 0-5, RELEASEd 6-7, REJECTed 8-9: " + acks);
    }

    static void offsetAndGroupDeletion(Admin a) throws Exception {
        TopicPartition plain = new TopicPartition("plain", 0);
        TopicPartition idem = new TopicPartition("idempotent", 0);
        assignCommit("offsets-deleted-g", Map.of(plain, 10L, idem, 15L));
        a.deleteConsumerGroupOffsets("offsets-deleted-g", Set.of(idem)).all().get(30, TimeUnit.SECONDS);
        note("offsets-deleted-g: committed plain-0=10 and idempotent-0=15, then Admin deleteConsumerGroupOffsets(idempotent-0): plain-0=10 left");
        assignCommit("deleted-g", Map.of(plain, 5L));
        a.deleteConsumerGroups(List.of("deleted-g")).all().get(30, TimeUnit.SECONDS);
        note("deleted-g: committed plain-0=5, then Admin deleteConsumerGroups: gone");
    }

    static void offsetResets(Admin a) throws Exception {
        TopicPartition plain = new TopicPartition("plain", 0);
        assignCommit("reset-earliest-g", Map.of(plain, 30L));
        long earliest = a.listOffsets(Map.of(plain, OffsetSpec.earliest())).partitionResult(plain).get().offset();
        a.alterConsumerGroupOffsets("reset-earliest-g", Map.of(plain, new OffsetAndMetadata(earliest))).all().get(30, TimeUnit.SECONDS);
        note("reset-earliest-g: committed 30, reset by Admin to earliest = " + earliest);
        assignCommit("reset-ts-g", Map.of(plain, 30L));
        long ts = a.listOffsets(Map.of(plain, OffsetSpec.forTimestamp(BASE_TS + 12))).partitionResult(plain).get().offset();
        a.alterConsumerGroupOffsets("reset-ts-g", Map.of(plain, new OffsetAndMetadata(ts))).all().get(30, TimeUnit.SECONDS);
        note("reset-ts-g: committed 30, reset by Admin to the offset for timestamp BASE+12 = " + ts);
        assignCommit("reset-shift-g", Map.of(plain, 20L));
        var cur = a.listConsumerGroupOffsets("reset-shift-g").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(plain).offset();
        a.alterConsumerGroupOffsets("reset-shift-g", Map.of(plain, new OffsetAndMetadata(cur - 5))).all().get(30, TimeUnit.SECONDS);
        note("reset-shift-g: committed 20, shifted by -5 through Admin = " + (cur - 5));
    }

    static void compacted(Admin a) throws Exception {
        createTopic(a, "compacted", rf3(1), Map.of("cleanup.policy", "compact", "min.cleanable.dirty.ratio", "0.01",
            "delete.retention.ms", "86400000", "min.compaction.lag.ms", "0"));
        try (var pr = producer("compacted-producer", Map.of())) {
            for (int round = 0; round < 6; round++) {
                for (int k = 0; k < 5; k++) {
                    String v = (round == 5 && k == 4) ? null : "v" + round;
                    pr.send(new ProducerRecord<>("compacted", 0, BASE_TS + 600 + round * 5 + k, "k" + k, v));
                }
                pr.flush();
            }
            // One more batch: the segments before the active one are what the cleaner may clean.
            var last = pr.send(new ProducerRecord<>("compacted", 0, BASE_TS + 700, "k0", "final"));
            pr.flush();
            last.get(30, TimeUnit.SECONDS);
        }
        TopicPartition tp = new TopicPartition("compacted", 0);
        // Wait (bounded) until the cleaner has cleaned every replica once (its size shrinks):
        // one pass cleans every segment below the active one, and nothing new is written after.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Map<Integer, Long> first = logSizes(a, tp);
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            Map<Integer, Long> now = logSizes(a, tp);
            boolean all = now.size() == 3;
            for (var e : now.entrySet()) all &= e.getValue() < first.getOrDefault(e.getKey(), 0L);
            if (all) {
                note("compacted: 5 keys x 6 rounds (k4's last value a tombstone) + k0=final; cleaned: sizes " + first + " -> " + now);
                return;
            }
        }
        throw new IllegalStateException("compacted-0 was not cleaned within 90 s: " + first + " -> " + logSizes(a, tp));
    }

    static org.apache.kafka.clients.admin.AlterConfigOp set(String key, String value) {
        return new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(key, value),
            org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET);
    }

    static org.apache.kafka.common.config.ConfigResource topicResource(String name) {
        return new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, name);
    }

    /** A classic group member on its own thread: polls, commits what it read, leaves when stopped. */
    static final class Member implements AutoCloseable {
        final Thread thread;
        volatile boolean stop;
        volatile Throwable failed;

        Member(String group, String clientId, String topic) {
            Properties p = consumerProps(group, "classic");
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 300);
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
            thread = new Thread(() -> {
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
                    c.subscribe(List.of(topic), new org.apache.kafka.clients.consumer.ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                            if (!parts.isEmpty()) c.commitSync(Duration.ofSeconds(30));
                        }

                        @Override
                        public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                        }
                    });
                    while (!stop) {
                        if (!c.poll(Duration.ofMillis(200)).isEmpty()) c.commitSync(Duration.ofSeconds(30));
                    }
                } catch (Throwable t) {
                    failed = t;
                }
            }, clientId);
            thread.start();
        }

        @Override
        public void close() throws Exception {
            stop = true;
            thread.join(60000);
            if (thread.isAlive()) throw new IllegalStateException(thread.getName() + " did not stop");
            if (failed != null) throw new IllegalStateException(thread.getName() + " failed", failed);
        }
    }

    /**
     * The __consumer_offsets partition of a group, as the group coordinator
     * places it: Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions
     * (GroupCoordinatorService.partitionFor; GroupMetadataManager.partitionFor in 3.x).
     */
    static int coordinatorPartition(String group) {
        return org.apache.kafka.common.utils.Utils.abs(group.hashCode()) % OFFSETS_PARTITIONS;
    }

    /** Wait (bounded) until the classic group is in STATE with N members. */
    static void waitGroup(Admin a, String group, String state, int members) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                ConsumerGroupDescription d = a.describeConsumerGroups(List.of(group)).describedGroups().get(group).get(10, TimeUnit.SECONDS);
                last = call(d, atLeast(4, 0) ? "groupState" : "state") + " with " + d.members().size();
                if (last.equalsIgnoreCase(state + " with " + members)) return;
            } catch (java.util.concurrent.ExecutionException e) {
                last = e.getCause().toString(); // 4.0: GroupIdNotFoundException until the group exists
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(group + " never reached " + state + " with " + members + " members (last: " + last + ")");
    }

    /**
     * Many rebalances of one classic group in a __consumer_offsets with
     * small segments and a low dirty ratio: members join and leave one after
     * the other (every join and every leave is a new generation, a
     * GroupMetadata record), committing what they read; then the driver waits
     * until the log cleaner has cleaned each replica of the group's partition
     * up to its active segment (its cleaner-offset-checkpoint).
     */
    static void rebalances(Admin a) throws Exception {
        String group = "rebalance-g";
        int part = coordinatorPartition(group);
        a.incrementalAlterConfigs(Map.of(topicResource("__consumer_offsets"),
            List.of(set(segmentBytesKey(), "2048"), set("min.cleanable.dirty.ratio", "0.01")))).all().get(30, TimeUnit.SECONDS);
        createTopic(a, "rebalance", rf3(3), Map.of());
        int rounds = 10;
        try (var pr = producer("rebalance-producer", Map.of())) {
            for (int p = 0; p < 3; p++) produceBatched(pr, "rebalance", p, 0, 5, 5, 1200, "r" + p);
            List<Member> members = new ArrayList<>();
            try {
                for (int round = 0; round < rounds; round++) {
                    members.add(new Member(group, group + "-m" + round, "rebalance"));
                    waitGroup(a, group, "Stable", members.size());
                    for (int p = 0; p < 3; p++) produceBatched(pr, "rebalance", p, 5 + round, 1, 1, 1200, "r" + p);
                    if (members.size() > 2) {
                        members.remove(0).close();
                        waitGroup(a, group, "Stable", members.size());
                    }
                }
            } finally {
                for (Member m : members) m.close();
            }
        }
        waitGroup(a, group, "Empty", 0);
        Map<Integer, Long> cleaned = waitCleaned("__consumer_offsets-" + part, 120);
        // Back to the topic's own settings: later records stay in the active segments,
        // out of the cleaner's reach (it drops aborted transactional records, which
        // Kafka's coordinators keep in memory: transactionTimedOut's group).
        var unset = new ArrayList<org.apache.kafka.clients.admin.AlterConfigOp>();
        for (String key : List.of(segmentBytesKey(), "min.cleanable.dirty.ratio")) {
            unset.add(new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(key, null),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.DELETE));
        }
        a.incrementalAlterConfigs(Map.of(topicResource("__consumer_offsets"), unset)).all().get(30, TimeUnit.SECONDS);
        note("rebalance-g (classic): " + rounds + " members joined one after the other, at most 3 at a time, each committing what it read "
            + "of rebalance-0..2; __consumer_offsets-" + part + " (segments of 2048 bytes, min.cleanable.dirty.ratio 0.01) cleaned "
            + "up to its active segment on every broker: " + cleaned + "; then the topic's settings back to their defaults");
    }

    /**
     * Wait (bounded) until every broker's log cleaner has cleaned its copy of
     * the partition folder up to its active segment: the broker's
     * cleaner-offset-checkpoint for it reaches the base offset of the newest
     * segment. Returns broker -> that offset.
     */
    static Map<Integer, Long> waitCleaned(String folder, int secs) throws Exception {
        Path data = Paths.get(System.getenv("KLOG_ORACLE_DATA"));
        int dash = folder.lastIndexOf('-');
        String key = folder.substring(0, dash) + " " + folder.substring(dash + 1) + " ";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        Map<Integer, String> state = new TreeMap<>();
        while (System.nanoTime() < deadline) {
            Map<Integer, Long> done = new TreeMap<>();
            for (int n = 1; n <= 3; n++) {
                long active;
                try (Stream<Path> files = Files.list(data.resolve("broker-" + n).resolve(folder))) {
                    active = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".log"))
                        .mapToLong(f -> Long.parseLong(f.substring(0, f.length() - 4))).max().orElse(0);
                }
                long checkpoint = -1;
                Path cp = data.resolve("broker-" + n).resolve("cleaner-offset-checkpoint");
                if (Files.exists(cp)) {
                    for (String l : Files.readAllLines(cp)) {
                        if (l.startsWith(key)) checkpoint = Long.parseLong(l.substring(key.length()).trim());
                    }
                }
                state.put(n, "checkpoint " + checkpoint + ", active segment " + active);
                if (active > 0 && checkpoint >= active) done.put(n, checkpoint);
            }
            if (done.size() == 3) return done;
            Thread.sleep(500);
        }
        throw new IllegalStateException(folder + " not cleaned within " + secs + " s: " + state);
    }

    /**
     * A transactional producer in its own JVM (`txn-victim`), killed with
     * SIGKILL in the middle of its transaction (5 records on txn-timeout-0
     * and offsets of group timeout-g sent to the transaction); its coordinator
     * aborts the transaction once its timeout (5 s) has passed.
     */
    static void transactionTimedOut(Admin a) throws Exception {
        createTopic(a, "txn-timeout", rf3(1), Map.of());
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        Process victim = new ProcessBuilder(javaBin, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
            "klogoracle.Driver", "txn-victim", bootstrap)
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            var lines = new java.io.BufferedReader(new java.io.InputStreamReader(victim.getInputStream(), StandardCharsets.UTF_8));
            var sent = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    for (String l; (l = lines.readLine()) != null; ) if (l.equals("SENT")) return true;
                } catch (IOException e) {
                    // the victim died
                }
                return false;
            });
            if (!sent.get(120, TimeUnit.SECONDS)) throw new IllegalStateException("the victim producer exited before SENT");
            Process kill = new ProcessBuilder("kill", "-KILL", String.valueOf(victim.pid())).inheritIO().start();
            if (!kill.waitFor(30, TimeUnit.SECONDS) || !victim.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the victim producer outlived kill -9");
            }
        } finally {
            victim.destroyForcibly();
        }
        TopicPartition tp = new TopicPartition("txn-timeout", 0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        String state = "";
        while (System.nanoTime() < deadline) {
            state = a.describeTransactions(List.of("tx-timeout")).description("tx-timeout").get(10, TimeUnit.SECONDS).state().toString();
            long lso = offsets(a, List.of(tp), OffsetSpec.latest(), IsolationLevel.READ_COMMITTED).get(tp).offset();
            long hw = offsets(a, List.of(tp), OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED).get(tp).offset();
            if (state.equals("CompleteAbort") && lso == hw) {
                note("txn-timeout: transactional id tx-timeout (transaction.timeout.ms 5000) wrote 5 records to txn-timeout-0 and sent "
                    + "offsets of timeout-g (plain-0=7) to its transaction, was killed with SIGKILL, and its coordinator aborted it "
                    + "(state " + state + ", LSO = HW = " + hw + ")");
                return;
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("tx-timeout was not aborted by its coordinator within 90 s (state " + state + ")");
    }

    /** The victim of transactionTimedOut: opens a transaction, prints SENT, waits to be killed. */
    static void txnVictim() throws Exception {
        var pr = producer("tx-timeout-client", Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-timeout",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 5000));
        pr.initTransactions();
        pr.beginTransaction();
        produceBatched(pr, "txn-timeout", 0, 0, 5, 5, 1100, "timed-out");
        pr.sendOffsetsToTransaction(Map.of(new TopicPartition("plain", 0), new OffsetAndMetadata(7)),
            new org.apache.kafka.clients.consumer.ConsumerGroupMetadata("timeout-g"));
        System.out.println("SENT");
        System.out.flush();
        Thread.sleep(TimeUnit.MINUTES.toMillis(10));
        Runtime.getRuntime().halt(3);
    }

    /**
     * A Kafka Streams application in a streams group (KIP-1071,
     * group.protocol=streams): streams-in (2 partitions, 12 records) upper-cased
     * into streams-out and reduced by key in an in-memory store (its changelog
     * topic is created by the group coordinator); it runs until its group has
     * committed the end of both input partitions, then closes.
     */
    static void streamsGroup(Admin a) throws Exception {
        createTopic(a, "streams-in", rf3(2), Map.of());
        createTopic(a, "streams-out", rf3(2), Map.of());
        try (var pr = producer("streams-source", Map.of())) {
            for (int p = 0; p < 2; p++) produceBatched(pr, "streams-in", p, p * 6, 6, 3, 1300, "word");
        }
        Properties p = new Properties();
        p.put("application.id", "streams-app");
        p.put("bootstrap.servers", bootstrap);
        p.put("group.protocol", "streams");
        p.put("commit.interval.ms", 200);
        p.put("num.stream.threads", 1);
        p.put("state.dir", Files.createTempDirectory("klog-streams").toString());
        p.put("default.key.serde", org.apache.kafka.common.serialization.Serdes.StringSerde.class.getName());
        p.put("default.value.serde", org.apache.kafka.common.serialization.Serdes.StringSerde.class.getName());
        p.put("consumer.auto.offset.reset", "earliest");
        var builder = new org.apache.kafka.streams.StreamsBuilder();
        org.apache.kafka.streams.kstream.KStream<String, String> in = builder.stream("streams-in");
        in.mapValues(v -> v.toUpperCase(Locale.ROOT)).to("streams-out");
        // Values stay text in the changelog too (a reduce of strings, not a count of longs).
        in.groupByKey().reduce((x, y) -> x + "+" + y, org.apache.kafka.streams.kstream.Materialized.as(
            org.apache.kafka.streams.state.Stores.inMemoryKeyValueStore("latest")));
        List<TopicPartition> inputs = List.of(new TopicPartition("streams-in", 0), new TopicPartition("streams-in", 1));
        Map<TopicPartition, Long> committed = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
        try (var app = new org.apache.kafka.streams.KafkaStreams(builder.build(), p)) {
            app.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                committed.clear();
                committed.putAll(groupOffsets(a, "streams-app", "Streams"));
                if (committed.getOrDefault(inputs.get(0), -1L) == 6 && committed.getOrDefault(inputs.get(1), -1L) == 6) break;
                Thread.sleep(500);
            }
            // kafka-streams-groups describes offsets and members of a running group only.
            describeGroup("streams-app", "streams");
            app.close(Duration.ofSeconds(60));
        }
        if (!(committed.getOrDefault(inputs.get(0), -1L) == 6 && committed.getOrDefault(inputs.get(1), -1L) == 6)) {
            throw new IllegalStateException("streams-app committed " + committed + ", not 6 on both input partitions");
        }
        note("streams-app (group.protocol=streams): read streams-in-0..1 (6 records each), wrote them upper-cased to streams-out "
            + "and reduced them by key (in-memory store, changelog topic); committed " + committed);
    }

    // ---- reflection, for the APIs that differ between releases ----------------

    /** Call the public method NAME of TARGET taking ARGS.length arguments. */
    static Object call(Object target, String name, Object... args) throws Exception {
        for (java.lang.reflect.Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                m.setAccessible(true);
                try {
                    return m.invoke(target, args);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    if (e.getCause() instanceof Exception x) throw x;
                    throw e;
                }
            }
        }
        throw new NoSuchMethodException(target.getClass().getName() + "." + name + "/" + args.length);
    }

    static boolean has(Object target, String name) {
        return java.util.Arrays.stream(target.getClass().getMethods()).anyMatch(m -> m.getName().equals(name));
    }

    static Object await(Object kafkaFuture) throws Exception {
        return ((org.apache.kafka.common.KafkaFuture<?>) kafkaFuture).get(30, TimeUnit.SECONDS);
    }

    static String opt(Object optional) {
        return ((java.util.Optional<?>) optional).map(Object::toString).orElse("?");
    }

    /**
     * Every group: id -> {type, state}. Admin.listGroups (4.0 on) lists every
     * type; 3.9 has listConsumerGroups only (with GroupListing's state as state()).
     */
    static Map<String, String[]> groupListing(Admin a) throws Exception {
        Map<String, String[]> out = new TreeMap<>();
        Collection<?> all = (Collection<?>) await(call(call(a, atLeast(4, 0) ? "listGroups" : "listConsumerGroups"), "all"));
        for (Object g : all) {
            out.put((String) call(g, "groupId"), new String[] {opt(call(g, "type")), opt(call(g, atLeast(4, 0) ? "groupState" : "state"))});
        }
        return out;
    }

    /**
     * A group's committed offsets (for a share group: each share-partition's
     * start offset), by the Admin call for its type; -1 where Kafka gave none.
     */
    static Map<TopicPartition, Long> groupOffsets(Admin a, String gid, String type) throws Exception {
        Map<TopicPartition, Long> out = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
        Map<?, ?> m;
        if (type.equalsIgnoreCase("share") || type.equalsIgnoreCase("streams")) {
            String kind = type.equalsIgnoreCase("share") ? "Share" : "Streams";
            Object spec = Class.forName("org.apache.kafka.clients.admin.List" + kind + "GroupOffsetsSpec").getConstructor().newInstance();
            Object r = call(a, "list" + kind + "GroupOffsets", Map.of(gid, spec));
            // 4.2 on: ListShareGroupOffsetsResult.partitionsToOffsetInfo (SharePartitionOffsetInfo).
            m = (Map<?, ?>) await(call(r, has(r, "partitionsToOffsetInfo") ? "partitionsToOffsetInfo" : "partitionsToOffsetAndMetadata", gid));
        } else {
            m = a.listConsumerGroupOffsets(gid).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        }
        for (var e : m.entrySet()) {
            Object v = e.getValue();
            long o = v == null ? -1 : v instanceof OffsetAndMetadata om ? om.offset() : (Long) call(v, "startOffset");
            out.put((TopicPartition) e.getKey(), o);
        }
        return out;
    }

    static Map<Integer, Long> logSizes(Admin a, TopicPartition tp) throws Exception {
        Map<Integer, Long> m = new TreeMap<>();
        var r = a.describeLogDirs(List.of(1, 2, 3)).allDescriptions().get(30, TimeUnit.SECONDS);
        r.forEach((broker, dirs) -> dirs.values().forEach(d -> {
            var info = d.replicaInfos().get(tp);
            if (info != null) m.put(broker, info.size());
        }));
        return m;
    }

    static void recreated(Admin a) throws Exception {
        createTopic(a, "recreated", rf3(1), Map.of());
        try (var pr = producer("recreated-producer", Map.of())) {
            produceBatched(pr, "recreated", 0, 0, 10, 5, 800, "first-life");
        }
        a.deleteTopics(List.of("recreated")).all().get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && a.listTopics().names().get().contains("recreated")) Thread.sleep(200);
        Thread.sleep(2000);
        // Recreated with another leader order, so its folder holds a new topic id.
        createTopic(a, "recreated", Map.of(0, List.of(2, 3, 1)), Map.of());
        try (var pr = producer("recreated-producer", Map.of())) {
            produceBatched(pr, "recreated", 0, 0, 3, 3, 850, "second-life");
        }
        note("recreated: 10 records, topic deleted, recreated (leader 2) with 3 records");
    }

    static void followerRestart(Admin a) throws Exception {
        createTopic(a, "follower", rf3(1), Map.of());
        try (var pr = producer("follower-producer", Map.of())) {
            produceBatched(pr, "follower", 0, 0, 10, 5, 900, "before");
            ctl("stop", "2");
            waitIsr(a, "follower", 0, 2, 60);
            produceBatched(pr, "follower", 0, 10, 20, 5, 900, "while-2-down");
            ctl("start", "2");
            waitIsr(a, "follower", 0, 3, 120);
        }
        note("follower: 10 records, broker 2 stopped, 20 more, broker 2 restarted and caught up (back in ISR)");
    }

    /**
     * A replica that diverged and was truncated: leader 2 takes 5 records (acks=1) that
     * follower 3 never fetched, both stop, 3 is elected leader uncleanly and takes 3
     * records at the same offsets, then 2 comes back as a follower and truncates its 5.
     */
    static void diverged(Admin a) throws Exception {
        createTopic(a, "diverged", Map.of(0, List.of(2, 3)), Map.of("min.insync.replicas", "1"));
        TopicPartition tp = new TopicPartition("diverged", 0);
        try (var pr = producer("diverged-producer", Map.of())) {
            produceBatched(pr, "diverged", 0, 0, 10, 5, 950, "both");
        }
        ctl("stop", "3");
        waitIsr(a, "diverged", 0, 1, 60);
        try (var pr = producer("diverged-producer", Map.of(ProducerConfig.ACKS_CONFIG, "1"))) {
            produceBatched(pr, "diverged", 0, 10, 5, 5, 950, "only-on-2");
        }
        ctl("stop", "2");
        ctl("start", "3");
        waitBrokers(a, Set.of(1, 3), 60);
        a.incrementalAlterConfigs(Map.of(
            new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "diverged"),
            List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("unclean.leader.election.enable", "true"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (leaderOf(a, tp) != 3) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("diverged-0: no unclean election of node 3");
            try {
                a.electLeaders(org.apache.kafka.common.ElectionType.UNCLEAN, Set.of(tp)).all().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // not electable yet
            }
            Thread.sleep(500);
        }
        try (var pr = producer("diverged-producer", Map.of(ProducerConfig.ACKS_CONFIG, "1"))) {
            produceBatched(pr, "diverged", 0, 100, 3, 3, 950, "new-leader-3");
        }
        ctl("start", "2");
        waitBrokers(a, Set.of(1, 2, 3), 60);
        waitIsr(a, "diverged", 0, 2, 120);
        note("diverged: replicas 2,3; 10 records on both; node 3 stopped; 5 records (acks=1) on leader 2 only; "
            + "node 2 stopped, node 3 back and elected uncleanly; 3 records at offsets 10-12 on 3; node 2 back: "
            + "it truncated its offsets 10-14 and fetched 3's");
    }

    static int leaderOf(Admin a, TopicPartition tp) throws Exception {
        var p = a.describeTopics(List.of(tp.topic())).allTopicNames().get(10, TimeUnit.SECONDS).get(tp.topic()).partitions().get(tp.partition());
        return p.leader() == null ? -1 : p.leader().id();
    }

    static void waitBrokers(Admin a, Set<Integer> ids, int secs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        while (System.nanoTime() < deadline) {
            Set<Integer> up = new TreeSet<>();
            try {
                a.describeCluster().nodes().get(10, TimeUnit.SECONDS).forEach(n -> up.add(n.id()));
            } catch (Exception e) {
                // retry
            }
            if (up.containsAll(ids)) return;
            Thread.sleep(300);
        }
        throw new IllegalStateException("brokers " + ids + " not all up after " + secs + " s");
    }

    // ---- answers -------------------------------------------------------------

    static String js(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> offsets(Admin a, Collection<TopicPartition> tps,
                                                                               OffsetSpec spec, IsolationLevel iso) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new LinkedHashMap<>();
        for (TopicPartition tp : tps) req.put(tp, spec);
        return a.listOffsets(req, new ListOffsetsOptions(iso)).all().get(30, TimeUnit.SECONDS);
    }

    static List<TopicPartition> dataPartitions(Admin a, Set<String> only) throws Exception {
        // Named topics may be internal ones (__consumer_offsets).
        var listing = only == null ? a.listTopics()
            : a.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true));
        Set<String> names = new TreeSet<>(listing.names().get(30, TimeUnit.SECONDS));
        if (only != null) names.retainAll(only);
        List<TopicPartition> tps = new ArrayList<>();
        for (var d : a.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
            for (var p : d.partitions()) tps.add(new TopicPartition(d.name(), p.partition()));
        }
        tps.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
        return tps;
    }

    static void writeOffsets(Admin a, List<TopicPartition> tps, Path file) throws Exception {
        var earliest = offsets(a, tps, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        var hw = offsets(a, tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        var lso = offsets(a, tps, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        var maxTs = offsets(a, tps, OffsetSpec.maxTimestamp(), IsolationLevel.READ_UNCOMMITTED);
        List<String> lines = new ArrayList<>();
        for (TopicPartition tp : tps) {
            var byTs = offsets(a, List.of(tp), OffsetSpec.forTimestamp(BASE_TS + 12), IsolationLevel.READ_UNCOMMITTED).get(tp);
            var d = a.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic()).partitions().get(tp.partition());
            lines.add(String.format("  {\"topic\": %s, \"partition\": %d, \"leader\": %d, \"replicas\": %s, \"isr\": %s, "
                    + "\"earliest\": %d, \"latest_read_uncommitted\": %d, \"latest_read_committed\": %d, "
                    + "\"max_timestamp\": {\"offset\": %d, \"timestamp\": %d}, "
                    + "\"for_timestamp\": {\"query\": %d, \"offset\": %d, \"timestamp\": %d}}",
                js(tp.topic()), tp.partition(), d.leader() == null ? -1 : d.leader().id(),
                d.replicas().stream().map(n -> String.valueOf(n.id())).collect(Collectors.toList()),
                d.isr().stream().map(n -> n.id()).sorted().map(String::valueOf).collect(Collectors.toList()),
                earliest.get(tp).offset(), hw.get(tp).offset(), lso.get(tp).offset(),
                maxTs.get(tp).offset(), maxTs.get(tp).timestamp(),
                BASE_TS + 12, byTs.offset(), byTs.timestamp()));
        }
        Files.writeString(file, "[\n" + String.join(",\n", lines) + "\n]\n");
    }

    static void record(Admin a) throws Exception {
        List<TopicPartition> tps = dataPartitions(a, null);
        tps.removeIf(tp -> tp.topic().startsWith("__"));
        writeOffsets(a, tps, out.resolve("list-offsets.json"));
        Map<String, String[]> types = writeGroups(a, out.resolve("groups.json"));
        // What a consumer of each isolation level actually receives from the partitions with transactions.
        List<String> reads = new ArrayList<>();
        for (String topic : List.of("txn", "ctp-out", "idempotent", "plain", "txn-timeout")) {
            for (String iso : List.of("read_uncommitted", "read_committed")) {
                reads.add(String.format("  {\"topic\": %s, \"partition\": 0, \"isolation\": %s, \"offsets\": %s}",
                    js(topic), js(iso), readAll(a, new TopicPartition(topic, 0), iso)));
            }
        }
        Files.writeString(out.resolve("consumed.json"), "[\n" + String.join(",\n", reads) + "\n]\n");
        // Kafka's own tools, in this JVM, while the cluster is up.
        Path t = out.resolve("tools");
        Files.createDirectories(t);
        for (String gid : types.keySet()) {
            // A streams group's answers were recorded while its application ran (streamsGroup).
            if (!types.get(gid)[0].equalsIgnoreCase("streams")) describeGroup(gid, types.get(gid)[0]);
        }
        runTool(t.resolve("groups-list.txt"), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap, "--list");
        String tx = "org.apache.kafka.tools.TransactionsCommand";
        runTool(t.resolve("transactions-list.txt"), tx, "--bootstrap-server", bootstrap, "list");
        for (String id : List.of("tx-commit", "tx-abort", "tx-open", "ctp-app-tx", "tx-timeout")) {
            runTool(t.resolve("transactions-describe-" + id + ".txt"), tx, "--bootstrap-server", bootstrap, "describe", "--transactional-id", id);
        }
        runTool(t.resolve("transactions-describe-producers-txn-0.txt"), tx, "--bootstrap-server", bootstrap, "describe-producers", "--topic", "txn", "--partition", "0");
        runTool(t.resolve("transactions-describe-producers-idempotent-0.txt"), tx, "--bootstrap-server", bootstrap, "describe-producers", "--topic", "idempotent", "--partition", "0");
        runTool(t.resolve("transactions-describe-producers-txn-timeout-0.txt"), tx, "--bootstrap-server", bootstrap, "describe-producers", "--topic", "txn-timeout", "--partition", "0");
        runTool(t.resolve("transactions-find-hanging-broker-1.txt"), tx, "--bootstrap-server", bootstrap, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "1");
        runTool(t.resolve("get-offsets-latest.txt"), "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap, "--time", "-1");
        runTool(t.resolve("get-offsets-earliest.txt"), "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap, "--time", "-2");
        runTool(t.resolve("get-offsets-max-timestamp.txt"), "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap, "--time", "-3");
    }

    /**
     * Kafka's answers after the writers scenario (tests/kafka/run.sh): every
     * group's committed offsets (groups.json), every partition's offsets,
     * __consumer_offsets included (list-offsets.json: its max_timestamp comes
     * from the segments' time indexes as the broker loaded them), what a
     * consumer reads of each of TOPIC_PARTITIONS (`topic-N`; consumed.json,
     * with the consumer's CRC checks on), and kafka-consumer-groups --list.
     */
    static void recordWriters(Admin a, String[] topicPartitions) throws Exception {
        // KLOG_WRITERS_ENDS ("topic-N=END ..."): the log ends klog left. The
        // restarted leaders start from the high-watermark checkpoints, below
        // klog's batches, and a group coordinator answers from its state at
        // the high watermark: wait (bounded) until the followers' fetches have
        // raised each high watermark to the log end, as after any append.
        String ends = System.getenv().getOrDefault("KLOG_WRITERS_ENDS", "");
        Map<TopicPartition, Long> want = new HashMap<>();
        for (String e : ends.trim().split("\\s+")) {
            if (e.isEmpty()) continue;
            String[] kv = e.split("=");
            int dash = kv[0].lastIndexOf('-');
            want.put(new TopicPartition(kv[0].substring(0, dash), Integer.parseInt(kv[0].substring(dash + 1))), Long.parseLong(kv[1]));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!want.isEmpty()) {
            var hw = offsets(a, want.keySet(), OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
            want.entrySet().removeIf(e -> hw.get(e.getKey()).offset() >= e.getValue());
            if (want.isEmpty()) break;
            if (System.nanoTime() > deadline) throw new IllegalStateException("high watermarks never reached klog's log ends: " + want);
            Thread.sleep(250);
        }
        writeGroups(a, out.resolve("groups.json"));
        List<TopicPartition> tps = dataPartitions(a, Set.of("__consumer_offsets"));
        List<TopicPartition> data = dataPartitions(a, null);
        data.removeIf(tp -> tp.topic().startsWith("__"));
        tps.addAll(data);
        writeOffsets(a, tps, out.resolve("list-offsets.json"));
        List<String> reads = new ArrayList<>();
        for (String tpName : topicPartitions) {
            int dash = tpName.lastIndexOf('-');
            TopicPartition tp = new TopicPartition(tpName.substring(0, dash), Integer.parseInt(tpName.substring(dash + 1)));
            reads.add(String.format("  {\"topic\": %s, \"partition\": %d, \"isolation\": \"read_uncommitted\", \"offsets\": %s}",
                js(tp.topic()), tp.partition(), readAll(a, tp, "read_uncommitted")));
        }
        Files.writeString(out.resolve("consumed.json"), "[\n" + String.join(",\n", reads) + "\n]\n");
        Path t = out.resolve("tools");
        Files.createDirectories(t);
        runTool(t.resolve("groups-list.txt"), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap, "--list");
    }

    /**
     * Every consumer group with its committed offsets, the HW, the LSO and
     * the lag, into FILE; returns the groups' listing (id -> {type, state}).
     */
    static Map<String, String[]> writeGroups(Admin a, Path file) throws Exception {
        List<String> groups = new ArrayList<>();
        Map<String, String[]> types = groupListing(a);
        for (var e : types.entrySet()) {
            String gid = e.getKey();
            String type = e.getValue()[0];
            Map<TopicPartition, Long> committed = groupOffsets(a, gid, type);
            var hw = offsets(a, committed.keySet(), OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
            var lso = offsets(a, committed.keySet(), OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            List<String> parts = new ArrayList<>();
            for (var c : committed.entrySet()) {
                TopicPartition tp = c.getKey();
                parts.add(String.format("{\"topic\": %s, \"partition\": %d, \"committed\": %d, \"high_watermark\": %d, \"lag\": %d, \"last_stable_offset\": %d, \"lag_read_committed\": %d}",
                    js(tp.topic()), tp.partition(), c.getValue(), hw.get(tp).offset(), hw.get(tp).offset() - c.getValue(),
                    lso.get(tp).offset(), lso.get(tp).offset() - c.getValue()));
            }
            groups.add(String.format("  {\"group\": %s, \"type\": %s, \"state\": %s, \"coordinator_partition\": %d, \"offsets\": [\n    %s\n  ]}",
                js(gid), js(type), js(e.getValue()[1]), coordinatorPartition(gid), String.join(",\n    ", parts)));
        }
        Files.writeString(file, "[\n" + String.join(",\n", groups) + "\n]\n");
        return types;
    }

    /**
     * kafka-consumer-groups (kafka-share-groups, kafka-streams-groups) --describe
     * of one group into tools/groups-{describe,state,members}-GROUP.txt.
     */
    static void describeGroup(String gid, String type) throws IOException {
        Path t = out.resolve("tools");
        Files.createDirectories(t);
        String cls = switch (type.toLowerCase(Locale.ROOT)) {
            case "share" -> "org.apache.kafka.tools.consumer.group.ShareGroupCommand";
            case "streams" -> "org.apache.kafka.tools.streams.StreamsGroupCommand";
            default -> "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
        };
        // kafka-streams-groups prints the committed offsets with --offsets --verbose only.
        String[] offsets = type.equalsIgnoreCase("streams") ? new String[] {"--offsets", "--verbose"} : new String[0];
        List<String> describe = new ArrayList<>(List.of("--bootstrap-server", bootstrap, "--describe", "--group", gid));
        describe.addAll(List.of(offsets));
        runTool(t.resolve("groups-describe-" + gid + ".txt"), cls, describe.toArray(String[]::new));
        runTool(t.resolve("groups-state-" + gid + ".txt"), cls, "--bootstrap-server", bootstrap, "--describe", "--state", "--group", gid);
        runTool(t.resolve("groups-members-" + gid + ".txt"), cls, "--bootstrap-server", bootstrap, "--describe", "--members", "--verbose", "--group", gid);
    }

    /** The offsets a consumer with this isolation level receives, from the start to where its position stops. */
    static List<Long> readAll(Admin a, TopicPartition tp, String iso) throws Exception {
        long end = offsets(a, List.of(tp), OffsetSpec.latest(),
            iso.equals("read_committed") ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED).get(tp).offset();
        Properties p = consumerProps("unused", "classic");
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, iso);
        List<Long> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.position(tp, Duration.ofSeconds(10)) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) seen.add(r.offset());
            }
            if (c.position(tp, Duration.ofSeconds(10)) < end) throw new IllegalStateException(tp + " " + iso + ": position never reached " + end);
        }
        return seen;
    }

    static void killMidProduce(Admin a) throws Exception {
        createTopic(a, "killed", Map.of(0, List.of(3, 1, 2)), Map.of());
        int sent = 0;
        try (var pr = producer("killed-producer", Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 0, ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE))) {
            for (int i = 0; i < 60; i++) {
                pr.send(new ProducerRecord<>("killed", 0, BASE_TS + 1000 + i, "key-" + i, "loop-" + i)).get(120, TimeUnit.SECONDS);
                sent++;
                if (i == 39) ctl("kill", "3");
            }
        }
        note("killed: leader broker 3; 40 records acked (acks=all), kill -9 of broker 3, 20 more through the new leader");
    }

    static void recordKilled(Admin a) throws Exception {
        writeOffsets(a, dataPartitions(a, Set.of("killed")), out.resolve("list-offsets-killed.json"));
        // Every topic at the end of the run, internal ones included, one name a line.
        var names = new TreeSet<>(a.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
            .names().get(30, TimeUnit.SECONDS));
        Files.write(out.resolve("topics.txt"), names);
    }

    // ---- the crash scenario ------------------------------------------------

    /** The crash scenario's topics, each with one partition. */
    static final List<String> CRASH_TOPICS = List.of("crash-all", "crash-one", "crash-unclean");
    /** The crash scenario's groups and the auto.offset.reset each resumes with. */
    static final Map<String, String> CRASH_GROUPS = new TreeMap<>(Map.of("crash-epoch-g", "earliest", "crash-plain-g", "earliest"));

    /**
     * The crash scenario, on a cluster whose three nodes run (run.sh's last
     * phase); it ends with every node down:
     * - crash-all (replicas 3,2,1, min.insync.replicas 2) and crash-one
     *   (replicas 3,2, min.insync.replicas 1), led by node 3, and
     *   crash-unclean (replicas 2,3, min.insync.replicas 1,
     *   unclean.leader.election.enable=true), led by node 2, get 20
     *   records each, acknowledged by every replica;
     * - node 2 is paused (SIGSTOP, a few seconds, within its session): the
     *   leader 3 acknowledges 10 records of crash-one alone (acks=1), and an
     *   idempotent producer sends 10 to crash-all (acks=all) that nodes 3 and
     *   1 write but nobody acknowledges; node 3 is killed (SIGKILL) and node
     *   2 resumed: node 2 becomes the leader of both, crash-one's 10 are
     *   lost, crash-all's are re-sent by their producer to the new leader;
     * - 5 records on crash-unclean are acknowledged by node 2 alone
     *   (acks=1; node 3 is down), and two groups commit crash-all at 30,
     *   crash-one at 20 and crash-unclean at 25: crash-epoch-g with the
     *   leader epoch of the last record read (KIP-320), crash-plain-g
     *   without;
     * - node 2 is killed (SIGKILL) and node 1 stopped (a controlled
     *   shutdown; in ZooKeeper mode the ZooKeeper server is stopped by
     *   run.sh).
     */
    static void crash(Admin a) throws Exception {
        createTopic(a, "crash-all", Map.of(0, List.of(3, 2, 1)), Map.of());
        createTopic(a, "crash-one", Map.of(0, List.of(3, 2)), Map.of("min.insync.replicas", "1"));
        createTopic(a, "crash-unclean", Map.of(0, List.of(2, 3)),
            Map.of("min.insync.replicas", "1", "unclean.leader.election.enable", "true"));
        // The producers are made, and know their leaders (and the idempotent one its
        // producer id), before node 2 is paused: a request to the paused node would wait.
        KafkaProducer<String, String> idem = producer("crash-all-idempotent", Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
            ProducerConfig.LINGER_MS_CONFIG, 0, ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE,
            ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5));
        KafkaProducer<String, String> acks1 = producer("crash-one-acks1", Map.of(ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 0));
        produceBatched(idem, "crash-all", 0, 0, 20, 5, 3000, "acked-by-all");
        for (String t : List.of("crash-one", "crash-unclean")) {
            try (var pr = producer(t + "-producer", Map.of())) {
                produceBatched(pr, t, 0, 0, 20, 5, 3000, "acked-by-all");
            }
        }
        acks1.partitionsFor("crash-one");
        for (String t : CRASH_TOPICS) waitIsr(a, t, 0, t.equals("crash-all") ? 3 : 2, 60);
        note("crash: crash-all (3,2,1), crash-one (3,2), crash-unclean (2,3; unclean election on): 20 records each on every replica");

        // Node 2 is paused for about 2 s: well within its session (9 s in KRaft, 6 s of
        // ZooKeeper here), so that nobody removes it from an ISR.
        ctl("pause", "2");
        List<java.util.concurrent.Future<?>> resent = new ArrayList<>();
        try {
            for (int i = 20; i < 30; i++) {
                acks1.send(new ProducerRecord<>("crash-one", 0, BASE_TS + 3000 + i, "key-" + i, "acks1-leader-only-" + i)).get(5, TimeUnit.SECONDS);
            }
            for (int i = 20; i < 30; i++) {
                resent.add(idem.send(new ProducerRecord<>("crash-all", 0, BASE_TS + 3000 + i, "key-" + i, "unacked-" + i)));
            }
            Thread.sleep(1500); // node 1 fetches them (replica.fetch.wait.max.ms: 500 ms)
        } finally {
            ctl("kill", "3");
            ctl("resume", "2");
        }
        acks1.close(Duration.ofSeconds(5));
        for (var f : resent) f.get(120, TimeUnit.SECONDS);
        idem.close(Duration.ofSeconds(30));
        note("crash: node 2 paused; 10 records acks=1 on crash-one acknowledged by leader 3 alone; 10 idempotent records "
            + "on crash-all written by 3 and 1, unacknowledged; node 3 killed, node 2 resumed; the 10 re-sent to the new leader");

        waitIsr(a, "crash-unclean", 0, 1, 60);
        try (var pr = producer("crash-unclean-acks1", Map.of(ProducerConfig.ACKS_CONFIG, "1"))) {
            produceBatched(pr, "crash-unclean", 0, 20, 5, 5, 3000, "only-on-2");
        }
        Map<String, Long> commitAt = Map.of("crash-all", 30L, "crash-one", 20L, "crash-unclean", 25L);
        for (String g : CRASH_GROUPS.keySet()) {
            Map<TopicPartition, OffsetAndMetadata> m = new LinkedHashMap<>();
            for (String t : CRASH_TOPICS) {
                TopicPartition tp = new TopicPartition(t, 0);
                long at = commitAt.get(t);
                Optional<Integer> epoch = g.equals("crash-epoch-g") ? Optional.of(epochOfRecord(tp, at - 1)) : Optional.empty();
                m.put(tp, new OffsetAndMetadata(at, epoch, ""));
            }
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(g, "classic"))) {
                c.commitSync(m, Duration.ofSeconds(30));
            }
        }
        note("crash: 5 records acks=1 on crash-unclean on node 2 alone; crash-epoch-g and crash-plain-g commit crash-all 30, "
            + "crash-one 20, crash-unclean 25, with and without the leader epoch");
        ctl("kill", "2");
        ctl("stop", "1");
        note("crash: node 2 killed, node 1 stopped");
    }

    /** The leader epoch of the record at `offset` (read from the partition's leader). */
    static int epochOfRecord(TopicPartition tp, long offset) {
        Properties p = consumerProps("unused", "classic");
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            c.seek(tp, offset);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                    if (r.offset() == offset) return r.leaderEpoch().orElse(-1);
                }
            }
        }
        throw new IllegalStateException(tp + ": no record at " + offset);
    }

    /**
     * What the cluster restarted on the crashed directories serves, into
     * OUT/outcome.json: per crash partition its leader, replicas, ISR,
     * earliest and latest offsets, and every record it serves (offset and
     * key); per crash group and partition the committed offset and leader
     * epoch, and where a consumer of the group resuming with its
     * auto.offset.reset lands: the offset of the first record it receives,
     * or its position when none comes.
     */
    static void recordCrash(Admin a) throws Exception {
        List<TopicPartition> tps = CRASH_TOPICS.stream().map(t -> new TopicPartition(t, 0)).collect(Collectors.toList());
        var earliest = offsets(a, tps, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        var latest = offsets(a, tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        List<String> parts = new ArrayList<>();
        for (TopicPartition tp : tps) {
            var d = a.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic()).partitions().get(0);
            List<String> recs = new ArrayList<>();
            for (ConsumerRecord<String, String> r : readRecords(tp, latest.get(tp).offset())) {
                recs.add(String.format("[%d, %s]", r.offset(), js(r.key())));
            }
            parts.add(String.format("  {\"topic\": %s, \"partition\": 0, \"leader\": %d, \"replicas\": %s, \"isr\": %s, "
                    + "\"earliest\": %d, \"latest\": %d, \"records\": [%s]}",
                js(tp.topic()), d.leader() == null ? -1 : d.leader().id(),
                d.replicas().stream().map(n -> String.valueOf(n.id())).collect(Collectors.toList()),
                d.isr().stream().map(n -> n.id()).sorted().map(String::valueOf).collect(Collectors.toList()),
                earliest.get(tp).offset(), latest.get(tp).offset(), String.join(", ", recs)));
        }
        List<String> groups = new ArrayList<>();
        for (var g : CRASH_GROUPS.entrySet()) {
            var committed = a.listConsumerGroupOffsets(g.getKey()).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            Properties p = consumerProps(g.getKey(), "classic");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, g.getValue());
            Map<TopicPartition, Long> lands = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
                c.assign(tps);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
                while (System.nanoTime() < deadline && lands.size() < tps.size()) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                        lands.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                    }
                }
                for (TopicPartition tp : tps) {
                    if (!lands.containsKey(tp)) lands.put(tp, c.position(tp, Duration.ofSeconds(10)));
                }
            }
            List<String> rows = new ArrayList<>();
            for (TopicPartition tp : tps) {
                OffsetAndMetadata om = committed.get(tp);
                rows.add(String.format("{\"topic\": %s, \"partition\": 0, \"committed\": %d, \"leader_epoch\": %d, \"lands\": %d}",
                    js(tp.topic()), om == null ? -1 : om.offset(), om == null ? -1 : om.leaderEpoch().orElse(-1), lands.get(tp)));
            }
            groups.add(String.format("  {\"group\": %s, \"auto_offset_reset\": %s, \"offsets\": [\n    %s\n  ]}",
                js(g.getKey()), js(g.getValue()), String.join(",\n    ", rows)));
        }
        Files.writeString(out.resolve("outcome.json"), "{\"partitions\": [\n" + String.join(",\n", parts)
            + "\n], \"groups\": [\n" + String.join(",\n", groups) + "\n]}\n");
    }

    /** Every record of tp from the start to `end`, as a consumer reads them (read_uncommitted). */
    static List<ConsumerRecord<String, String>> readRecords(TopicPartition tp, long end) {
        Properties p = consumerProps("unused", "classic");
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        List<ConsumerRecord<String, String>> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.position(tp, Duration.ofSeconds(10)) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) seen.add(r);
            }
            if (c.position(tp, Duration.ofSeconds(10)) < end) throw new IllegalStateException(tp + ": position never reached " + end);
        }
        return seen;
    }

    // ---- Kafka tools in this JVM -------------------------------------------

    /** A `tools` line whose class starts with this records the tool's stderr too. */
    static final String STDERR_MARK = "stderr:";
    /** runTool's code when the tool's main threw. */
    static final int THREW = 99;

    /** OUTFILE's stderr file: `.txt` replaced by `.stderr.txt`. */
    static Path stderrFile(Path outFile) {
        String name = outFile.getFileName().toString();
        String base = name.endsWith(".txt") ? name.substring(0, name.length() - 4) : name;
        return outFile.resolveSibling(base + ".stderr.txt");
    }

    static int runTool(Path outFile, String cls, String... args) {
        return runTool(outFile, null, cls, args);
    }

    /**
     * Runs cls's main with args: its stdout to outFile; with errFile (not
     * null) its stderr to errFile, then `threw: ...` if main threw.
     */
    static int runTool(Path outFile, Path errFile, String cls, String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ByteArrayOutputStream errBuf = new ByteArrayOutputStream();
        PrintStream errPs = errFile == null ? oldErr : new PrintStream(errBuf, true, StandardCharsets.UTF_8);
        Throwable[] threw = {null};
        int[] code = {0};
        boolean[] exited = {false};
        // The first exit call is the tool's answer (MetadataShell catches the unwinding and exits again).
        setExitProcedure(c -> {
            if (!exited[0]) {
                code[0] = c;
                exited[0] = true;
            }
            throw new ToolExit();
        });
        try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            System.setOut(ps);
            if (errFile != null) System.setErr(errPs);
            // The Scala tools (DumpLogSegments up to 4.2) print through scala.Console, which keeps
            // its own streams (their println is Console.out; their errors go to System.err).
            scala.Console.withOut(ps, new scala.runtime.AbstractFunction0<Object>() {
                @Override
                public Object apply() {
                    return scala.Console.withErr(errPs, new scala.runtime.AbstractFunction0<Object>() {
                        @Override
                        public Object apply() {
                            try {
                                toolClass(cls).getMethod("main", String[].class).invoke(null, (Object) args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                if (!(e.getCause() instanceof ToolExit) && !exited[0]) {
                                    e.getCause().printStackTrace(oldOut);
                                    threw[0] = e.getCause();
                                    code[0] = THREW;
                                }
                            } catch (ReflectiveOperationException e) {
                                e.printStackTrace(oldOut);
                                code[0] = 98;
                            }
                            return null;
                        }
                    });
                }
            });
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
            if (errFile != null) errPs.close();
            resetExitProcedure();
        }
        try {
            Files.createDirectories(outFile.getParent());
            Files.write(outFile, buf.toByteArray());
            if (errFile != null) {
                byte[] err = errBuf.toByteArray();
                if (threw[0] != null) {
                    String sep = err.length > 0 && err[err.length - 1] != '\n' ? "\n" : "";
                    errBuf.write((sep + "threw: " + threw[0] + "\n").getBytes(StandardCharsets.UTF_8));
                    err = errBuf.toByteArray();
                }
                Files.write(errFile, err);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return code[0];
    }

    /**
     * A tool's class by its name in 4.1 and before; later releases moved some
     * (kafka.tools.DumpLogSegments is org.apache.kafka.tools.DumpLogSegments in 4.4).
     */
    static Class<?> toolClass(String cls) throws ClassNotFoundException {
        try {
            return Class.forName(cls);
        } catch (ClassNotFoundException e) {
            if (cls.startsWith("kafka.tools.")) return Class.forName("org.apache.kafka.tools." + cls.substring("kafka.tools.".length()));
            throw e;
        }
    }

    /** Kafka's Exit (org.apache.kafka.common.utils.Exit; from 4.4 in its internals package). */
    static Class<?> exitClass() throws ClassNotFoundException {
        try {
            return Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException e) {
            return Class.forName("org.apache.kafka.common.utils.Exit");
        }
    }

    /** Exit.setExitProcedure with a Procedure that hands the status code to ON_EXIT. */
    static void setExitProcedure(java.util.function.IntConsumer onExit) {
        try {
            Class<?> exit = exitClass();
            Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
            Object p = java.lang.reflect.Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure}, (self, m, args) -> {
                if (m.getDeclaringClass() == Object.class) {
                    return switch (m.getName()) {
                        case "hashCode" -> System.identityHashCode(self);
                        case "equals" -> self == args[0];
                        default -> "exit procedure";
                    };
                }
                onExit.accept((Integer) args[0]);
                return null;
            });
            exit.getMethod("setExitProcedure", procedure).invoke(null, p);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static void resetExitProcedure() {
        try {
            exitClass().getMethod("resetExitProcedure").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static final class ToolExit extends RuntimeException {
        ToolExit() {
            super(null, null, false, false);
        }
    }
}
