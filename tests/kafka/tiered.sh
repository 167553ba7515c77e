#!/usr/bin/env bash
# tests/kafka/tiered.sh -- real Kafka with tiered storage (KIP-405) as the oracle.
#
# Starts a 3-node KRaft cluster of one Apache Kafka release from Maven Central
# (node 1 broker and the one controller, nodes 2 and 3 brokers; loopback only,
# in a temporary directory), configured as run.sh configures its clusters and
# with remote storage on: Kafka's test-only LocalTieredStorage (the
# kafka-storage *test* jar, loaded through remote.log.storage.manager.class.path)
# writes the "remote" segments into one local folder all brokers share, and the
# default TopicBasedRemoteLogMetadataManager keeps their metadata in
# `__remote_log_metadata` (2 partitions, replication factor 3). Runs
# tests/kafka/src/tiered/java/klogoracle/Tiered.java (with Driver.java's helpers):
# topics whose older segments, two transactions among them, live in remote
# storage only, groups committed in the remote range, and DeleteRecords on a
# tiered topic; records Kafka's answers (ListOffsets earliest / earliest-local /
# latest-tiered / latest, committed offsets, where a consumer resumes, what
# consumers read, kafka-consumer-groups, kafka-transactions, kafka-get-offsets),
# stops the cluster, copies the log directories and the remote storage folder,
# runs kafka-dump-log on them (`--remote-log-metadata-decoder` on
# `__remote_log_metadata`), restarts the cluster on the directories and records
# what it loaded and serves, and writes fixtures/kafka-tiered/VERSION/.
#
# LocalTieredStorage is in the kafka-storage test jar of 4.3.2 and not in
# 4.4.0's: the default release is 4.3.2.
#
# Usage:
#   tests/kafka/tiered.sh [--kafka VERSION]   regenerate fixtures/kafka-tiered/VERSION/
#   tests/kafka/tiered.sh --out DIR           write the fixture tree to DIR
#   tests/kafka/tiered.sh --check             regenerate into a temporary directory and run
#                                             klog's kafka_tiered tests against it
#   KEEP=1 tests/kafka/tiered.sh              keep the temporary directory (broker logs)
#
# Needs java 17+, mvn (Maven Central reachable on first use), python3, cargo
# for --check. Every wait is bounded; whatever this script starts is stopped
# on exit, success or not.
set -euo pipefail

die() { echo "tiered.sh: $*" >&2; exit 2; }
log() { echo "[tiered $(date +%H:%M:%S)] $*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
KAFKA_VERSION=4.3.2
OUT=""
CHECK=0
while (( $# )); do
    case "$1" in
        --kafka) shift; KAFKA_VERSION=${1:?--kafka needs a release} ;;
        --out) shift; OUT=${1:?--out needs a directory} ;;
        --check) CHECK=1 ;;
        -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done
[[ $KAFKA_VERSION =~ ^4\.[0-9]+\.[0-9]+$ ]] || die "--kafka $KAFKA_VERSION: a 4.x release (KRaft) is needed"
for tool in java mvn python3; do command -v "$tool" >/dev/null || die "$tool not found"; done

START_TS=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/klog-tiered.XXXXXX")
NODES=(1 2 3)
cleanup() {
    local rc=$?
    for n in "${NODES[@]}"; do
        local pidf="$WORK/run/node-$n.pid"
        [[ -f "$pidf" ]] || continue
        local pid; pid=$(cat "$pidf")
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    if [[ -f "$WORK/run/driver.pid" ]]; then
        # The driver runs under timeout(1), which passes SIGTERM on to the JVM.
        local dpid; dpid=$(cat "$WORK/run/driver.pid")
        kill -TERM "$dpid" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$dpid" 2>/dev/null || true
    fi
    if (( rc != 0 )); then
        for f in "$WORK"/logs/*.log; do [[ -f "$f" ]] && { echo "---- last lines of $f" >&2; tail -n 15 "$f" >&2; }; done
    fi
    if [[ "${KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if (( CHECK )); then OUT=${OUT:-$WORK/fixture}; else OUT=${OUT:-$REPO/fixtures/kafka-tiered/$KAFKA_VERSION}; fi
mkdir -p "$WORK/run" "$WORK/logs" "$WORK/classes" "$WORK/jars" "$WORK/remote"

# ---- jars: the release's (run.sh's pom) and the kafka-storage test jar -----------------
log "resolving the jars of Kafka $KAFKA_VERSION and its kafka-storage test jar with mvn"
timeout 900 mvn -q -B -f "$SCRIPT_DIR/pom.xml" dependency:build-classpath -Dkafka.version="$KAFKA_VERSION" \
    -Dmdep.outputFile="$WORK/cp.txt" >"$WORK/logs/mvn.log" 2>&1 || { cat "$WORK/logs/mvn.log" >&2; die "mvn failed"; }
timeout 900 mvn -q -B -f "$SCRIPT_DIR/pom.xml" dependency:copy -Dartifact="org.apache.kafka:kafka-storage:$KAFKA_VERSION:jar:test" \
    -DoutputDirectory="$WORK/jars" >>"$WORK/logs/mvn.log" 2>&1 || { cat "$WORK/logs/mvn.log" >&2; die "no kafka-storage $KAFKA_VERSION test jar"; }
RSM_JAR="$WORK/jars/kafka-storage-$KAFKA_VERSION-test.jar"
[[ -f $RSM_JAR ]] || die "mvn did not copy the kafka-storage $KAFKA_VERSION test jar"
RSM=org.apache.kafka.server.log.remote.storage.LocalTieredStorage
python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$RSM_JAR" "${RSM//.//}.class" || die "$RSM is not in the kafka-storage $KAFKA_VERSION test jar (4.4.0's has none; use 4.3.2)"
timeout 300 javac -nowarn -d "$WORK/classes" -cp "$(cat "$WORK/cp.txt"):$RSM_JAR" \
    "$SCRIPT_DIR"/src/main/java/klogoracle/Driver.java "$SCRIPT_DIR"/src/tiered/java/klogoracle/Tiered.java \
    2>"$WORK/logs/javac.log" || { cat "$WORK/logs/javac.log" >&2; die "the driver does not compile against Kafka $KAFKA_VERSION"; }
CP="$WORK/classes:$(cat "$WORK/cp.txt")"
# What Driver.java's helpers read (segment.bytes or internal.segment.bytes, by release).
export KLOG_ORACLE_RELEASE="$KAFKA_VERSION" KLOG_ORACLE_MODE=kraft KLOG_ORACLE_OFFSETS_PARTITIONS=3
JAVA_OPTS=(-Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
           -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.showDateTime=true)
jrun() { timeout 300 java "${JAVA_OPTS[@]}" -cp "$CP" "$@"; }
# The driver classes need the test jar too (Tiered craft builds records with its serde).
jrun_rsm() { timeout 300 java "${JAVA_OPTS[@]}" -cp "$CP:$RSM_JAR" "$@"; }

# ---- configuration (run.sh's KRaft settings, remote storage on) ------------------------
mapfile -t PORTS < <(jrun klogoracle.Driver ports 4)
(( ${#PORTS[@]} == 4 )) || die "could not find free loopback ports"
BOOTSTRAP="127.0.0.1:${PORTS[0]},127.0.0.1:${PORTS[1]},127.0.0.1:${PORTS[2]}"
CLUSTER_ID=a2xvZy10aWVyZWQtMDAwMQ   # base64url of "klog-tiered-0001"
for n in "${NODES[@]}"; do
    mkdir -p "$WORK/cluster/broker-$n"
    if (( n == 1 )); then
        roles=broker,controller; listeners="PLAINTEXT://127.0.0.1:${PORTS[0]},CONTROLLER://127.0.0.1:${PORTS[3]}"
    else
        roles=broker; listeners="PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}"
    fi
    printf '%s\n' "process.roles=$roles" "node.id=$n" "controller.quorum.voters=1@127.0.0.1:${PORTS[3]}" \
        "listeners=$listeners" controller.listener.names=CONTROLLER \
        listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT offsets.topic.num.partitions=3 \
        "advertised.listeners=PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}" inter.broker.listener.name=PLAINTEXT \
        "log.dirs=$WORK/cluster/broker-$n" auto.create.topics.enable=false num.partitions=1 \
        default.replication.factor=3 min.insync.replicas=2 offsets.topic.replication.factor=3 \
        transaction.state.log.num.partitions=2 transaction.state.log.replication.factor=3 transaction.state.log.min.isr=2 \
        group.initial.rebalance.delay.ms=0 log.segment.delete.delay.ms=1000 log.initial.task.delay.ms=0 \
        num.io.threads=2 num.network.threads=2 num.replica.fetchers=1 background.threads=4 \
        log.index.size.max.bytes=65536 log.retention.check.interval.ms=1000 \
        remote.log.storage.system.enable=true \
        "remote.log.storage.manager.class.name=$RSM" "remote.log.storage.manager.class.path=$RSM_JAR" \
        "rsm.config.dir=$WORK/remote" rsm.config.delete.enable=true rsm.config.delete.on.close=false \
        remote.log.metadata.manager.listener.name=PLAINTEXT \
        rlmm.config.remote.log.metadata.topic.num.partitions=2 rlmm.config.remote.log.metadata.topic.replication.factor=3 \
        rlmm.config.remote.log.metadata.topic.min.isr=2 \
        remote.log.manager.task.interval.ms=500 remote.log.manager.task.retry.backoff.max.ms=2000 \
        >"$WORK/run/node-$n.properties"
done

start_node() {
    java "${JAVA_OPTS[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=info -cp "$CP" kafka.Kafka "$WORK/run/node-$1.properties" \
        >>"$WORK/logs/node-$1.log" 2>&1 &
    echo $! >"$WORK/run/node-$1.pid"
}
stop_node() {   # controlled shutdown, SIGKILL after 60 s
    local pid; pid=$(cat "$WORK/run/node-$1.pid")
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    log "node $1 did not stop within 60 s: SIGKILL"; kill -KILL "$pid"
}
start_cluster() {
    for n in "${NODES[@]}"; do start_node "$n"; done
    jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 3 120 2>>"$WORK/logs/wait-ready.log" || die "the cluster did not come up within 120 s"
}
stop_cluster() { stop_node 3; stop_node 2; stop_node 1; }

log "formatting 3 KRaft nodes (Kafka $KAFKA_VERSION) in $WORK"
for n in "${NODES[@]}"; do
    jrun kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$WORK/run/node-$n.properties" >>"$WORK/logs/format.log" 2>&1 \
        || die "format of node $n failed"
done
start_cluster
log "cluster up after $(( $(date +%s) - START_TS )) s; running the tiered scenario"
EXPECTED="$WORK/expected"
mkdir -p "$EXPECTED"
timeout 900 java "${JAVA_OPTS[@]}" -cp "$CP:$RSM_JAR" klogoracle.Tiered scenario "$BOOTSTRAP" "$EXPECTED" "$WORK/cluster" "$WORK/remote" \
    >"$WORK/logs/driver.log" 2>&1 &
echo $! >"$WORK/run/driver.pid"
wait "$(cat "$WORK/run/driver.pid")" || { cat "$WORK/logs/driver.log" >&2; die "the tiered scenario failed"; }
rm -f "$WORK/run/driver.pid"
grep '^\[driver\]' "$WORK/logs/driver.log" >&2 || true
log "stopping the cluster (controlled shutdown, brokers first)"
stop_cluster

# ---- copy: each broker's top-level files and partition folders, the remote folder ------
STAGE="$WORK/stage"
python3 - "$WORK/cluster" "$WORK/remote" "$STAGE" <<'PY'
import os, subprocess, sys
src, remote, dst = sys.argv[1:4]
TOP = {"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
       "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".kafka_cleanshutdown"}
for b in ("broker-1", "broker-2", "broker-3"):
    os.makedirs(os.path.join(dst, b))
    for name in sorted(os.listdir(os.path.join(src, b))):
        s, d = os.path.join(src, b, name), os.path.join(dst, b, name)
        if os.path.isdir(s):
            if name.endswith("-delete") or (name == "__cluster_metadata-0" and b != "broker-1"):
                continue
            subprocess.run(["cp", "-a", "--sparse=always", s, d], check=True)
        elif name in TOP:
            subprocess.run(["cp", "-a", s, d], check=True)
subprocess.run(["cp", "-a", remote, os.path.join(dst, "remote")], check=True)
PY
# The remote storage folder: every file, its size (what is remote).
(cd "$STAGE" && find remote -type f -printf '%p\t%s\n' | sort) >"$EXPECTED/remote-listing.tsv"
# A segment of crafted remote log metadata records (some damaged), built by Kafka's classes.
CRAFTED="crafted/__remote_log_metadata-0/00000000000000000000.log"
jrun_rsm klogoracle.Tiered craft "$STAGE/$CRAFTED" || die "could not craft the remote log metadata segment"

# ---- kafka-dump-log, from the fixture root (relative paths) -----------------------------
TOOLS="$WORK/run/dump-tools.tsv"
: >"$TOOLS"
dump_line() {   # dump_line FILE [DECODER]: kafka-dump-log of FILE into expected/dump-log/FILE.txt
    local line=("$EXPECTED/dump-log/$1.txt" kafka.tools.DumpLogSegments --deep-iteration --print-data-log --files "$1" "${@:2}")
    (IFS=$'\t'; echo "${line[*]}") >>"$TOOLS"
}
(cd "$STAGE" && find broker-1 broker-2 broker-3 crafted -name '*.log' \( -path '*/__remote_log_metadata-*' -o -path '*/tiered*' \) \
    | sort) | while read -r seg; do
    if [[ $seg == *__remote_log_metadata-* ]]; then dump_line "$seg" --remote-log-metadata-decoder; else dump_line "$seg"; fi
done
# Every file of the remote storage as kafka-dump-log reads it (by its suffix).
(cd "$STAGE" && find remote -type f | sort) | while read -r f; do dump_line "$f"; done
# kafka-dump-log takes a segment's base offset from its file name and fails on the remote
# names (<offset>-<segment id>.<suffix>): the remote files again, copied under the names of
# local files (<offset>.<suffix>) into a folder of their own, remote-as-local/.
(cd "$STAGE" && find remote -type f | sort) | while read -r f; do
    name=$(basename "$f"); base=${name%%-*}; suffix=${name##*.}
    case "$suffix" in log|index|timeindex|txnindex|snapshot) ;; *) continue ;; esac
    local_name="remote-as-local/$(dirname "$f")/$base.$suffix"
    mkdir -p "$STAGE/$(dirname "$local_name")"
    cp "$STAGE/$f" "$STAGE/$local_name"
    dump_line "$local_name"
done
(cd "$STAGE" && timeout 600 java "${JAVA_OPTS[@]}" -cp "$CP:$RSM_JAR" klogoracle.Driver tools "$TOOLS") \
    >"$WORK/logs/tools.log" 2>&1 || { tail -n 40 "$WORK/logs/tools.log" >&2; log "warning: some kafka-dump-log runs failed"; }

# ---- restart on the stopped directories: what LogLoader loaded, what Kafka serves ------
declare -A FROM=()
for n in "${NODES[@]}"; do FROM[$n]=$(( $(wc -l <"$WORK/logs/node-$n.log") + 1 )); done
log "restarting the cluster on its directories"
start_cluster
jrun klogoracle.Driver wait-in-sync "$BOOTSTRAP" 180 2>>"$WORK/logs/wait-ready.log" || die "replicas not in sync after the restart"
jrun_rsm klogoracle.Tiered record "$BOOTSTRAP" "$EXPECTED" list-offsets-restarted.json >>"$WORK/logs/driver.log" 2>&1 \
    || { tail -n 40 "$WORK/logs/driver.log" >&2; die "recording after the restart failed"; }
stop_cluster
mkdir -p "$EXPECTED/restart"
for n in "${NODES[@]}"; do
    tail -n +"${FROM[$n]}" "$WORK/logs/node-$n.log" | grep -E 'tiered(-trim)?-0' | grep -E 'Completed load|[Ll]og.?[Ss]tart' \
        | sed -E "s#$WORK/cluster/##g; s/^[0-9]+ \[[^]]*\] //" >"$EXPECTED/restart/node-$n.log" || true
done

# Trim preallocated indexes (the KRaft metadata log's) to their used part; record the real sizes.
python3 - "$STAGE" <<'PY'
import os, sys
root = sys.argv[1]
rows = []
for dirpath, _, files in os.walk(root):
    for f in files:
        if not (f.endswith(".index") or f.endswith(".timeindex")) or "/remote" in dirpath:
            continue
        p = os.path.join(dirpath, f)
        size, entry = os.path.getsize(p), (8 if f.endswith(".index") else 12)
        with open(p, "rb") as fh:
            used = len(fh.read().rstrip(b"\0"))
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

{ grep -rl "$WORK" "$EXPECTED" 2>/dev/null || true; } | while read -r f; do sed -i "s:$WORK/stage/::g; s:$WORK:<work>:g" "$f"; done
printf 'kafka %s\ncluster id %s\nremote storage manager %s (kafka-storage %s test jar)\n' \
    "$KAFKA_VERSION" "$CLUSTER_ID" "$RSM" "$KAFKA_VERSION" >"$EXPECTED/VERSION"
rm -rf "$OUT"
mkdir -p "$OUT"
rm -rf "$STAGE/remote-as-local"   # copies of remote/ (the tests make them again)
cp -a "$STAGE"/. "$OUT/"
cp -a "$EXPECTED" "$OUT/expected"
log "fixture tree written to $OUT ($(du -sh --apparent-size "$OUT" | cut -f1)) in $(( $(date +%s) - START_TS )) s"

if (( CHECK )); then
    (cd "$REPO" && KLOG_KAFKA_TIERED="$OUT" cargo test --quiet --test cli -- kafka_tiered:: --test-threads=2)
fi
