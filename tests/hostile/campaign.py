#!/usr/bin/env python3
"""A black-box mutation campaign: klog's commands on damaged copies of the
fixtures, for as long as asked.

    tests/hostile/campaign.py readers|repair|writers SECONDS [--seed N]
        [--klog PATH] [--out FINDINGS.jsonl]

Each round copies one fixture directory, damages one to three of its files
(bit flips, truncation, inserted or appended junk, zeroed runs, a 32-bit
field set to an extreme, or a checkpoint's text replaced), then:

- readers: one round in three also gets one of this round's attacks: a
  segment followed by a 4 GiB hole (a sparse file), or a group whose name
  is 32 KB (committed into the copy). Then it runs every reading command
  on it (verify-crc three ways,
  replay-offsets, lag, groups, info, transactions, stats, summary, metadata,
  report, dump-segment three ways on a random file, diff against the
  undamaged copy). Each must exit 0, 1 or 2 within 20 s of CPU time (120 s of wall
  time) without a panic;
  JSON output must parse; text output holds no raw control character;
  exit 2 prints nothing on stdout (but
  dump-segment, which streams: its head comes first, as kafka-dump-log's
  "Dumping" line does); verify-crc must not pass a segment whose
  CRC-covered bytes changed; and the report page stays under 4 times the
  size of its input plus 64 MiB.
- repair: runs `verify-crc --repair` (plain, --force-truncate, or
  --salvage): every byte of every file must still be on disk, in the file
  as it was, in its `.old` or `.cut*` copy, or (a log) rebuilt from what is
  kept and its `.cut-*` pieces in position order.
- writers: runs commit, tombstone, reset-offsets --execute or produce:
  every log keeps its bytes as a prefix (writers only append), nothing
  outside the directory changes, and the exit is 0, 1 or 2 without a panic.
  One round in three also gets one of: a `--replica` directory of another
  cluster (its meta.properties names another cluster.id: the write must be
  refused, exit 2, and neither directory change), or a partition folder
  swapped again and again for a symlink to a copy outside the directory
  while the writer runs (the copy outside must keep its bytes; a writer
  that finds no folder in the instant between the rename and the symlink
  may make a new one, which is kept beside as `.made-by-writer`).

What breaks a rule is written as one JSON line to --out (default
campaign-<mode>-<seed>.jsonl); the last line on stderr counts the rounds.
A seed and the fixture tree replay a round exactly. Needs python3 and a
built klog (default target/release/klog). Not run by `cargo test`: it is a
search, not a check; what it finds becomes a test.
"""
import argparse
import collections
import json
import os
import random
import resource
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
FIXTURES = os.path.join(REPO, 'fixtures')
NOW = ['--now-ms', '1700000100000']
READER_DIRS = ['broker', 'cleaner', 'corrupt', 'data', 'groups', 'kafka', 'kraft',
               'kraft-newer', 'kraft44', 'truncated', 'txn', 'cluster/broker-1',
               'cluster/broker-2', 'kafka-real/4.4.0/broker-1',
               'kafka-real/3.9.2/broker-2', 'kafka-real/4.4.0/writers',
               'kafka-tiered/4.3.2/broker-2']
REPAIR_DIRS = ['broker', 'cleaner/uncleaned', 'corrupt', 'data', 'groups', 'kafka', 'kraft',
               'truncated', 'txn', 'cluster/broker-1', 'cluster/broker-2',
               'kafka-real/4.4.0/broker-1']
WRITER_DIRS = ['kafka', 'groups', 'data', 'broker', 'kraft', 'cleaner/uncleaned', 'txn',
               'kafka-real/4.4.0/broker-1', 'kafka-real/3.9.2/broker-1']
CHECKPOINT_TEXTS = [b'0\n1\norders 1 999999999999\n', b'0\n2\n', b'1\n',
                    b'0\n1\n__consumer_offsets 0 -5\n', b'\xff\xfe']
# A control character a terminal acts on (C0 but line feed and tab, DEL,
# C1 in UTF-8): text output escapes every one that comes from the data.
RAW_CONTROL = re.compile(rb'[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]')
CUT = re.compile(r'^(.*\.log)\.cut-(\d+)(?:-(\d+))?$')


def files(top):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(top) for f in fs)


def crc_covered(log, pos):
    """Where the batch of a v2 log holding byte `pos` starts, when `pos`
    lies in its CRC-covered bytes (attributes to the end:
    DefaultRecordBatch); None otherwise, or when the framing or a magic
    other than 2 stops the walk first."""
    at = 0
    while at + 17 <= len(log):
        length = struct.unpack('>i', log[at + 8:at + 12])[0]
        if length < 14 or at + 12 + length > len(log) or log[at + 16] != 2:
            return None
        if at <= pos < at + 12 + length:
            return at if pos >= at + 21 else None
        at += 12 + length
    return None


def damage(rng, path):
    """Damage one file; return (what was done, whether a v2 batch's
    CRC-covered bytes now differ)."""
    orig = open(path, 'rb').read()
    data = bytearray(orig)
    kind = rng.choice(['flip', 'flip', 'flip', 'truncate', 'insert', 'append', 'zero', 'int'])
    if 'checkpoint' in os.path.basename(path) and rng.random() < 0.3:
        kind = 'text'
    if not data and kind != 'text':
        kind = 'append'
    if kind == 'flip':
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(len(data))
            data[p] ^= 1 << rng.randrange(8)
    elif kind == 'truncate':
        del data[rng.randrange(len(data)):]
    elif kind == 'insert':
        p = rng.randrange(len(data) + 1)
        data[p:p] = rng.randbytes(rng.randint(1, 64))
    elif kind == 'append':
        data += rng.randbytes(rng.randint(1, 200))
    elif kind == 'zero':
        p = rng.randrange(len(data))
        n = rng.randint(1, 300)
        data[p:p + n] = bytes(min(n, len(data) - p))
    elif kind == 'int' and len(data) >= 4:
        p = rng.randrange(len(data) - 3)
        value = rng.choice([-1, 0x7fffffff, -0x80000000, 1 << 24, 65536, 14])
        data[p:p + 4] = struct.pack('>i', value)
    elif kind == 'text':
        data = bytearray(rng.choice(CHECKPOINT_TEXTS))
    hit = False
    if path.endswith('.log') and len(data) == len(orig):
        starts = [crc_covered(orig, i) for i, (a, b) in enumerate(zip(orig, data)) if a != b]
        starts = [at for at in starts if at is not None]
        # A batch zeroed from its start to the end of the file is what
        # preallocated space looks like: no reader can tell them apart.
        hit = bool(starts) and any(data[min(starts):])
    open(path, 'wb').write(bytes(data))
    return kind, hit


class Campaign:
    def __init__(self, args):
        self.klog = os.path.abspath(args.klog)
        self.rng = random.Random(args.seed)
        self.seed = args.seed
        base = '/dev/shm' if os.path.isdir('/dev/shm') else None
        self.work = tempfile.mkdtemp(prefix='klog-campaign-', dir=base)
        self.out = open(args.out or f'campaign-{args.mode}-{args.seed}.jsonl', 'a')
        self.found = 0
        self.codes = collections.Counter()

    def run(self, argv, stdin=b''):
        """Run klog: its exit code ('timeout' past 120 s of wall time),
        stdout, stderr, and the CPU seconds it spent (user and system):
        a round is slow by the work klog does, not by how busy the
        machine is."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = lambda: (lambda r: r.ru_utime + r.ru_stime - before.ru_utime - before.ru_stime)(
            resource.getrusage(resource.RUSAGE_CHILDREN))
        try:
            p = subprocess.run([self.klog] + argv, capture_output=True, timeout=120,
                               input=stdin, cwd=self.work)
            return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace'), cpu()
        except subprocess.TimeoutExpired:
            return 'timeout', b'', '', cpu()

    def say(self, what, **detail):
        self.found += 1
        self.out.write(json.dumps({'what': what, 'seed': self.seed, **detail}) + '\n')
        self.out.flush()

    def fresh(self, dirs):
        """A damaged copy of one fixture directory: (its name, the copy, the damage)."""
        name = self.rng.choice(dirs)
        top = os.path.join(self.work, 't')
        shutil.rmtree(top, ignore_errors=True)
        os.makedirs(top)
        d = os.path.join(top, 'd')
        shutil.copytree(os.path.join(FIXTURES, name), d)
        with open(os.path.join(top, 'outside'), 'w') as f:
            f.write('not klog\'s')
        targets = self.rng.sample(files(d), k=self.rng.choice([1, 1, 1, 2, 3]))
        done = [(os.path.relpath(f, d), *damage(self.rng, f)) for f in targets]
        return name, d, done

    def checked(self, round_, argv, stdin=b''):
        code, out, err, took = self.run(argv, stdin)
        self.codes[(argv[0], code)] += 1
        detail = dict(round_, args=argv, code=code, took=round(took, 2), stderr=err[-600:])
        if code == 'timeout' or took > 20:
            self.say('slow', **detail)
        elif code not in (0, 1, 2) or 'panicked' in err:
            self.say('crash', **detail)
        return code, out, err, detail

    def attack_readers(self, d):
        """One of the readers' attacks on the copy `d`, or none: its name."""
        roll = self.rng.random()
        logs = [f for f in files(d) if f.endswith('.log')]
        if roll < 1 / 6 and logs:
            with open(self.rng.choice(logs), 'r+b') as f:
                f.truncate(os.fstat(f.fileno()).st_size + (4 << 30))
            return 'sparse_4gib'
        if roll < 1 / 3 and any('offsets' in os.path.basename(os.path.dirname(f)) for f in logs):
            code, _, err, _ = self.run(['commit', d, '--group', '<' * 32768, '--topic', 'orders',
                                        '--partition', '0', '--offset', '1', '--force']
                                       + (['--offsets-partitions', '50'] if 'kafka' in d else []) + NOW)
            return 'name_32k' if code == 0 else f'name_32k_refused_{code}'
        return None

    def readers(self, n):
        name, d, done = self.fresh(READER_DIRS)
        attack = self.attack_readers(d)
        round_ = {'round': n, 'dir': name, 'damage': done, 'attack': attack}
        input_size = sum(os.stat(f).st_blocks * 512 for f in files(d))
        rel = os.path.relpath(d, self.work)
        some_file = os.path.relpath(self.rng.choice(files(d)), self.work)
        argvs = [
            ['verify-crc', rel], ['verify-crc', rel, '--records', '--format', 'json'],
            ['verify-crc', rel, '--deep'],
            ['replay-offsets', rel, '--format', 'json'] + NOW, ['lag', rel] + NOW,
            ['groups', rel, '--format', 'csv'], ['info', rel, '--format', 'json'],
            ['transactions', rel, '--format', 'json'], ['stats', rel],
            ['summary', rel, '--format', 'json'], ['report', rel, '-o', 'r.html'] + NOW,
            ['dump-segment', some_file, '--records', '--format', 'json'],
            ['dump-segment', some_file, '--print-data-log'],
            ['dump-segment', some_file, '--layout'],
        ]
        if os.path.isdir(os.path.join(d, '__cluster_metadata-0')):
            argvs.append(['metadata', rel, '--format', 'json'])
        folders = sorted({os.path.dirname(f) for f in files(d) if f.endswith('.log')})
        if folders:
            folder = self.rng.choice(folders)
            undamaged = os.path.join(FIXTURES, name, os.path.relpath(folder, d))
            if os.path.isdir(undamaged):
                argvs.append(['diff', os.path.relpath(folder, self.work), undamaged, '--format', 'json'])
        crc_hit = any(hit for _, _, hit in done)
        for argv in argvs:
            code, out, err, detail = self.checked(round_, argv)
            if '--format' in argv and 'json' in argv and code in (0, 1) and out.strip():
                try:
                    json.loads(out)
                except ValueError as e:
                    self.say('json', error=str(e)[:200], **detail)
            if '--format' not in argv:
                for stream, text in (('stdout', out), ('stderr', err.encode())):
                    raw = RAW_CONTROL.search(text)
                    if raw:
                        near = text[max(0, raw.start() - 40):raw.start() + 10]
                        self.say('unescaped', stream=stream,
                                 near=near.decode('utf-8', 'replace'), **detail)
            if code == 2 and out.strip() and argv[0] != 'dump-segment':
                self.say('stdout_on_exit_2', stdout=out[:200].decode('utf-8', 'replace'), **detail)
            if argv == ['verify-crc', rel] and crc_hit and code == 0:
                self.say('silent', **detail)
            page = os.path.join(self.work, 'r.html')
            if argv[0] == 'report' and os.path.exists(page):
                if os.path.getsize(page) > 4 * input_size + (64 << 20):
                    self.say('page_too_big', size=os.path.getsize(page), input=input_size, **detail)
                os.remove(page)

    def repair(self, n):
        name, d, done = self.fresh(REPAIR_DIRS)
        before = {f: open(f, 'rb').read() for f in files(d)}
        how = self.rng.choice([[], ['--force-truncate'], ['--salvage', '--salvage-some-replicas']])
        _, _, _, detail = self.checked({'round': n, 'dir': name, 'damage': done},
                                       ['verify-crc', d, '--repair'] + how)
        after = files(d)
        for f, b in before.items():
            if not b or (os.path.exists(f) and open(f, 'rb').read() == b):
                continue
            if f.endswith('.log'):
                rebuilt = rebuild_log(f, after)
                if rebuilt != b:
                    self.say('bytes_lost', file=os.path.relpath(f, d), size=len(b),
                             rebuilt=len(rebuilt), **detail)
            elif not any((o.startswith(f + '.old') or o.startswith(f + '.cut'))
                         and open(o, 'rb').read() == b for o in after):
                self.say('bytes_lost', file=os.path.relpath(f, d), size=len(b), **detail)

    def other_cluster(self, d):
        """A copy of `d` beside it whose meta.properties names another cluster."""
        other = os.path.join(os.path.dirname(d), 'other')
        shutil.copytree(d, other)
        meta = os.path.join(other, 'meta.properties')
        text = (open(meta, 'rb').read().decode('latin-1') if os.path.exists(meta)
                else 'version=1\nnode.id=2\n')
        text = re.sub(r'cluster\.id=.*', '', text) + '\ncluster.id=b3RoZXItY2x1c3Rlci0w\n'
        open(meta, 'wb').write(text.encode('latin-1'))
        return other

    def swapper(self, d, stop):
        """Swap a partition folder of `d` for a symlink to a copy outside, again and again."""
        folders = [f for f in sorted(os.listdir(d)) if os.path.isdir(os.path.join(d, f))]
        if not folders:
            return None
        folder = os.path.join(d, self.rng.choice(folders))
        decoy = os.path.join(os.path.dirname(d), 'decoy')
        shutil.copytree(folder, decoy)

        def swap():
            real = folder + '.real'
            while not stop.is_set():
                try:
                    os.rename(folder, real)
                    os.symlink(decoy, folder)
                    time.sleep(0.001)
                    os.unlink(folder)
                    os.rename(real, folder)
                except OSError:
                    pass
            if os.path.islink(folder):
                os.unlink(folder)
            if os.path.exists(folder + '.real') and os.path.isdir(folder):
                # The writer found no folder between the rename and the
                # symlink and made a new one (a writer may create a
                # partition folder): it is kept beside, the real one put back.
                os.rename(folder, folder + '.made-by-writer')
            if os.path.exists(folder + '.real') and not os.path.exists(folder):
                os.rename(folder + '.real', folder)
        return threading.Thread(target=swap)

    def writers(self, n):
        name, d, done = self.fresh(WRITER_DIRS)
        top = os.path.dirname(d)
        roll = self.rng.random()
        attack, other, stop, thread = None, None, threading.Event(), None
        if roll < 1 / 6:
            attack, other = 'other_cluster', self.other_cluster(d)
        before = {f: open(f, 'rb').read() for f in files(top)}
        group = self.rng.choice(['shipping', 'billing', 'kitchen'])
        partitions = ['--offsets-partitions', '50'] if name == 'kafka' else []
        argv = self.rng.choice([
            ['commit', d, '--group', group, '--topic', 'orders', '--partition', '0', '--offset', '3'],
            ['tombstone', d, '--group', group, '--delete-group', '--force'],
            ['tombstone', d, '--group', group, '--topic', 'orders'],
            ['reset-offsets', d, '--group', group, '--all-topics', '--to-earliest', '--execute', '--force'],
            ['produce', d, '--topic', 'orders', '--partition', self.rng.choice(['0', '1'])],
        ])
        if argv[0] != 'produce':
            argv += partitions + NOW
        if other:
            argv[2:2] = ['--replica', other]
        elif roll < 1 / 3:
            thread = self.swapper(d, stop)
            attack = 'swapped_folder' if thread else None
            before = {f: open(f, 'rb').read() for f in files(top)}
            if thread:
                thread.start()
        try:
            code, _, _, detail = self.checked({'round': n, 'dir': name, 'damage': done,
                                               'attack': attack}, argv, stdin=b'k1\tv1\nk2\tv2\n')
        finally:
            stop.set()
            if thread:
                thread.join()
        if other and code != 2:
            self.say('other_cluster_written', **detail)
        rewritten = ('.index', '.timeindex', '.txnindex', '.snapshot', 'checkpoint', '.lock',
                     'partition.metadata')
        for f, b in before.items():
            if not os.path.exists(f):
                self.say('file_gone', file=os.path.relpath(f, top), **detail)
                continue
            a = open(f, 'rb').read()
            appended = a.startswith(b) and f.startswith(d + '/') and 'checkpoint' not in f
            if a != b and not appended and not f.endswith(rewritten):
                self.say('bytes_changed', file=os.path.relpath(f, top), size=len(b),
                         now=len(a), **detail)
        for f in files(top):
            if f not in before and not f.startswith(d + '/'):
                self.say('wrote_outside', file=f, **detail)


def rebuild_log(log, now):
    """A log as it was before repair: what is kept, with every `.cut-*`
    piece put back at its position."""
    kept = open(log, 'rb').read() if os.path.exists(log) else b''
    pieces = {}
    for f in now:
        m = CUT.match(f)
        if m and m.group(1) == log:
            pieces[int(m.group(2))] = open(f, 'rb').read()
    out, k = bytearray(), 0
    while pieces or k < len(kept):
        if len(out) in pieces:
            out += pieces.pop(len(out))
            continue
        if k >= len(kept):
            break
        later = [p for p in pieces if p > len(out)]
        take = min(later) - len(out) if later else len(kept) - k
        take = min(take, len(kept) - k)
        out += kept[k:k + take]
        k += take
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('mode', choices=['readers', 'repair', 'writers'])
    parser.add_argument('seconds', type=float)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--klog', default=os.path.join(REPO, 'target', 'release', 'klog'))
    parser.add_argument('--out')
    args = parser.parse_args()
    campaign = Campaign(args)
    step = getattr(campaign, args.mode)
    end, n = time.time() + args.seconds, 0
    try:
        while time.time() < end:
            n += 1
            step(n)
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)
    codes = ', '.join(f'{c} exit {e}: {k}' for (c, e), k in sorted(campaign.codes.items(), key=str))
    print(f'{args.mode}: {n} rounds, {campaign.found} found ({codes})', file=sys.stderr)
    sys.exit(1 if campaign.found else 0)


if __name__ == '__main__':
    main()
