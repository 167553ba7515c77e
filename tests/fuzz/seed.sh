#!/usr/bin/env bash
# Seed the fuzz corpora (corpus/<target>/) from the repository's fixtures,
# at run time, so that no binary corpus is committed:
#   segment  every fixture .log file, plus legacy (magic 0/1) entries built
#            here: plain messages and gzip wrappers
#   batch    every entry of every fixture .log, one file each
#   records  [recordsCount, 0, flags] + the uncompressed records section of
#            every plain or gzip batch (see `records` in src/lib.rs)
#   offsets  every key and value in __offsets, __consumer_offsets and
#            __transaction_state logs, every .index, .timeindex and
#            .txnindex file, and a producer snapshot built here
#   partition  every fixture .log as a one-segment partition (flags 0), and
#            split after its first entry into two segments (flags 6)
# Usage: tests/fuzz/seed.sh (from anywhere). Needs python3.
set -euo pipefail
cd "$(dirname "$0")"
python3 - <<'PY'
import glob, gzip, os, struct, zlib, hashlib

root = os.path.abspath("../..")
fixtures = os.path.join(root, "fixtures")
counts = {}

def put(target, data):
    d = os.path.join("corpus", target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    path = os.path.join(d, name)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
        counts[target] = counts.get(target, 0) + 1

def uvarint(b, i):
    shift = value = 0
    while True:
        x = b[i]; i += 1
        value |= (x & 0x7F) << shift
        if x < 0x80:
            return value, i
        shift += 7

def varint(b, i):
    v, i = uvarint(b, i)
    return (v >> 1) ^ -(v & 1), i

def entries(log):
    at = 0
    while len(log) - at > 17:
        size = struct.unpack(">i", log[at + 8:at + 12])[0]
        if size < 14 or at + 12 + size > len(log):
            return
        yield log[at:at + 12 + size]
        at += 12 + size

def records(section, count):
    i, out = 0, []
    for _ in range(count):
        length, i = varint(section, i)
        r, i = section[i:i + length], i + length
        j = 1
        _, j = varint(r, j)  # timestampDelta (varlong, same encoding)
        _, j = varint(r, j)  # offsetDelta
        kl, j = varint(r, j)
        key = None if kl < 0 else r[j:j + kl]
        j += max(kl, 0)
        vl, j = varint(r, j)
        value = None if vl < 0 else r[j:j + vl]
        out.append((key, value))
    return out

internal = ("__offsets-", "__consumer_offsets-", "__transaction_state-", "__cluster_metadata-",
            "__share_group_state-")
for path in sorted(glob.glob(os.path.join(fixtures, "**", "*.log"), recursive=True)):
    log = open(path, "rb").read()
    put("segment", log)
    # partition: flags 0 (one segment, as it is), and flags 6: split in two
    # halves at an entry boundary with a high-watermark checkpoint of 3.
    put("partition", b"\x00" + log)
    cut = next((e for e in entries(log)), b"")
    if 0 < len(cut) < len(log) and len(cut) < 65536:
        base = struct.unpack(">q", log[len(cut):len(cut) + 8])[0]
        if base > 0:
            put("partition", b"\x06" + struct.pack(">Hqq", len(cut), base, 3) + log)
    is_internal = os.path.basename(os.path.dirname(path)).startswith(internal)
    for e in entries(log):
        put("batch", e)
        if e[16] != 2 or len(e) < 61:
            continue
        attributes, = struct.unpack(">h", e[21:23])
        count, = struct.unpack(">i", e[57:61])
        codec, section = attributes & 7, e[61:]
        if codec == 1:
            section = gzip.decompress(section)
        elif codec != 0:
            continue
        flags = (1 if attributes & 8 else 0) | (codec << 1)
        put("records", bytes([min(count, 255), 0, flags]) + section)
        if is_internal:
            for key, value in records(section, count):
                for b in (key, value):
                    if b:
                        put("offsets", b)

for ext in ("index", "timeindex", "txnindex", "snapshot"):
    for path in glob.glob(os.path.join(fixtures, "**", "*." + ext), recursive=True):
        data = open(path, "rb").read()
        if data:
            put("offsets", data)

# CRC-32C (Castagnoli), bitwise: enough for a few seeds.
def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

# A producer snapshot (version 1, two entries).
body = struct.pack(">i", 2)
for pid in (100, 200):
    body += struct.pack(">qhiqiqiq", pid, 0, 4, 10, 4, 1700000000000, -1, -1)
put("offsets", struct.pack(">hI", 1, crc32c(body)) + body)

# Legacy entries: offset, size, crc (CRC-32 of magic..end), magic, attributes,
# [timestamp], key, value.
def legacy(offset, magic, attributes, ts, key, value):
    msg = bytes([magic, attributes])
    if magic == 1:
        msg += struct.pack(">q", ts)
    for f in (key, value):
        msg += struct.pack(">i", -1) if f is None else struct.pack(">i", len(f)) + f
    return struct.pack(">qiI", offset, len(msg) + 4, zlib.crc32(msg)) + msg

plain = legacy(0, 0, 0, -1, b"k", b"v0") + legacy(1, 1, 0, 1700000000000, None, b"v1")
inner_v1 = b"".join(legacy(i, 1, 0, 1700000000000 + i, None, b"x%d" % i) for i in range(3))
inner_v0 = b"".join(legacy(10 + i, 0, 0, -1, b"k", b"y") for i in range(2))
wrappers = (
    legacy(4, 1, 1, 1700000000002, None, gzip.compress(inner_v1, mtime=0))
    + legacy(11, 0, 1, -1, None, gzip.compress(inner_v0, mtime=0))
)
put("segment", plain + wrappers)
put("segment", wrappers)
for e in entries(plain + wrappers):
    put("batch", e)

for t in ("batch", "records", "offsets", "segment", "partition"):
    print(f"corpus/{t}: {counts.get(t, 0)} new seeds")
PY
