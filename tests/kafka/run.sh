#!/usr/bin/env bash
# tests/kafka/run.sh -- real Kafka as the oracle for klog's fixtures.
#
# Starts a 3-node cluster of one Apache Kafka release from Maven Central
# (each node in its own JVM; loopback ports only, in a temporary directory):
# KRaft for 4.x (node 1 broker and the one controller, nodes 2 and 3
# brokers), ZooKeeper mode for 3.x (a ZooKeeper server from the zookeeper
# jar kafka_2.13 depends on, and brokers 1, 2 and 3). Runs the scenarios of
# tests/kafka/src/main/java/klogoracle/Driver.java with the real Java
# clients (a release skips those it lacks), records Kafka's own answers
# (Admin API, kafka-consumer-groups, kafka-share-groups,
# kafka-streams-groups, kafka-transactions, kafka-get-offsets,
# kafka-dump-log, kafka-metadata-shell: the tool classes run with java -cp),
# kills one broker with SIGKILL in the middle of a produce loop, stops the
# other two, and copies the three log directories, trimmed, next to the
# answers, with expected/manifest.json saying which scenarios and answers
# the release has. Then two restarts: the writers scenario (the cluster
# restarted on what klog wrote) and the crash scenario (brokers killed
# mid-produce, a batch cut in half, the directories copied as crash/ and
# the cluster restarted on them: what Kafka did is the answer to klog's
# prediction).
#
# Usage:
#   tests/kafka/run.sh --kafka VERSION   regenerate fixtures/kafka-real/VERSION/ (review
#                                        the diff); VERSION: a release of the matrix
#                                        below, or any other Maven Central serves
#                                        (default: the newest of the matrix)
#   tests/kafka/run.sh --check           regenerate into a temporary directory and run
#                                        klog's kafka_real tests against it; the
#                                        committed fixtures are left as they are
#   tests/kafka/run.sh --out DIR         write the fixture tree to DIR
#   tests/kafka/run.sh --dump-log        no cluster: only re-record the kafka-dump-log answers
#                                        (expected/dump-log/) of the committed tree of
#                                        --kafka VERSION (or of --out DIR), from a copy of its
#                                        broker-*/ with the indexes at their real size
#                                        (index-sizes.tsv), as the full run records them
#   tests/kafka/run.sh --matrix          print the releases of the matrix, one a line
#   KEEP=1 tests/kafka/run.sh            keep the temporary directory (broker logs)
#
# Needs: java 17+, mvn (which resolves the release's jars into ~/.m2 itself on
# first use; Maven Central must be reachable then), bash, python3, cargo for
# --check. Every wait is bounded; whatever this script starts is stopped on
# exit, success or not.
set -euo pipefail

# The releases of the oracle matrix, oldest first; the last is the default
# (and the one .ci/run checks).
MATRIX=(3.9.2 4.0.2 4.1.1 4.2.2 4.3.2 4.4.0)

die() { echo "run.sh: $*" >&2; exit 2; }
log() { echo "[kafka $(date +%H:%M:%S)] $*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
CHECK=0
DUMP_ONLY=0
OUT=""
KAFKA_VERSION=${MATRIX[${#MATRIX[@]}-1]}
while (( $# )); do
    case "$1" in
        --check) CHECK=1 ;;
        --out) shift; OUT=${1:?--out needs a directory} ;;
        --kafka) shift; KAFKA_VERSION=${1:?--kafka needs a release, e.g. 4.4.0} ;;
        --dump-log) DUMP_ONLY=1 ;;
        --matrix) printf '%s\n' "${MATRIX[@]}"; exit 0 ;;
        -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done
[[ $KAFKA_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--kafka $KAFKA_VERSION: not a release number"
if (( CHECK && DUMP_ONLY )); then die "--check and --dump-log do not go together"; fi
# ZooKeeper mode for 3.x (the last releases that have it); 4.0 removed ZooKeeper.
if [[ $KAFKA_VERSION == 3.* ]]; then MODE=zookeeper; else MODE=kraft; fi
# __consumer_offsets: Kafka's default of 50 partitions in ZooKeeper mode (what such
# clusters have on disk), 3 in KRaft mode (smaller fixtures).
if [[ $MODE == zookeeper ]]; then OFFSETS_PARTITIONS=50; else OFFSETS_PARTITIONS=3; fi
version_at_least() {   # version_at_least 4.2: the release is 4.2 or later
    [[ $(printf '%s\n%s\n' "$1" "${KAFKA_VERSION%.*}" | sort -V | head -n1) == "$1" ]]
}

command -v java >/dev/null || die "java not found"
command -v mvn >/dev/null || die "mvn not found"
command -v python3 >/dev/null || die "python3 not found"

START_TS=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/klog-kafka.XXXXXX")
NODES=(1 2 3)

cleanup() {
    local rc=$?
    if [[ -f "$WORK/run/driver.pid" ]]; then
        # The driver runs under timeout(1), which passes SIGTERM on to the JVM.
        local dpid; dpid=$(cat "$WORK/run/driver.pid")
        kill -TERM "$dpid" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$dpid" 2>/dev/null || true
    fi
    for n in "${NODES[@]}" zk; do
        local pidf="$WORK/run/node-$n.pid"
        [[ -f "$pidf" ]] || continue
        local pid; pid=$(cat "$pidf")
        # A node still running here is left over from a failed or interrupted run: its
        # directory is thrown away, and a node that lost its quorum cannot shut down cleanly.
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
            for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        fi
    done
    if (( rc != 0 )); then
        for f in "$WORK"/logs/*.log; do
            [[ -f "$f" ]] || continue
            echo "---- last lines of $f" >&2
            tail -n 15 "$f" >&2 || true
        done
    fi
    if [[ "${KEEP:-0}" == 1 ]]; then
        log "kept $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if (( CHECK )); then
    OUT=${OUT:-$WORK/fixture}
else
    OUT=${OUT:-$REPO/fixtures/kafka-real/$KAFKA_VERSION}
fi
mkdir -p "$WORK/run" "$WORK/logs" "$WORK/classes"

# ---- the release's jars and the driver ----------------------------------------------
log "resolving the jars of Kafka $KAFKA_VERSION with mvn (first run downloads them into ~/.m2)"
ANSWERS=()   # the optional answers this release gives, for the manifest
mvn_cp() {
    timeout 900 mvn -q -B -f "$SCRIPT_DIR/pom.xml" dependency:build-classpath -Dkafka.version="$KAFKA_VERSION" \
        -Dmdep.outputFile="$WORK/cp.txt" "$@" >"$WORK/logs/mvn.log" 2>&1
}
# (kafka-dump-log alone needs no kafka-shell.)
if [[ $MODE == kraft ]] && (( ! DUMP_ONLY )) && mvn_cp -Pmetadata-shell; then
    ANSWERS+=(metadata-shell)
elif ! mvn_cp; then
    cat "$WORK/logs/mvn.log" >&2
    die "mvn could not resolve the classpath of Kafka $KAFKA_VERSION"
elif [[ $MODE == kraft ]] && (( ! DUMP_ONLY )); then
    log "Maven Central has no kafka-shell $KAFKA_VERSION: no kafka-metadata-shell answers"
fi
timeout 300 javac -nowarn -d "$WORK/classes" -cp "$(cat "$WORK/cp.txt")" "$SCRIPT_DIR"/src/main/java/klogoracle/*.java \
    2>"$WORK/logs/javac.log" || { cat "$WORK/logs/javac.log" >&2; die "the driver does not compile against Kafka $KAFKA_VERSION"; }
CP="$WORK/classes:$(cat "$WORK/cp.txt")"
JAVA_OPTS=(-Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
           -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.showDateTime=true)
jrun() { timeout 300 java "${JAVA_OPTS[@]}" -cp "$CP" "$@"; }   # short JVM runs, bounded

# ---- kafka-dump-log ------------------------------------------------------------------
# dump_log_lines ROOT DEST prints the `Driver tools` lines (tab-separated: output file,
# tool class, arguments) of kafka-dump-log on the files of ROOT/broker-*/ (the log
# directories as copied, indexes still at their real size), to run from ROOT so the paths
# Kafka prints are relative; the answers go under DEST (expected/dump-log), each named
# after the file it is about (fixtures/kafka-real/README.md lists the names). A class
# written stderr:CLASS records the tool's stderr too, in NAME.stderr.txt beside NAME.txt
# (empty when it printed none; `threw: EXCEPTION` last when its main threw).
find_in() {   # find_in DIR FIND-ARGS...: the paths find prints from DIR, without ./, sorted
    local dir=$1; shift
    (cd "$dir" && find . "$@" | sed 's:^\./::' | LC_ALL=C sort)
}
tsv() { (IFS=$'\t'; echo "$*"); }
dump_log_lines() {
    local root=$1 dest=$2 f part folder D=kafka.tools.DumpLogSegments api=org.apache.kafka.tools.api
    local E="stderr:$D"
    local -a extra idx
    # Every segment, with the internal topic's decoder flag.
    find_in "$root" -name '*.log' -path './broker-*/*' | while read -r f; do
        part=$(basename "$(dirname "$f")")
        extra=()
        case "$part" in
            __consumer_offsets-*) extra=(--offsets-decoder) ;;
            __transaction_state-*) extra=(--transaction-log-decoder) ;;
            __share_group_state-*) extra=(--share-group-state-decoder) ;;
            __cluster_metadata-*) extra=(--cluster-metadata-decoder) ;;
        esac
        tsv "$dest/${f%.log}.txt" "$D" --deep-iteration --print-data-log --files "$f" "${extra[@]}"
    done
    find_in "$root" -name '*.index' -path './broker-*/*' | while read -r f; do
        tsv "$dest/${f%.index}.index-sanity.txt" "$D" --index-sanity-check --files "$f"
    done
    # The entries of every offset and time index (the segment's .log beside it is read too).
    find_in "$root" \( -name '*.index' -o -name '*.timeindex' \) -path './broker-*/*' | while read -r f; do
        tsv "$dest/$f.txt" "$D" --files "$f"
    done
    # Producer-state snapshots and transaction indexes, and the KRaft snapshots.
    find_in "$root" \( -name '*.snapshot' -o -name '*.txnindex' \) -path './broker-*/*' | while read -r f; do
        tsv "$dest/$f.txt" "$E" --files "$f"
    done
    find_in "$root" -name '*.checkpoint' -path './broker-*/__cluster_metadata-0/*' | while read -r f; do
        tsv "$dest/$f.txt" "$E" --cluster-metadata-decoder --files "$f"
    done
    # --verify-index-only (the mismatches go to stderr once every file is read).
    find_in "$root" \( -name '*.index' -o -name '*.timeindex' \) -path './broker-*/*' | while read -r f; do
        tsv "$dest/$f.verify.txt" "$E" --verify-index-only --files "$f"
    done
    # Broker 1's data topics: each indexed position read with --max-message-size 100 (the
    # first batch of a 100-byte slice), and the segments through the decoder classes.
    find_in "$root" -name '*.index' -path './broker-1/*' ! -path './broker-1/__*' | while read -r f; do
        tsv "$dest/$f.max100.txt" "$E" --max-message-size 100 --files "$f"
    done
    find_in "$root" -name '*.log' -size +0 -path './broker-1/*' ! -path './broker-1/__*' | while read -r f; do
        tsv "$dest/${f%.log}.int-long.txt" "$E" --key-decoder-class "$api.IntegerDecoder" \
            --value-decoder-class "$api.LongDecoder" --files "$f"
        # --key-decoder-class without its (optional) value: StringDecoder, the default.
        tsv "$dest/${f%.log}.string.txt" "$E" --value-decoder-class "$api.StringDecoder" --key-decoder-class --files "$f"
        # 3.x still takes the deprecated kafka.serializer names (and says so on stdout).
        if [[ $KAFKA_VERSION == 3.* ]]; then
            tsv "$dest/${f%.log}.deprecated.txt" "$E" --value-decoder-class kafka.serializer.StringDecoder --files "$f"
        fi
    done
    # Several indexes in one run: the order of the files' stderr groups.
    find_in "$root" -mindepth 2 -maxdepth 2 -type d -path './broker-1/*' | while read -r folder; do
        mapfile -t idx < <(find_in "$root" -mindepth 3 -maxdepth 3 -name '*.index' -path "./$folder/*")
        (( ${#idx[@]} >= 2 )) || continue
        tsv "$dest/$folder/all.verify.txt" "$E" --verify-index-only --files "$(IFS=,; echo "${idx[*]}")"
    done
}
run_tools() {   # run_tools ROOT TSV: Driver tools TSV, from ROOT
    (cd "$1" && timeout 900 java "${JAVA_OPTS[@]}" -cp "$CP" klogoracle.Driver tools "$2") \
        >"$WORK/logs/tools.log" 2>&1 || { tail -n 40 "$WORK/logs/tools.log" >&2; log "warning: some Kafka tool invocations failed (see above)"; }
}

if (( DUMP_ONLY )); then
    # kafka-dump-log alone, on the committed tree: a copy of its broker-*/ with the trimmed
    # indexes grown back to their real size (index-sizes.tsv), as the full run has them
    # when it records (a trimmed all-zero index is "empty" to Kafka, a preallocated one is
    # not); then expected/dump-log/ is replaced with the new answers.
    [[ -d "$OUT/broker-1" && -f "$OUT/index-sizes.tsv" && -d "$OUT/expected" ]] \
        || die "$OUT: no fixture tree (broker-1/, index-sizes.tsv, expected/)"
    STAGE="$WORK/stage"
    mkdir -p "$STAGE"
    cp -a --sparse=always "$OUT"/broker-* "$STAGE/"
    python3 - "$STAGE" "$OUT/index-sizes.tsv" <<'PY'
import os, sys
root, sizes = sys.argv[1], sys.argv[2]
with open(sizes) as fh:
    for line in fh:
        if line.startswith("#") or not line.strip():
            continue
        path, size = line.rstrip("\n").split("\t")
        if path.startswith("broker-"):
            with open(os.path.join(root, path), "r+b") as f:
                f.truncate(int(size))
PY
    log "kafka-dump-log on $OUT (a copy, the indexes at their real size)"
    TOOLS="$WORK/run/dump-tools.tsv"
    dump_log_lines "$STAGE" "$WORK/dump-log" >"$TOOLS"
    run_tools "$STAGE" "$TOOLS"
    # Paths relative to the fixture root, as the full run writes them (--verify-index-only
    # names files by their absolute paths on stderr).
    REAL_STAGE=$(cd "$STAGE" && pwd -P)
    { grep -rlF -e "$STAGE" -e "$REAL_STAGE" "$WORK/dump-log" 2>/dev/null || true; } | while read -r f; do
        sed -i "s:$STAGE/::g; s:$REAL_STAGE/::g; s:$WORK:<work>:g" "$f"
    done
    rm -rf "$OUT/expected/dump-log"
    cp -a "$WORK/dump-log" "$OUT/expected/dump-log"
    log "$(wc -l <"$TOOLS") kafka-dump-log runs recorded in $OUT/expected/dump-log/ in $(( $(date +%s) - START_TS )) s"
    exit 0
fi

# ---- configuration -----------------------------------------------------------------
mapfile -t PORTS < <(jrun klogoracle.Driver ports 6)
(( ${#PORTS[@]} == 6 )) || die "could not find free loopback ports"
BOOTSTRAP="127.0.0.1:${PORTS[0]},127.0.0.1:${PORTS[1]},127.0.0.1:${PORTS[2]}"
CLUSTER_ID=a2xvZy1vcmFjbGUtMDAwMQ   # base64url of "klog-oracle-0001"
ZK_CONNECT="127.0.0.1:${PORTS[4]}"
for n in "${NODES[@]}"; do
    mkdir -p "$WORK/cluster/broker-$n"
    props="$WORK/run/node-$n.properties"
    if [[ $MODE == kraft ]]; then
        # Node 1 is broker and the one KRaft controller; nodes 2 and 3 are brokers only, so
        # either can be stopped or killed without costing the cluster its quorum.
        if (( n == 1 )); then
            roles=broker,controller
            listeners="PLAINTEXT://127.0.0.1:${PORTS[0]},CONTROLLER://127.0.0.1:${PORTS[3]}"
        else
            roles=broker
            listeners="PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}"
        fi
        printf '%s\n' "process.roles=$roles" "node.id=$n" "controller.quorum.voters=1@127.0.0.1:${PORTS[3]}" \
            "listeners=$listeners" controller.listener.names=CONTROLLER \
            listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT \
            "offsets.topic.num.partitions=$OFFSETS_PARTITIONS" \
            share.coordinator.state.topic.num.partitions=1 share.coordinator.state.topic.replication.factor=3 \
            share.coordinator.state.topic.min.isr=2 >"$props"
    else
        # ZooKeeper mode: broker.id N; offsets.topic.num.partitions left at its default (50).
        # A short ZooKeeper session, so that a killed broker's ephemeral znodes (and its
        # leaderships) go within 6 s.
        printf '%s\n' "broker.id=$n" "zookeeper.connect=$ZK_CONNECT" zookeeper.session.timeout.ms=6000 \
            "listeners=PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}" >"$props"
    fi
    # Indexes are preallocated to 64 KiB (log.index.size.max.bytes; 10 MiB by default):
    # the killed broker keeps every active segment's preallocated index, and reading
    # 10 MiB of zeros per index made the tests slow without showing anything more.
    # No time retention (log.retention.ms=-1; 7 days by default): the records carry
    # timestamps from BASE (2026-01-01), so a broker restarted on them later would
    # delete every rolled segment at its first retention check, which
    # log.initial.task.delay.ms=0 runs as it starts, racing the snapshots taken
    # after a restart.
    printf '%s\n' "advertised.listeners=PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}" \
        inter.broker.listener.name=PLAINTEXT "log.dirs=$WORK/cluster/broker-$n" auto.create.topics.enable=false \
        num.partitions=1 default.replication.factor=3 min.insync.replicas=2 \
        offsets.topic.replication.factor=3 \
        transaction.state.log.num.partitions=2 transaction.state.log.replication.factor=3 \
        transaction.state.log.min.isr=2 transaction.abort.timed.out.transaction.cleanup.interval.ms=1000 \
        group.initial.rebalance.delay.ms=0 log.cleaner.backoff.ms=500 log.segment.delete.delay.ms=1000 \
        log.initial.task.delay.ms=0 num.io.threads=2 num.network.threads=2 num.replica.fetchers=1 \
        background.threads=4 log.index.size.max.bytes=65536 log.retention.ms=-1 >>"$props"
done
if [[ $MODE == zookeeper ]]; then
    mkdir -p "$WORK/zookeeper"
    printf '%s\n' "dataDir=$WORK/zookeeper" "clientPort=${PORTS[4]}" clientPortAddress=127.0.0.1 tickTime=1000 \
        maxClientCnxns=0 admin.enableServer=false >"$WORK/run/zookeeper.properties"
fi

# ---- control of the nodes (also used by the driver) ---------------------------------
# The log directories stay in $WORK/cluster after the nodes stop: `ctl.sh start N`
# restarts a node on them, and `Driver record` records the answers of a cluster as it
# stands, so a step that changes the stopped directories fits between the two.
cat >"$WORK/run/ctl.sh" <<EOF
#!/usr/bin/env bash
# ctl.sh start|stop|kill|pause|resume N   (N: 1, 2, 3, or zk for the ZooKeeper server)
set -euo pipefail
n=\$2; pidf="$WORK/run/node-\$n.pid"
case "\$1" in
  start)
    if [[ \$n == zk ]]; then
      java ${JAVA_OPTS[*]} -cp "$CP" org.apache.zookeeper.server.ZooKeeperServerMain "$WORK/run/zookeeper.properties" >>"$WORK/logs/zookeeper.log" 2>&1 &
    else
      # At INFO: the writers scenario searches what the brokers log of truncation and recovery.
      java ${JAVA_OPTS[*]} -Dorg.slf4j.simpleLogger.defaultLogLevel=info -cp "$CP" kafka.Kafka "$WORK/run/node-\$n.properties" >>"$WORK/logs/node-\$n.log" 2>&1 &
    fi
    echo \$! >"\$pidf" ;;
  stop)
    pid=\$(cat "\$pidf"); kill -TERM "\$pid" 2>/dev/null || exit 0
    for _ in \$(seq 1 120); do kill -0 "\$pid" 2>/dev/null || exit 0; sleep 0.5; done
    echo "node \$n did not stop within 60 s: SIGKILL" >&2; kill -KILL "\$pid" ;;
  pause) kill -STOP "\$(cat "\$pidf")" ;;
  resume) kill -CONT "\$(cat "\$pidf")" ;;
  kill)
    pid=\$(cat "\$pidf"); kill -CONT "\$pid" 2>/dev/null || true; kill -KILL "\$pid"
    for _ in \$(seq 1 40); do kill -0 "\$pid" 2>/dev/null || exit 0; sleep 0.25; done
    exit 1 ;;
esac
EOF
chmod +x "$WORK/run/ctl.sh"
export KLOG_ORACLE_CTL="$WORK/run/ctl.sh"
export KLOG_ORACLE_RELEASE="$KAFKA_VERSION" KLOG_ORACLE_MODE="$MODE" \
       KLOG_ORACLE_OFFSETS_PARTITIONS="$OFFSETS_PARTITIONS" KLOG_ORACLE_DATA="$WORK/cluster"

start_zk() {   # start the ZooKeeper server and wait (bounded) until it listens
    "$KLOG_ORACLE_CTL" start zk
    local up=0
    for _ in $(seq 1 120); do
        if (exec 3<>"/dev/tcp/127.0.0.1/${PORTS[4]}") 2>/dev/null; then up=1; break; fi
        sleep 0.5
    done
    (( up )) || die "ZooKeeper did not listen on $ZK_CONNECT within 60 s"
}

if [[ $MODE == kraft ]]; then
    # Share groups: a preview in 4.1 (share.version=1 asked for by hand), production
    # from 4.2; streams groups (streams.version=1) from 4.2. Both named, not left to
    # defaults (ShareVersion, StreamsVersion).
    FEATURES=()
    if version_at_least 4.1; then FEATURES+=(--feature share.version=1); fi
    if version_at_least 4.2; then FEATURES+=(--feature streams.version=1); fi
    log "formatting 3 KRaft nodes (Kafka $KAFKA_VERSION${FEATURES[*]:+, ${FEATURES[*]}}) in $WORK"
    for n in "${NODES[@]}"; do
        jrun kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$WORK/run/node-$n.properties" \
            "${FEATURES[@]}" >>"$WORK/logs/format.log" 2>&1 || die "format of node $n failed"
    done
else
    log "starting ZooKeeper on $ZK_CONNECT (Kafka $KAFKA_VERSION in ZooKeeper mode) in $WORK"
    start_zk
    # A ZooKeeper-mode broker adopts the cluster id it finds in /cluster/id (KafkaZkClient).
    for znode in "/cluster x" "/cluster/id {\"version\":\"1\",\"id\":\"$CLUSTER_ID\"}"; do
        # shellcheck disable=SC2086
        jrun org.apache.zookeeper.ZooKeeperMain -server "$ZK_CONNECT" create $znode >>"$WORK/logs/zookeeper-shell.log" 2>&1 \
            || die "could not write /cluster/id: $(tail -n 5 "$WORK/logs/zookeeper-shell.log")"
    done
fi
for n in "${NODES[@]}"; do "$KLOG_ORACLE_CTL" start "$n"; done
log "waiting (at most 120 s) for 3 brokers on $BOOTSTRAP"
jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 3 120 2>"$WORK/logs/wait-ready.log" \
    || die "the cluster did not come up within 120 s"
log "cluster up after $(( $(date +%s) - START_TS )) s; running the scenarios"

EXPECTED="$WORK/expected"
mkdir -p "$EXPECTED"
timeout 900 java "${JAVA_OPTS[@]}" -cp "$CP" klogoracle.Driver scenarios "$BOOTSTRAP" "$EXPECTED" \
    >"$WORK/logs/driver.log" 2>&1 &
echo $! >"$WORK/run/driver.pid"
wait "$(cat "$WORK/run/driver.pid")" || { cat "$WORK/logs/driver.log" >&2; die "the scenarios failed"; }
rm -f "$WORK/run/driver.pid"
grep '^\[driver\]' "$WORK/logs/driver.log" >&2 || true

# ---- copy the log directories, trimmed -------------------------------------------
STAGE="$WORK/stage"
mkdir -p "$STAGE"
copy_dirs() {   # copy_dirs broker-N...: the folders the tests need, sparse files kept sparse
    python3 - "$WORK/cluster" "$STAGE" "$@" <<'PY'
import os, subprocess, sys
src, dst, brokers = sys.argv[1], sys.argv[2], sys.argv[3:]
KEEP_TOP = {"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
            "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".kafka_cleanshutdown"}
for b in brokers:
    for name in sorted(os.listdir(os.path.join(src, b))):
        s = os.path.join(src, b, name)
        d = os.path.join(dst, b, name)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if os.path.isdir(s):
            # Folders of deleted topics (`-delete`) and future replicas are left behind;
            # the metadata log is kept on broker 1 only.
            if name.endswith("-delete") or name.endswith("-future"):
                continue
            if name == "__cluster_metadata-0" and b != "broker-1":
                continue
            subprocess.run(["cp", "-a", "--sparse=always", s, d], check=True)
        elif name in KEEP_TOP:
            subprocess.run(["cp", "-a", s, d], check=True)
PY
}
# Node 3 was killed with SIGKILL by the driver: its folder is copied as it was left.
log "copying node 3's log directory as the SIGKILL left it"
copy_dirs broker-3
log "stopping nodes 2 and 1 (controlled shutdown)"
"$KLOG_ORACLE_CTL" stop 2
"$KLOG_ORACLE_CTL" stop 1
if [[ $MODE == zookeeper ]]; then "$KLOG_ORACLE_CTL" stop zk; fi
log "copying the log directories of nodes 1 and 2"
copy_dirs broker-1 broker-2

# kafka-dump-log on the files of broker-*/ (dump_log_lines, above) and kafka-metadata-shell, from
# the fixture root so the paths printed are relative.
TOOLS="$WORK/run/dump-tools.tsv"
dump_log_lines "$STAGE" "$EXPECTED/dump-log" >"$TOOLS"
if [[ " ${ANSWERS[*]} " == *" metadata-shell "* ]]; then
    META="broker-1/__cluster_metadata-0/00000000000000000000.log"
    for cmd in "ls /image/topics/byName" "ls /image/features" "find /image/topics/byName" "cat /image/features/metadataVersion"; do
        name=$(echo "$cmd" | tr ' /' '__' | sed 's/__*/_/g; s/^_//')
        printf '%s\t%s\t%s\t%s\t%s\n' "$EXPECTED/metadata-shell/$name.txt" org.apache.kafka.shell.MetadataShell \
            --snapshot "$META" "${cmd// /$'\t'}" >>"$TOOLS"
    done
fi
run_tools "$STAGE" "$TOOLS"

# ---- the writers scenario ------------------------------------------------------------
# klog writes into the stopped cluster's log directories, every replica's directory given
# to every write, as an operator would; then the cluster restarts on what klog wrote.
# Kafka's answers after the restart (expected/writers/) and what the brokers logged say
# whether they took klog's batches as their own; writers/after-klog/ holds the partition
# folders as klog left them, writers/after-restart/ the same folders after the restarted
# cluster's controlled shutdown. The writes:
#   reset-offsets --to-earliest --execute    classic-g on plain
#   reset-offsets --shift-by -3 --execute    consumer-g (KIP-848; 4.x) on plain
#   commit                                   a new group, klog-commit-g, plain-0 = 7
#   tombstone --topic --partition            codecs-g's codecs-3
#   tombstone --delete-group                 reset-ts-g
#   verify-crc --repair --salvage            codecs-0, one byte of its second batch flipped
#                                            alike on every replica
#   verify-crc --repair                      codecs-1 on node 2, a torn batch header after
#                                            its last batch
KLOG="$REPO/target/debug/klog"
W="$WORK/writers"
WE="$EXPECTED/writers"
mkdir -p "$W" "$WE"
log "writers: building klog"
(cd "$REPO" && cargo build --quiet --bin klog) >"$WORK/logs/cargo-build.log" 2>&1 \
    || { cat "$WORK/logs/cargo-build.log" >&2; die "cargo build failed"; }
start_cluster() {
    if [[ $MODE == zookeeper ]]; then start_zk; fi
    for n in "${NODES[@]}"; do "$KLOG_ORACLE_CTL" start "$n"; done
    jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 3 120 2>>"$WORK/logs/wait-ready.log" \
        || die "the cluster did not come up again within 120 s"
    jrun klogoracle.Driver wait-in-sync "$BOOTSTRAP" 180 2>>"$WORK/logs/wait-ready.log" \
        || die "the replicas were not all in sync within 180 s: $(tail -n 1 "$WORK/logs/wait-ready.log")"
}
stop_cluster() {   # brokers first, node 1 (the KRaft controller) last
    "$KLOG_ORACLE_CTL" stop 3
    "$KLOG_ORACLE_CTL" stop 2
    "$KLOG_ORACLE_CTL" stop 1
    if [[ $MODE == zookeeper ]]; then "$KLOG_ORACLE_CTL" stop zk; fi
}
log "writers: restarting the cluster until node 3 has caught up, then stopping every node"
# This is node 3's first start since the SIGKILL, on the directory copied as broker-3/:
# what its LogLoader recovered and what each log loaded is Kafka's own answer to
# `klog verify-crc --recovery-preview broker-3` (expected/restart/node-3.log; the
# temporary directory's path is written as broker-3).
RESTART_FROM=$(( $(wc -l <"$WORK/logs/node-3.log") + 1 ))
start_cluster
mkdir -p "$EXPECTED/restart"
tail -n +"$RESTART_FROM" "$WORK/logs/node-3.log" \
    | grep -E 'Recovering unflushed segment|Completed load of Log|Skipping recovery of|since clean shutdown' \
    | sed "s#$WORK/cluster/##g" >"$EXPECTED/restart/node-3.log" || true
[[ -s "$EXPECTED/restart/node-3.log" ]] || die "node 3's restart logged no log loading (expected/restart/node-3.log is empty)"
ANSWERS+=(restart)
stop_cluster

# Every file of the three log directories: path, size and SHA-256.
snapshot() {
    python3 - "$WORK/cluster" >"$1" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
for dirpath, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        p = os.path.join(dirpath, f)
        with open(p, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        print("%s\t%d\t%s" % (os.path.relpath(p, root), os.path.getsize(p), digest))
PY
}
snapshot "$W/before-damage.tsv"

# The damage, written here byte by byte (not by klog).
python3 - "$WORK/cluster" <<'PY'
import struct, sys
root = sys.argv[1]
def batches(data):
    pos, out = 0, []
    while pos + 12 <= len(data):
        n = struct.unpack(">i", data[pos + 8:pos + 12])[0]
        out.append((pos, 12 + n))
        pos += 12 + n
    return out
for b in ("broker-1", "broker-2", "broker-3"):
    seg = "%s/%s/codecs-0/00000000000000000000.log" % (root, b)
    with open(seg, "r+b") as fh:
        data = fh.read()
        start, size = batches(data)[1]
        at = start + size - 3      # a byte of the batch's last record's value
        fh.seek(at)
        fh.write(bytes([data[at] ^ 0xFF]))
seg = "%s/broker-2/codecs-1/00000000000000000000.log" % root
with open(seg, "r+b") as fh:
    data = fh.read()
    start, size = batches(data)[-1]
    last = data[start:start + size]
    delta = struct.unpack(">i", last[23:27])[0]
    torn = struct.pack(">q", struct.unpack(">q", last[0:8])[0] + delta + 1) + last[8:40]
    fh.seek(len(data))
    fh.write(torn)             # a batch whose write stopped 40 bytes in
PY
snapshot "$W/after-damage.tsv"

DIRS=("$WORK/cluster/broker-1" "$WORK/cluster/broker-2" "$WORK/cluster/broker-3")
# A writer takes one broker's log directory and every other replica's with --replica.
WDIRS=("${DIRS[0]}" --replica "${DIRS[1]}" --replica "${DIRS[2]}")
# Without KRaft metadata (ZooKeeper mode) a writer is told the partition count and how many
# replicas the offsets partition has (offsets.topic.replication.factor=3).
OPARTS=()
if [[ $MODE == zookeeper ]]; then OPARTS=(--offsets-partitions "$OFFSETS_PARTITIONS" --replication-factor 3); fi
: >"$WE/klog.txt"
klog_w() {   # klog_w RC ARGS...: run klog, record the command, its exit code and its output
    # (a repair exits 0 when what it leaves verifies clean)
    local want=$1; shift
    local rc=0
    "$KLOG" "$@" >"$WORK/run/klog.out" 2>"$WORK/run/klog.err" || rc=$?
    { echo "\$ klog $*"; echo "exit $rc"; sed 's/^/stdout: /' "$WORK/run/klog.out"; sed 's/^/stderr: /' "$WORK/run/klog.err"; echo; } >>"$WE/klog.txt"
    (( rc == want )) || { cat "$WORK/run/klog.err" >&2; die "klog $1 exited $rc, not $want"; }
}
log "writers: klog writes into the stopped cluster's directories"
klog_w 0 reset-offsets "${WDIRS[@]}" "${OPARTS[@]}" --group classic-g --topic plain --to-earliest --execute
WROTE=(reset-earliest)
if grep -qx consumer-group "$EXPECTED/scenarios.txt"; then
    klog_w 0 reset-offsets "${WDIRS[@]}" "${OPARTS[@]}" --group consumer-g --topic plain --shift-by -3 --execute
    WROTE+=(reset-shift)
fi
klog_w 0 commit "${WDIRS[@]}" "${OPARTS[@]}" --group klog-commit-g --topic plain --partition 0 --offset 7
klog_w 0 tombstone "${WDIRS[@]}" "${OPARTS[@]}" --group codecs-g --topic codecs --partition 3
klog_w 0 tombstone "${WDIRS[@]}" "${OPARTS[@]}" --group reset-ts-g --delete-group
klog_w 0 verify-crc --repair --salvage "${DIRS[0]}/codecs-0" "${DIRS[1]}/codecs-0" "${DIRS[2]}/codecs-0"
klog_w 0 verify-crc --repair "${DIRS[1]}/codecs-1"
WROTE+=(commit tombstone delete-group salvage repair)
# What klog predicts, and its verdict on the directories it wrote.
klog_w 0 verify-crc "${DIRS[@]}"
"$KLOG" replay-offsets "${DIRS[0]}" --format json >"$WE/klog-replay-offsets.json"
# The log end klog left in each offsets partition (the Driver waits for the restarted
# cluster's high watermarks to reach them before it records).
KLOG_WRITERS_ENDS=$({ "$KLOG" info --format json "${DIRS[0]}" || true; } | python3 -c '
import json, sys
doc = json.load(sys.stdin)
print(" ".join("%s-%d=%d" % (p["topic"], p["partition"], p["log_end_offset"])
               for d in doc["directories"] for p in d["partitions"]
               if p["topic"] == "__consumer_offsets" and p.get("log_end_offset") is not None))')
export KLOG_WRITERS_ENDS
snapshot "$W/after-klog.tsv"

# The partition folders the damage or klog changed, with each broker's top-level files.
copy_written() {   # copy_written DEST
    python3 - "$WORK/cluster" "$1" "$W/before-damage.tsv" "$W/after-klog.tsv" <<'PY'
import os, subprocess, sys
root, dest, before, after = sys.argv[1:5]
def load(p):
    with open(p) as fh:
        return {l.split("\t")[0]: l.split("\t", 1)[1] for l in fh.read().splitlines()}
b, a = load(before), load(after)
folders = sorted({os.path.dirname(p) for p in set(a) | set(b) if a.get(p) != b.get(p) and "/" in os.path.dirname(p)})
for broker in ("broker-1", "broker-2", "broker-3"):
    os.makedirs(os.path.join(dest, broker), exist_ok=True)
    for name in sorted(os.listdir(os.path.join(root, broker))):
        s = os.path.join(root, broker, name)
        if os.path.isfile(s):
            subprocess.run(["cp", "-a", s, os.path.join(dest, broker, name)], check=True)
for f in folders:
    if os.path.isdir(os.path.join(root, f)):
        subprocess.run(["cp", "-a", "--sparse=always", os.path.join(root, f), os.path.join(dest, f)], check=True)
PY
}
copy_written "$W/after-klog"

# The cluster on what klog wrote: only what the brokers log from here on is searched.
declare -A LOG_LINES=()
for n in "${NODES[@]}"; do LOG_LINES[$n]=$(wc -l <"$WORK/logs/node-$n.log"); done
log "writers: restarting the cluster on what klog wrote"
start_cluster
jrun klogoracle.Driver record-writers "$BOOTSTRAP" "$WE" codecs-0 codecs-1 plain-0 >>"$WORK/logs/driver.log" 2>&1 \
    || { tail -n 40 "$WORK/logs/driver.log" >&2; die "recording Kafka's answers after klog's writes failed"; }
stop_cluster
copy_written "$W/after-restart"
# What the brokers said of the logs klog wrote: truncation, recovery, invalid or corrupt
# batches, record versions they do not know, and every ERROR.
for n in "${NODES[@]}"; do
    tail -n +"$(( LOG_LINES[$n] + 1 ))" "$WORK/logs/node-$n.log" \
        | grep -E 'Truncat|Recovering|Found invalid|[Cc]orrupt|UnknownRecordVersion|Unknown record|ERROR' \
        | sed "s/^/node-$n: /" || true
done >"$WE/broker-log.txt"
printf '%s\n' "${WROTE[@]}" >"$WE/writes.txt"
# Every file klog's writes changed (path, size before or -1, size after or -1): klog
# touches the partitions it writes and nothing else.
python3 - "$W/after-damage.tsv" "$W/after-klog.tsv" >"$WE/changed-by-klog.tsv" <<'PY'
import sys
def load(p):
    with open(p) as fh:
        return {l.split("\t")[0]: l.split("\t")[1:] for l in fh.read().splitlines()}
b, a = load(sys.argv[1]), load(sys.argv[2])
for p in sorted(set(a) | set(b)):
    if a.get(p) != b.get(p):
        print("%s\t%s\t%s" % (p, b[p][0] if p in b else -1, a[p][0] if p in a else -1))
PY
rm -f "$W/before-damage.tsv" "$W/after-damage.tsv" "$W/after-klog.tsv"
ANSWERS+=(writers)
log "writers: done ($(wc -l <"$WE/broker-log.txt") broker log line(s) of note)"

# ---- the crash scenario --------------------------------------------------------------
# Driver.crash() brings the three nodes down as a crash would (see its comment): node 3
# killed mid-produce, node 2 killed, node 1 stopped. Then node 3's copy of crash-one-0
# loses the second half of its last batch (a write cut mid-batch, written here byte by
# byte), the directories are copied as crash/broker-N (what klog predicts from), and
# the cluster restarts in a chosen order: node 1, then node 3 (which the controller may
# elect uncleanly for crash-unclean), then node 2. What the restarted cluster serves
# (expected/crash/outcome.json) and what the brokers logged of the crash partitions
# (expected/crash/broker-log.txt) are Kafka's answer to `klog cluster crash/broker-*`.
CE="$EXPECTED/crash"
mkdir -p "$CE"
log "crash: starting the cluster for the crash scenario"
start_cluster
timeout 600 java "${JAVA_OPTS[@]}" -cp "$CP" klogoracle.Driver crash "$BOOTSTRAP" "$CE" >>"$WORK/logs/driver.log" 2>&1 \
    || { tail -n 40 "$WORK/logs/driver.log" >&2; die "the crash scenario failed"; }
if [[ $MODE == zookeeper ]]; then "$KLOG_ORACLE_CTL" stop zk; fi
python3 - "$WORK/cluster/broker-3/crash-one-0" <<'PY'
import os, struct, sys
folder = sys.argv[1]
seg = os.path.join(folder, sorted(f for f in os.listdir(folder) if f.endswith(".log"))[-1])
with open(seg, "r+b") as fh:
    data = fh.read()
    pos, last = 0, None
    while pos + 12 <= len(data):
        n = struct.unpack(">i", data[pos + 8:pos + 12])[0]
        if n <= 0 or pos + 12 + n > len(data):
            break
        last = (pos, 12 + n)
        pos += 12 + n
    start, size = last
    fh.truncate(start + size // 2)
PY
python3 - "$WORK/cluster" "$STAGE/crash" <<'PY'
import os, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
TOP = {"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
       "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".kafka_cleanshutdown"}
for b in ("broker-1", "broker-2", "broker-3"):
    os.makedirs(os.path.join(dst, b))
    for name in sorted(os.listdir(os.path.join(src, b))):
        s, d = os.path.join(src, b, name), os.path.join(dst, b, name)
        if name in TOP or name.startswith("crash-") or name.startswith("__consumer_offsets-") \
                or (name == "__cluster_metadata-0" and b == "broker-1"):
            subprocess.run(["cp", "-a", "--sparse=always", s, d], check=True)
PY
declare -A CRASH_FROM=()
for n in "${NODES[@]}"; do CRASH_FROM[$n]=$(( $(wc -l <"$WORK/logs/node-$n.log") + 1 )); done
log "crash: restarting node 1, then node 3, then node 2"
if [[ $MODE == zookeeper ]]; then start_zk; fi
"$KLOG_ORACLE_CTL" start 1
jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 1 120 2>>"$WORK/logs/wait-ready.log" || die "node 1 did not come back within 120 s"
"$KLOG_ORACLE_CTL" start 3
jrun klogoracle.Driver wait-leader "$BOOTSTRAP" crash-unclean 0 3 90 2>>"$WORK/logs/wait-ready.log" \
    || log "crash: node 3 was not elected leader of crash-unclean-0 (see expected/crash/outcome.json)"
"$KLOG_ORACLE_CTL" start 2
jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 3 120 2>>"$WORK/logs/wait-ready.log" || die "node 2 did not come back within 120 s"
jrun klogoracle.Driver wait-in-sync "$BOOTSTRAP" 180 2>>"$WORK/logs/wait-ready.log" \
    || die "after the crash, the replicas were not all in sync within 180 s: $(tail -n 1 "$WORK/logs/wait-ready.log")"
timeout 300 java "${JAVA_OPTS[@]}" -cp "$CP" klogoracle.Driver record-crash "$BOOTSTRAP" "$CE" >>"$WORK/logs/driver.log" 2>&1 \
    || { tail -n 40 "$WORK/logs/driver.log" >&2; die "recording the crash's outcome failed"; }
for n in "${NODES[@]}"; do
    tail -n +"${CRASH_FROM[$n]}" "$WORK/logs/node-$n.log" | grep -E 'crash-(all|one|unclean)-0' \
        | grep -E 'Truncat|Recover|[Ii]nvalid|[Cc]orrupt|Completed load|[Uu]nclean|ELR|leader epoch|Found' \
        | sed "s#$WORK/cluster/##g; s/^/node-$n: /" || true
done >"$CE/broker-log.txt"
stop_cluster
ANSWERS+=(crash)
log "crash: done ($(wc -l <"$CE/broker-log.txt") broker log line(s) of the crash partitions)"

# Trim the preallocated indexes to their used part; record the real sizes.
python3 - "$STAGE" <<'PY'
import os, sys
root = sys.argv[1]
rows = []
for dirpath, _, files in os.walk(root):
    for f in files:
        if not (f.endswith(".index") or f.endswith(".timeindex")):
            continue
        p = os.path.join(dirpath, f)
        size = os.path.getsize(p)
        entry = 8 if f.endswith(".index") else 12
        with open(p, "rb") as fh:
            data = fh.read()
        used = len(data.rstrip(b"\0"))
        used = (used + entry - 1) // entry * entry
        if used != size:
            with open(p, "r+b") as fh:
                fh.truncate(used)
            rows.append((os.path.relpath(p, root), size))
with open(os.path.join(root, "index-sizes.tsv"), "w") as fh:
    fh.write("# path\treal size in bytes (the file holds its used part; tests restore the size with set_len)\n")
    for path, size in sorted(rows):
        fh.write("%s\t%d\n" % (path, size))
PY

# Paths in the recorded answers are relative to the fixture root; nothing else names $WORK.
{ grep -rl "$WORK" "$EXPECTED" 2>/dev/null || true; } | while read -r f; do sed -i "s:$WORK/stage/::g; s:$WORK:<work>:g" "$f"; done
printf 'kafka %s\ncluster id %s\n' "$KAFKA_VERSION" "$CLUSTER_ID" >"$EXPECTED/VERSION"
# The manifest: what this release's tree holds, for the tests (which compare what is there
# and say what a release lacks, never guess it).
python3 - "$EXPECTED" "$KAFKA_VERSION" "$MODE" "$CLUSTER_ID" "$OFFSETS_PARTITIONS" "${ANSWERS[@]}" <<'PY'
import json, os, sys
expected, version, mode, cluster_id, partitions, answers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:]
with open(os.path.join(expected, "scenarios.txt")) as fh:
    scenarios = [l.strip() for l in fh if l.strip()]
os.remove(os.path.join(expected, "scenarios.txt"))
manifest = {"kafka": version, "mode": mode, "cluster_id": cluster_id,
            "consumer_offsets_partitions": partitions, "scenarios": scenarios, "answers": sorted(answers)}
with open(os.path.join(expected, "manifest.json"), "w") as fh:
    json.dump(manifest, fh, indent=2)
    fh.write("\n")
PY

rm -rf "$OUT/broker-1" "$OUT/broker-2" "$OUT/broker-3" "$OUT/crash" "$OUT/expected" "$OUT/writers"
mkdir -p "$OUT"
cp -a "$STAGE"/broker-* "$STAGE/crash" "$STAGE/index-sizes.tsv" "$OUT/"
cp -a "$WORK/writers" "$OUT/writers"
cp -a "$EXPECTED" "$OUT/expected"
log "fixture tree written to $OUT ($(du -sh --apparent-size "$OUT" | cut -f1)) in $(( $(date +%s) - START_TS )) s"

if (( CHECK )); then
    log "checking klog against the fresh answers (cargo test --test cli kafka_real:: kafka_crash:: kafka_dump:: kafka_dump_files:: kafka_writers::)"
    (cd "$REPO" && KLOG_KAFKA_REAL="$OUT" cargo test --quiet --test cli -- kafka_real:: kafka_crash:: kafka_dump:: kafka_dump_files:: kafka_writers:: --test-threads=2)
    log "klog agrees with Kafka $KAFKA_VERSION ($(( $(date +%s) - START_TS )) s in all)"
fi
