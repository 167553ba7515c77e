#!/usr/bin/env bash
# tests/kafka/schemas.sh -- klog's record schema tables against a Kafka release.
#
# Resolves the release's jars with mvn (tests/kafka/schemas-pom.xml with
# -Dkafka.version=RELEASE: the broker and, through it, its coordinators,
# clients, metadata, raft and server-common; the first run downloads them
# into ~/.m2; run.sh's pom.xml holds tools some releases do not ship),
# dumps klog's tables with `klog generate tables`, and compares every
# common/metadata/*.json and common/message/*.json schema in those jars with
# them, field by field (tests/kafka/schemas.py says what is compared).
#
# The release each version of a table names is checked too: run it for
# every release the tables name (3.9.2 4.0.2 4.1.1 4.2.0 4.3.1 4.4.0) to
# hold all of them to Kafka.
#
# Usage:
#   tests/kafka/schemas.sh RELEASE... [--logs LIST]
#       e.g. tests/kafka/schemas.sh 4.4.0
#            tests/kafka/schemas.sh 3.9.2 4.4.0 --logs metadata,kraft-control
#   KLOG=path/to/klog tests/kafka/schemas.sh RELEASE...   use that binary
#                                                         (default: cargo build)
#
# Prints one line per difference; exit 1 if there is any, 0 if none, 2 when
# it cannot run. Needs mvn, python3 and cargo (unless KLOG is set). About
# 10 s a release once the jars are in ~/.m2.
set -euo pipefail

die() { echo "schemas.sh: $*" >&2; exit 2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
RELEASES=()
while (( $# )) && [[ "$1" != -* ]]; do RELEASES+=("$1"); shift; done
(( ${#RELEASES[@]} )) || die "usage: schemas.sh RELEASE... [--logs LIST]"

command -v mvn >/dev/null || die "mvn not found"
command -v python3 >/dev/null || die "python3 not found"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/klog-schemas.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [[ -z "${KLOG:-}" ]]; then
    (cd "$REPO" && cargo build --quiet) || die "cargo build failed"
    KLOG="$REPO/target/debug/klog"
fi
"$KLOG" generate tables "$WORK" || die "$KLOG generate tables failed"

RC=0
for RELEASE in "${RELEASES[@]}"; do
    timeout 900 mvn -q -B -f "$SCRIPT_DIR/schemas-pom.xml" dependency:build-classpath \
        -Dkafka.version="$RELEASE" -Dmdep.outputFile="$WORK/cp.txt" >"$WORK/mvn.log" 2>&1 \
        || { cat "$WORK/mvn.log" >&2; die "mvn could not resolve Kafka $RELEASE"; }
    # Only Kafka's own jars hold its schema files.
    tr ':' '\n' <"$WORK/cp.txt" | grep '/org/apache/kafka/' >"$WORK/jars.txt" \
        || die "no Kafka jars in the classpath of $RELEASE"
    mapfile -t JARS <"$WORK/jars.txt"
    rc=0
    python3 "$SCRIPT_DIR/schemas.py" "$RELEASE" "$WORK/record-tables.json" "${JARS[@]}" "$@" || rc=$?
    (( rc == 2 )) && exit 2
    (( rc > RC )) && RC=$rc
done
exit "$RC"
