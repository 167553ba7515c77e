#!/usr/bin/env python3
"""kafka-dump-log against `klog dump-segment --print-data-log` on damaged
segments: the oracle where the fixtures are healthy.

    tests/kafka/damaged_dump.py ROUNDS [--seed N] [--kafka VERSION]
        [--klog PATH] [--keep DIR]

Each round copies one data-topic segment of fixtures/kafka-real/<VERSION>/,
damages it as tests/hostile/campaign.py does, and runs Kafka's own
DumpLogSegments (--deep-iteration --print-data-log, from the release's jars,
which mvn resolves through tests/kafka/pom.xml) and klog on it. Their
stdout is compared byte for byte; a difference is put in one of these
classes, and the script exits 1 on any other:

- kafka_threw: Kafka's tool stops with an exception (exit 1) where klog
  says what is damaged and goes on;
- escaped: the same once klog's escapes (`\\xNN`, `\\t`, `\\n`, `\\r`, `\\\\`) are undone:
  klog never writes a control character from the data to a terminal;
- klog_checks_more: klog stops at a field Kafka's deep iteration reads
  without checking (a magic byte outside 0..=2, which Kafka frames as a v2
  batch when above 1 and its consumers refuse; a negative lastOffsetDelta
  or more records than it allows; an offset delta that does not rise; a
  negative length), says so on stderr, and shows no records past it.

Needs java 17+, mvn and a built klog (default target/release/klog).
"""
import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location('campaign', os.path.join(REPO, 'tests/hostile/campaign.py'))
campaign = importlib.util.module_from_spec(spec)
spec.loader.exec_module(campaign)

# What klog's stderr says where it checks a field Kafka's deep iteration does not.
CHECKS = (b'unsupported magic', b'lastOffsetDelta', b'offset delta', b'negative length')
INTERNAL = ('__cluster_metadata', '__consumer_offsets', '__share_group_state', '__transaction_state')


def classpath(version, work):
    out = os.path.join(work, 'cp.txt')
    mvn = subprocess.run(['mvn', '-q', '-B', '-f', os.path.join(HERE, 'pom.xml'),
                          'dependency:build-classpath', f'-Dkafka.version={version}',
                          f'-Dmdep.outputFile={out}'], capture_output=True, text=True)
    if mvn.returncode != 0:
        sys.exit(f'mvn could not resolve Kafka {version}:\n{mvn.stdout}{mvn.stderr}')
    return open(out).read().strip()


def dump_tool(cp):
    """DumpLogSegments' class: in the tools module from Kafka 4.3 on, in
    the core jar before."""
    import zipfile
    for jar in cp.split(os.pathsep):
        if jar.endswith('.jar') and 'org/apache/kafka/tools/DumpLogSegments.class' in zipfile.ZipFile(jar).namelist():
            return 'org.apache.kafka.tools.DumpLogSegments'
    return 'kafka.tools.DumpLogSegments'


def segments(version):
    root = os.path.join(REPO, 'fixtures', 'kafka-real', version)
    out = []
    for broker in sorted(os.listdir(root)):
        if not broker.startswith('broker-'):
            continue
        for folder in sorted(os.listdir(os.path.join(root, broker))):
            path = os.path.join(root, broker, folder)
            if folder.startswith(INTERNAL) or not os.path.isdir(path):
                continue
            out += [os.path.join(path, f) for f in sorted(os.listdir(path))
                    if f.endswith('.log') and os.path.getsize(os.path.join(path, f)) > 0]
    return out


def unescape(text):
    text = re.sub(rb'\\x([0-9a-f]{2})', lambda m: bytes([int(m.group(1), 16)]), text)
    for escape, byte in ((b'\\t', b'\t'), (b'\\n', b'\n'), (b'\\r', b'\r')):
        text = text.replace(escape, byte)
    return text.replace(b'\\\\', b'\\')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('rounds', type=int)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--kafka', default='4.4.0')
    parser.add_argument('--klog', default=os.path.join(REPO, 'target', 'release', 'klog'))
    parser.add_argument('--keep', help='copy each unexplained case here')
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='klog-damaged-dump-')
    try:
        cp = classpath(args.kafka, work)
        tool = dump_tool(cp)
        rng = __import__('random').Random(args.seed)
        pool = segments(args.kafka)
        classes = collections.Counter()
        for n in range(args.rounds):
            source = rng.choice(pool)
            folder = os.path.join(work, 'w', os.path.basename(os.path.dirname(source)))
            shutil.rmtree(os.path.join(work, 'w'), ignore_errors=True)
            os.makedirs(folder)
            log = os.path.join(folder, os.path.basename(source))
            shutil.copy(source, log)
            campaign.damage(rng, log)
            kafka = subprocess.run(['java', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', cp, tool,
                                    '--deep-iteration', '--print-data-log', '--files', log],
                                   capture_output=True)
            klog = subprocess.run([args.klog, 'dump-segment', '--print-data-log', '--files', log],
                                  capture_output=True)
            if kafka.stdout == klog.stdout:
                classes['identical'] += 1
            elif kafka.returncode != 0 and b'Exception' in kafka.stderr:
                classes['kafka_threw'] += 1
            elif kafka.stdout == unescape(klog.stdout):
                classes['escaped'] += 1
            elif any(check in klog.stderr for check in CHECKS):
                classes['klog_checks_more'] += 1
            else:
                classes['unexplained'] += 1
                print(f'round {n}: {os.path.relpath(source, REPO)} differs', file=sys.stderr)
                if args.keep:
                    shutil.copytree(os.path.join(work, 'w'), os.path.join(args.keep, f'round-{n}'))
        print(', '.join(f'{k}: {v}' for k, v in sorted(classes.items())))
        sys.exit(1 if classes['unexplained'] else 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
