#!/usr/bin/env bash
# tests/kafka/run.sh -- real Kafka as the oracle for klog's fixtures.
#
# Starts a 3-node KRaft cluster (Apache Kafka from Maven Central, the release
# pinned in tests/kafka/pom.xml; each node in its own JVM, node 1 broker and
# the controller, nodes 2 and 3 brokers; loopback ports only, in a temporary
# directory), runs the scenarios of
# tests/kafka/src/main/java/klogoracle/Driver.java with the real Java
# clients, records Kafka's own answers (Admin API, kafka-consumer-groups,
# kafka-share-groups, kafka-transactions, kafka-get-offsets, kafka-dump-log,
# kafka-metadata-shell: the tool classes run with java -cp), kills one broker
# with SIGKILL in the middle of a produce loop, stops the other two, and
# copies the three log directories, trimmed, next to the answers.
#
# Usage:
#   tests/kafka/run.sh            regenerate fixtures/kafka-real/4.1.1/ (review the diff)
#   tests/kafka/run.sh --check    regenerate into a temporary directory and run
#                                 klog's kafka_real tests against it; the
#                                 committed fixtures are left as they are
#   tests/kafka/run.sh --out DIR  write the fixture tree to DIR
#   KEEP=1 tests/kafka/run.sh     keep the temporary directory (broker logs)
#
# Needs: java 17+, mvn (which resolves the pinned jars into ~/.m2 itself on
# first use; Maven Central must be reachable then), bash, python3, cargo for
# --check. Every wait is bounded; whatever this script starts is stopped on
# exit, success or not.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }
log() { echo "[kafka $(date +%H:%M:%S)] $*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
CHECK=0
OUT=""
while (( $# )); do
    case "$1" in
        --check) CHECK=1 ;;
        --out) shift; OUT=${1:?--out needs a directory} ;;
        -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done

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
    for n in "${NODES[@]}"; do
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
    OUT=${OUT:-$REPO/fixtures/kafka-real/4.1.1}
fi
mkdir -p "$WORK/run" "$WORK/logs" "$WORK/classes"

# ---- the pinned jars and the driver -------------------------------------------
log "resolving the pinned Kafka jars with mvn (first run downloads them into ~/.m2)"
timeout 900 mvn -q -B -f "$SCRIPT_DIR/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$WORK/cp.txt" >"$WORK/logs/mvn.log" 2>&1 \
    || { cat "$WORK/logs/mvn.log" >&2; die "mvn could not resolve the classpath"; }
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$SCRIPT_DIR/pom.xml")
timeout 300 javac -d "$WORK/classes" -cp "$(cat "$WORK/cp.txt")" "$SCRIPT_DIR"/src/main/java/klogoracle/*.java
CP="$WORK/classes:$(cat "$WORK/cp.txt")"
JAVA_OPTS=(-Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
           -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.showDateTime=true)
jrun() { timeout 300 java "${JAVA_OPTS[@]}" -cp "$CP" "$@"; }   # short JVM runs, bounded

# ---- configuration -----------------------------------------------------------------
mapfile -t PORTS < <(jrun klogoracle.Driver ports 6)
(( ${#PORTS[@]} == 6 )) || die "could not find free loopback ports"
# Node 1 is broker and the one KRaft controller; nodes 2 and 3 are brokers only, so
# either can be stopped or killed without costing the cluster its quorum.
VOTERS="1@127.0.0.1:${PORTS[3]}"
BOOTSTRAP="127.0.0.1:${PORTS[0]},127.0.0.1:${PORTS[1]},127.0.0.1:${PORTS[2]}"
CLUSTER_ID=a2xvZy1vcmFjbGUtMDAwMQ   # base64url of "klog-oracle-0001"
for n in "${NODES[@]}"; do
    mkdir -p "$WORK/cluster/broker-$n"
    if (( n == 1 )); then
        roles=broker,controller
        listeners="PLAINTEXT://127.0.0.1:${PORTS[0]},CONTROLLER://127.0.0.1:${PORTS[3]}"
    else
        roles=broker
        listeners="PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}"
    fi
    cat >"$WORK/run/node-$n.properties" <<EOF
process.roles=$roles
node.id=$n
controller.quorum.voters=$VOTERS
listeners=$listeners
advertised.listeners=PLAINTEXT://127.0.0.1:${PORTS[$((n-1))]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$WORK/cluster/broker-$n
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=3
min.insync.replicas=2
offsets.topic.num.partitions=3
offsets.topic.replication.factor=3
transaction.state.log.num.partitions=2
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.num.partitions=1
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
log.cleaner.backoff.ms=500
log.segment.delete.delay.ms=1000
log.initial.task.delay.ms=0
num.io.threads=2
num.network.threads=2
num.replica.fetchers=1
background.threads=4
EOF
done

# ---- control of the nodes (also used by the driver) ---------------------------------
cat >"$WORK/run/ctl.sh" <<EOF
#!/usr/bin/env bash
# ctl.sh start|stop|kill N
set -euo pipefail
n=\$2; pidf="$WORK/run/node-\$n.pid"
case "\$1" in
  start)
    java ${JAVA_OPTS[*]} -cp "$CP" kafka.Kafka "$WORK/run/node-\$n.properties" >>"$WORK/logs/node-\$n.log" 2>&1 &
    echo \$! >"\$pidf" ;;
  stop)
    pid=\$(cat "\$pidf"); kill -TERM "\$pid" 2>/dev/null || exit 0
    for _ in \$(seq 1 120); do kill -0 "\$pid" 2>/dev/null || exit 0; sleep 0.5; done
    echo "node \$n did not stop within 60 s: SIGKILL" >&2; kill -KILL "\$pid" ;;
  kill)
    pid=\$(cat "\$pidf"); kill -KILL "\$pid"
    for _ in \$(seq 1 40); do kill -0 "\$pid" 2>/dev/null || exit 0; sleep 0.25; done
    exit 1 ;;
esac
EOF
chmod +x "$WORK/run/ctl.sh"
export KLOG_ORACLE_CTL="$WORK/run/ctl.sh"

log "formatting 3 KRaft nodes (Kafka $KAFKA_VERSION, share.version=1) in $WORK"
for n in "${NODES[@]}"; do
    jrun kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$WORK/run/node-$n.properties" \
        --feature share.version=1 >>"$WORK/logs/format.log" 2>&1 || die "format of node $n failed"
done
for n in "${NODES[@]}"; do "$KLOG_ORACLE_CTL" start "$n"; done
log "waiting (at most 120 s) for 3 brokers on $BOOTSTRAP"
jrun klogoracle.Driver wait-ready "$BOOTSTRAP" 3 120 || die "the cluster did not come up within 120 s"
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
log "copying the log directories of nodes 1 and 2"
copy_dirs broker-1 broker-2

# kafka-dump-log on every segment, from the fixture root so the paths printed are relative.
TOOLS="$WORK/run/dump-tools.tsv"
: >"$TOOLS"
(cd "$STAGE" && find . -name '*.log' -path './broker-*/*' | sed 's:^\./::' | sort) | while read -r seg; do
    part=$(basename "$(dirname "$seg")")
    extra=()
    case "$part" in
        __consumer_offsets-*) extra=(--offsets-decoder) ;;
        __transaction_state-*) extra=(--transaction-log-decoder) ;;
        __share_group_state-*) extra=(--share-group-state-decoder) ;;
        __cluster_metadata-*) extra=(--cluster-metadata-decoder) ;;
    esac
    line=("$EXPECTED/dump-log/${seg%.log}.txt" kafka.tools.DumpLogSegments --deep-iteration --print-data-log
          --files "$seg" "${extra[@]}")
    (IFS=$'\t'; echo "${line[*]}") >>"$TOOLS"
done
(cd "$STAGE" && find . -name '*.index' -path './broker-*/*' | sed 's:^\./::' | sort) | while read -r idx; do
    printf '%s\t%s\t%s\t%s\t%s\n' "$EXPECTED/dump-log/${idx%.index}.index-sanity.txt" kafka.tools.DumpLogSegments \
        --index-sanity-check --files "$idx" >>"$TOOLS"
done
# The entries of every offset and time index (the segment's .log beside it is read too).
(cd "$STAGE" && find . \( -name '*.index' -o -name '*.timeindex' \) -path './broker-*/*' | sed 's:^\./::' | sort) | while read -r idx; do
    printf '%s\t%s\t%s\t%s\n' "$EXPECTED/dump-log/$idx.txt" kafka.tools.DumpLogSegments --files "$idx" >>"$TOOLS"
done
META="broker-1/__cluster_metadata-0/00000000000000000000.log"
for cmd in "ls /image/topics/byName" "ls /image/features" "find /image/topics/byName" "cat /image/features/metadataVersion"; do
    name=$(echo "$cmd" | tr ' /' '__' | sed 's/__*/_/g; s/^_//')
    printf '%s\t%s\t%s\t%s\t%s\n' "$EXPECTED/metadata-shell/$name.txt" org.apache.kafka.shell.MetadataShell \
        --snapshot "$META" "${cmd// /$'\t'}" >>"$TOOLS"
done
(cd "$STAGE" && timeout 600 java "${JAVA_OPTS[@]}" -cp "$CP" klogoracle.Driver tools "$TOOLS") \
    >"$WORK/logs/tools.log" 2>&1 || { tail -n 40 "$WORK/logs/tools.log" >&2; log "warning: some Kafka tool invocations failed (see above)"; }

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

rm -rf "$OUT/broker-1" "$OUT/broker-2" "$OUT/broker-3" "$OUT/expected"
mkdir -p "$OUT"
cp -a "$STAGE"/broker-* "$STAGE/index-sizes.tsv" "$OUT/"
cp -a "$EXPECTED" "$OUT/expected"
log "fixture tree written to $OUT ($(du -sh --apparent-size "$OUT" | cut -f1)) in $(( $(date +%s) - START_TS )) s"

if (( CHECK )); then
    log "checking klog against the fresh answers (cargo test --test cli kafka_real)"
    (cd "$REPO" && KLOG_KAFKA_REAL="$OUT" cargo test --quiet --test cli kafka_real -- --test-threads=2)
    log "klog agrees with Kafka $KAFKA_VERSION ($(( $(date +%s) - START_TS )) s in all)"
fi
