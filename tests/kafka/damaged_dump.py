#!/usr/bin/env python3
"""kafka-dump-log against `klog dump-segment --print-data-log` on damaged
segments: the oracle where the fixtures are healthy.

    tests/kafka/damaged_dump.py ROUNDS [--seed N] [--kafka VERSION]
        [--topics data|internal|all] [--klog PATH] [--keep DIR [--keep-all]]

Each round picks a kind of topic, then one of its non-empty segments in the
brokers' folders of fixtures/kafka-real/<VERSION>/: the data topics, or one
of the internal topics the release's fixture has (__consumer_offsets,
__transaction_state, __cluster_metadata, __share_group_state), each kind as
often as another (--topics: all, the default; or only data or only
internal; with one kind, as `data` alone, the draws are those of the
script before it read internal topics). It damages a copy as
tests/hostile/campaign.py does and runs Kafka's own DumpLogSegments
(--deep-iteration --print-data-log, from the release's jars, which mvn
resolves through tests/kafka/pom.xml) and `klog dump-segment
--print-data-log --kafka-release <major.minor of VERSION>` on it, both with
the decoder flag of an internal topic (--offsets-decoder,
--transaction-log-decoder, --cluster-metadata-decoder,
--share-group-state-decoder). Their stdout is compared line by line; a
difference must be explained by one or more of these classes (a round is
counted under those it needs, joined by `+`), and the script exits 1 on any
other (`unexplained`):

- kafka_threw: Kafka's tool stops with an exception (exit 1, `Exception`
  on stderr; besides the record and batch readers, a coordinator decoder
  throws on a record without a key, and 3.9's and 4.0's transaction log
  decoder on any record it cannot read) where klog says what is damaged
  and goes on. The lines Kafka finished are
  klog's (as the other classes allow) up to the last batch line Kafka
  printed; in that batch klog may show fewer of its records, or say what
  is damaged in place of its header (with a line that is neither a
  record's nor a batch line at or before that batch's position), and then
  go on past where Kafka stopped. What Kafka printed of a line it did not
  finish is not compared.
- escaped: klog's lines are Kafka's once klog's escapes (`\\xNN`, `\\t`,
  `\\n`, `\\r`, `\\\\` in text; in JSON `\\uXXXX` for a character JSON
  leaves raw, such as DEL) are undone: klog never writes a control
  character from the data to a terminal.
- klog_checks_more: klog stops at a field Kafka's deep iteration reads
  without checking (a magic byte outside 0..=2, which Kafka frames as a v2
  batch when above 1 and its consumers refuse; a negative lastOffsetDelta
  or more records than it allows; an offset delta that does not rise; a
  negative length), says so on stderr, and shows no records past it: the
  record lines Kafka prints from there to the end of that batch are not
  klog's, whose next line is Kafka's next line that is not a record's; or,
  at a batch Kafka prints at position P, klog's last line is `Found N
  invalid bytes at the end of …` with N the file's size less P.
- error_words: a decoder that cannot read a record prints, in both tools,
  `key: Error at offset N, skipping. ` (the coordinators' decoders) or
  `payload: Error at N, skipping. ` (the cluster metadata decoder) for the
  same record, and the line differs only after those words: Kafka ends it
  with its exception's message, klog with its own words for what it found
  (src/report/kafka_dump/coordinator_json.rs). Both refuse the record; they
  need not refuse it at the same byte. A record that one tool decodes and
  the other refuses, or that one skips as an unknown record type, is not
  in this class.

--keep DIR copies each unexplained case there, the damaged segment with
both tools' stdout and stderr (kafka.out, klog.out, …) and case.txt (class,
source segment, decoder flag, exit codes); with --keep-all every case that
is not identical.

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
# The decoder flag each internal topic is dumped with, by both tools.
DECODERS = {
    '__cluster_metadata': '--cluster-metadata-decoder',
    '__consumer_offsets': '--offsets-decoder',
    '__share_group_state': '--share-group-state-decoder',
    '__transaction_state': '--transaction-log-decoder',
}


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


def segments(version, topics):
    """The non-empty segments of the brokers' folders, grouped: one group
    for the data topics, one for each internal topic (by its decoder flag),
    as `topics` (data, internal, all) asks."""
    root = os.path.join(REPO, 'fixtures', 'kafka-real', version)
    groups = collections.defaultdict(list)
    for broker in sorted(os.listdir(root)):
        if not broker.startswith('broker-'):
            continue
        for folder in sorted(os.listdir(os.path.join(root, broker))):
            path = os.path.join(root, broker, folder)
            if not os.path.isdir(path):
                continue
            decoder = DECODERS.get(folder.rsplit('-', 1)[0])
            if topics != 'all' and (decoder is None) != (topics == 'data'):
                continue
            groups[decoder] += [os.path.join(path, f) for f in sorted(os.listdir(path))
                                if f.endswith('.log') and os.path.getsize(os.path.join(path, f)) > 0]
    return [(decoder, groups[decoder]) for decoder in sorted(groups, key=lambda d: d or '')]


# klog's JSON escape of a character JSON leaves raw (DEL, C1 controls,
# …): `\\uXXXX`, a surrogate pair above U+FFFF. Below U+0020 the escape is
# JSON's own, which Kafka's Jackson writes too.
JSON_ESCAPE = re.compile(rb'\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u([0-9a-f]{4})')


def json_char(m):
    if m.group(3) is None:
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return chr(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)).encode()
    code = int(m.group(3), 16)
    return m.group(0) if code < 0x20 else chr(code).encode('utf-8', 'surrogatepass')


def unescape(text):
    text = JSON_ESCAPE.sub(json_char, text)
    text = re.sub(rb'\\x([0-9a-f]{2})', lambda m: bytes([int(m.group(1), 16)]), text)
    for escape, byte in ((b'\\t', b'\t'), (b'\\n', b'\n'), (b'\\r', b'\r')):
        text = text.replace(escape, byte)
    return text.replace(b'\\\\', b'\\')


RECORD = b'| '
FOUND = re.compile(rb'Found (\d+) invalid bytes at the end of ')
POSITION = re.compile(rb' position: (\d+) ')
# The words a decoder prints for a record it cannot read, up to why: the
# coordinators' and the remote log metadata's `Error at offset N, skipping. `,
# the cluster metadata's `Error at N, skipping. `.
ERROR_WORDS = re.compile(rb'( (?:key|payload): Error at (?:offset )?-?\d+, skipping\. ).*')


def is_batch(line):
    return line.startswith((b'baseOffset: ', b'offset: '))


def lines(text):
    out = text.split(b'\n')
    return out[:-1] if out[-1] == b'' else out


def same(kafka, klog):
    """The classes one line pair needs to be the same line, or None."""
    if kafka == klog:
        return set()
    if ERROR_WORDS.sub(rb'\1', kafka) == ERROR_WORDS.sub(rb'\1', klog):
        return {'error_words'}
    return None


def rereads(batch, line):
    """Whether `line` (a list of at most one) is a batch line at or before
    the position of Kafka's batch line `batch`: the same batch read
    otherwise, not one klog went on to."""
    if not line or not is_batch(line[0]):
        return False
    at, was = POSITION.search(line[0]), POSITION.search(batch)
    return not at or not was or int(at.group(1)) <= int(was.group(1))


def walk(k, l, threw, checks, size):
    """The classes that explain klog's lines `l` beside Kafka's `k`, or None."""
    used = set()
    last_batch = max((i for i, line in enumerate(k) if is_batch(line)), default=0)
    i = j = 0
    while i < len(k):
        if j < len(l):
            why = same(k[i], l[j])
            if why is not None:
                used |= why
                i, j = i + 1, j + 1
                continue
        shows_record = j < len(l) and l[j].startswith(RECORD)
        if threw and i >= last_batch and not shows_record and not rereads(k[last_batch], l[j:j + 1]):
            # In the batch Kafka's tool threw in, klog shows fewer of its
            # records, or says what is damaged instead of its header line.
            return used | {'kafka_threw'}
        if checks and k[i].startswith(RECORD) and not shows_record:
            # klog shows no records of this batch from here on.
            while i < len(k) and k[i].startswith(RECORD):
                i += 1
            used.add('klog_checks_more')
            continue
        position = POSITION.search(k[i])
        found = FOUND.match(l[j]) if j == len(l) - 1 else None
        if checks and is_batch(k[i]) and found and position and \
                int(found.group(1)) == size - int(position.group(1)):
            # klog stops at this batch: the rest of the file is invalid bytes.
            return used | {'klog_checks_more'}
        return None
    if j < len(l) and not threw:
        return None
    return used | ({'kafka_threw'} if threw else set())


ORDER = ('kafka_threw', 'klog_checks_more', 'error_words', 'escaped')


def classify(kafka, klog, size):
    """The class of one round's pair of runs (see the module's docstring):
    `identical`, `unexplained`, or the classes that explain the difference
    joined by `+`."""
    if kafka.stdout == klog.stdout:
        return 'identical'
    threw = kafka.returncode != 0 and b'Exception' in kafka.stderr
    # What Kafka printed of the line it was writing when it threw is not a line.
    k = lines(kafka.stdout[:kafka.stdout.rfind(b'\n') + 1] if threw else kafka.stdout)
    checks = any(check in klog.stderr for check in CHECKS)
    why = walk(k, lines(klog.stdout), threw, checks, size)
    if why is None:
        why = walk(k, lines(unescape(klog.stdout)), threw, checks, size)
        why = None if why is None else why | {'escaped'}
    if why is None:
        return 'unexplained'
    return '+'.join(c for c in ORDER if c in why)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('rounds', type=int)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--kafka', default='4.4.0')
    parser.add_argument('--topics', choices=('data', 'internal', 'all'), default='all')
    parser.add_argument('--klog', default=os.path.join(REPO, 'target', 'release', 'klog'))
    parser.add_argument('--keep', help='copy each unexplained case here, with what each tool printed')
    parser.add_argument('--keep-all', action='store_true', help='with --keep: every case that is not identical')
    args = parser.parse_args()
    release = '.'.join(args.kafka.split('.')[:2])
    work = tempfile.mkdtemp(prefix='klog-damaged-dump-')
    try:
        cp = classpath(args.kafka, work)
        tool = dump_tool(cp)
        rng = __import__('random').Random(args.seed)
        groups = segments(args.kafka, args.topics)
        classes = collections.Counter()
        for n in range(args.rounds):
            # A topic kind first, then one of its segments: the few segments
            # of an internal topic are picked as often as the many of the
            # data topics (with one kind, as many draws as before kinds).
            decoder, pool = rng.choice(groups) if len(groups) > 1 else groups[0]
            source = rng.choice(pool)
            folder = os.path.join(work, 'w', os.path.basename(os.path.dirname(source)))
            shutil.rmtree(os.path.join(work, 'w'), ignore_errors=True)
            os.makedirs(folder)
            log = os.path.join(folder, os.path.basename(source))
            shutil.copy(source, log)
            campaign.damage(rng, log)
            flags = [decoder] if decoder else []
            kafka = subprocess.run(['java', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', cp, tool,
                                    '--deep-iteration', '--print-data-log', *flags, '--files', log],
                                   capture_output=True)
            klog = subprocess.run([args.klog, 'dump-segment', '--print-data-log', *flags,
                                   '--kafka-release', release, '--files', log],
                                  capture_output=True)
            kind = classify(kafka, klog, os.path.getsize(log))
            classes[kind] += 1
            if kind == 'unexplained':
                print(f'round {n}: {os.path.relpath(source, REPO)} differs', file=sys.stderr)
            if args.keep and (kind == 'unexplained' or args.keep_all and kind != 'identical'):
                case = os.path.join(args.keep, f'round-{n}')
                shutil.copytree(os.path.join(work, 'w'), case)
                for name, data in (('kafka.out', kafka.stdout), ('kafka.err', kafka.stderr),
                                   ('klog.out', klog.stdout), ('klog.err', klog.stderr)):
                    open(os.path.join(case, name), 'wb').write(data)
                open(os.path.join(case, 'case.txt'), 'w').write(
                    f'{kind}\n{os.path.relpath(source, REPO)}\n{" ".join(flags)}\n'
                    f'kafka exit {kafka.returncode}, klog exit {klog.returncode}\n')
        print(', '.join(f'{k}: {v}' for k, v in sorted(classes.items())))
        sys.exit(1 if classes['unexplained'] else 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
