#!/usr/bin/env python3
"""Compare klog's record schema tables with a Kafka release's schema files.

    python3 tests/kafka/schemas.py RELEASE TABLES_JSON JAR... [--logs LIST]

TABLES_JSON is what `klog generate tables DIR` writes (DIR/record-tables.json);
the JARs are the release's jars (tests/kafka/schemas.sh resolves them with
mvn). Every `common/metadata/*.json` and `common/message/*.json` schema in
them is read (Kafka's JSON with comments and trailing commas) and compared
with klog's table of the same name, field by field, at every version both
read: a field's name, type, versions, nullableVersions, tag and
taggedVersions, its default, and for a struct-typed field the version
check of its nested class; the wire order of the untagged fields, the
schema's validVersions and flexibleVersions, and its record type (apiKey).
A coordinator key carries no version of its own in klog: its fields are
compared at the key file's version.

A default is the value Kafka's generated class gives a field the record
does not set (a tagged field its writer left out: its writer and its JSON
converter leave a tagged field out exactly when it is at its default):
the file's "default", else its type's own (MessageDataGenerator.fieldDefault:
0, false, "", a zero uuid, empty bytes, an empty array, a new struct), and
klog's table must hold the same value ("null" included; of a struct only
whether it is null, its fields' defaults being compared one by one).

A nested class's version check (kafka_nested): MessageDataGenerator gives
the class of a struct declared inline the versions of the class holding it
narrowed to the field's versions, and its read throws
UnsupportedVersionException for any other version the field may have, so a
struct's versions can be narrower than the message's reader: Kafka 4.4's
RegisterBrokerRecord.read checks no version, its BrokerEndpoint.read throws
above 4. klog's table must name the same struct with the same versions, as
far as both read the field, or say there is no check where Kafka has none
(a commonStructs class reads any version). The rule gives the versions and
the check of every nested class in the metadata, control and coordinator
jars of 3.9.2 to 4.4.0 (their LOWEST/HIGHEST_SUPPORTED_VERSION and read,
by javap).

The release of each version in klog's tables is checked as well: a version
introduced in this release or before it must be in the release's
validVersions, a later one must not. A klog field added by a later release
(its `since`: a tagged field added to an existing version) is left out of
an earlier release's comparison; before a table's `fileSince` the release's
file of that name may be missing or hold an early-access layout, and only
the versions are compared; from a table's `removed` on, the release must
have no file of that name.

Missing on either side is a difference: a metadata schema, a KRaft control
record schema (LeaderChangeMessage, SnapshotHeaderRecord,
SnapshotFooterRecord, KRaftVersionRecord, VotersRecord) or a coordinator
key/value file (`"type": "coordinator-key"` / `"coordinator-value"`) of the
release that klog has no table for, or a klog table whose versions this
release should hold and does not name.

klog's tables of the group coordinator include the consumer protocol's
ConsumerProtocolSubscription and ConsumerProtocolAssignment (part
"embedded": the bytes of a classic group's members), compared like the
others.

--logs LIST limits the check to some of klog's logs (comma-separated:
metadata, kraft-control, group-coordinator, share-coordinator,
transaction-log). Prints one line per difference; exit 1 if any, 0 if none,
2 on bad input.
"""

import json
import re
import sys
import zipfile

OPEN = 32767
PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "int64", "float64",
              "uuid", "string", "bytes", "records"}
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
CONTROL_NAMES = {"LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord",
                 "KRaftVersionRecord", "VotersRecord"}


def strip_json(text):
    """Kafka's schema files are JSON with // and /* */ comments and trailing commas."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
        elif c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[\]}])", r"\1", "".join(out))


def versions(spec):
    """'0+', '3', '1-2', 'none' or None -> (lo, hi) or None."""
    if spec is None or spec == "none" or spec == "":
        return None
    spec = str(spec).strip()
    if spec.endswith("+"):
        return (int(spec[:-1]), OPEN)
    if "-" in spec:
        a, b = spec.split("-")
        return (int(a), int(b))
    return (int(spec), int(spec))


def clip(r, lo, hi):
    if r is None:
        return None
    a, b = max(r[0], lo), min(r[1], hi)
    return (a, b) if a <= b else None


def show(r):
    if r is None:
        return "none"
    a, b = r
    return f"{a}+" if b >= OPEN else (str(a) if a == b else f"{a}-{b}")


def release_key(name):
    """'4.3', '4.3.1' or '3.9 or earlier' -> (4, 3); 'none' -> a release after all."""
    if name == "none":
        return (99, 0)
    m = re.match(r"(\d+)\.(\d+)", name)
    return (int(m.group(1)), int(m.group(2)))


def kafka_schemas(jars):
    """name -> (file, schema) of every common/metadata and common/message JSON."""
    out = {}
    for jar in jars:
        try:
            z = zipfile.ZipFile(jar)
        except (OSError, zipfile.BadZipFile):
            continue
        for n in z.namelist():
            if not re.match(r"common/(metadata|message)/[^/]+\.json$", n):
                continue
            try:
                s = json.loads(strip_json(z.read(n).decode("utf-8")))
            except ValueError as e:
                sys.exit(f"schemas.py: {jar}!{n}: not JSON: {e}")
            if isinstance(s, dict) and "name" in s:
                out.setdefault(s["name"], (f"{jar.rsplit('/', 1)[-1]}!{n}", s))
    return out


def kafka_type(t):
    """A Kafka field type as klog's dump writes it: structs are 'struct'."""
    if t.startswith("[]"):
        inner = t[2:]
        return "[]" + (inner if inner in PRIMITIVES else "struct")
    return t if t in PRIMITIVES else "struct"


def kafka_struct_fields(field, common):
    """The fields of a struct-typed Kafka field (inline or a commonStruct)."""
    if "fields" in field:
        return field["fields"]
    name = field["type"][2:] if field["type"].startswith("[]") else field["type"]
    return common.get(name, {}).get("fields")


def field_versions(f):
    """A field's versions: its taggedVersions when it gives none
    (FieldSpec: "If versions is not set, but taggedVersions is, default to
    taggedVersions")."""
    return versions(f.get("versions") or f.get("taggedVersions"))


def kafka_default(field, common):
    """The default Kafka's generated class gives a field
    (MessageDataGenerator.fieldDefault), as klog's tables write it: the
    file's "default", else the type's own (0, false, "", a zero uuid, empty
    bytes, an empty array, a new struct); "null" is null. An integer may be
    hex (0x...). A struct that is not null is {}: its fields' defaults are
    compared field by field."""
    text = field.get("default", "")
    text = ("true" if text else "false") if isinstance(text, bool) else str(text)
    t = field["type"]
    if text == "null":
        return None
    if t.startswith("[]"):
        return []
    if t in ("int8", "int16", "uint16", "int32", "int64"):
        if not text:
            return 0
        return int(text[2:], 16) if text.startswith("0x") else int(text, 10)
    if t == "float64":
        return float(text) if text else 0.0
    if t == "bool":
        return text == "true"
    if t == "uuid":
        return text or ZERO_UUID
    if t in ("string", "bytes"):
        return text
    return {}


def klog_default(value):
    """klog's default of a field, a struct's shown as {} (see kafka_default)."""
    return {} if isinstance(value, dict) else value


def kafka_nested(field, parent):
    """(type name, versions) of a struct-typed field's class when its read
    checks the version, else None. MessageDataGenerator gives the class of
    a struct declared inline the versions of the class holding it
    (`parent`) narrowed to the field's versions; its read throws
    UnsupportedVersionException for a version the field may have and the
    class does not (`VersionConditional.forVersions`). A commonStructs
    class has its own versions and checks none."""
    if "fields" not in field:
        return None
    fv = field_versions(field)
    own = clip(parent, fv[0], fv[1])
    if own == fv:
        return None
    name = field["type"][2:] if field["type"].startswith("[]") else field["type"]
    return (name, own)


def class_versions(field, parent, common):
    """The versions of a struct-typed field's class (see kafka_nested)."""
    if "fields" in field:
        fv = field_versions(field)
        return clip(parent, fv[0], fv[1])
    name = field["type"][2:] if field["type"].startswith("[]") else field["type"]
    return versions(common.get(name, {}).get("versions", "0+"))


def compare_fields(where, kf, jf, common, lo, hi, rel, out, parent):
    """Compare Kafka fields kf with klog fields jf over versions lo..hi, in
    release rel (a klog field added by a later release is left out);
    `parent` is the versions of the Kafka class holding kf."""
    # Only the fields present in lo..hi on either side.
    def live(fields, rng):
        res = []
        for f in fields or []:
            r = clip(rng(f), lo, hi)
            if r is not None:
                res.append((f, r))
        return res
    kl = live(kf, field_versions)
    jl = live([f for f in jf or [] if release_key(f.get("since", "3.9")) <= rel], field_versions)
    kn = {f["name"]: (f, r) for f, r in kl}
    jn = {f["name"]: (f, r) for f, r in jl}
    for name in kn:
        if name not in jn:
            out.append(f"{where}: field {name} (versions {show(kn[name][1])}) is missing in klog")
    for name in jn:
        if name not in kn:
            out.append(f"{where}: field {name} is in klog (versions {show(jn[name][1])}), not in Kafka")
    order_k = [f["name"] for f, _ in kl if f["name"] in jn]
    order_j = [f["name"] for f, _ in jl if f["name"] in kn]
    if order_k != order_j:
        out.append(f"{where}: field order differs: Kafka {order_k}, klog {order_j}")
    for name, (k, kr) in kn.items():
        if name in jn:
            compare_field(f"{where}.{name}", k, kr, *jn[name], common, rel, out, parent)


def compare_field(w, k, kr, j, jr, common, rel, out, parent):
    """Compare Kafka's field k (live in versions kr) with klog's j (jr)."""
    if kafka_type(k["type"]) != j["type"]:
        out.append(f"{w}: type {k['type']} in Kafka, {j['type']} in klog")
    if kr != jr:
        out.append(f"{w}: versions {show(kr)} in Kafka, {show(jr)} in klog")
    lo2, hi2 = kr
    kn_r = clip(versions(k.get("nullableVersions")), lo2, hi2)
    jn_r = clip(versions(j.get("nullableVersions")), lo2, hi2)
    if kn_r != jn_r:
        out.append(f"{w}: nullableVersions {show(kn_r)} in Kafka, {show(jn_r)} in klog")
    kt = clip(versions(k.get("taggedVersions")), lo2, hi2)
    jt = clip(versions(j.get("taggedVersions")), lo2, hi2)
    if kt != jt:
        out.append(f"{w}: taggedVersions {show(kt)} in Kafka, {show(jt)} in klog")
    if kt is not None and jt is not None:
        ktag = int(k.get("tag")) if k.get("tag") is not None else None
        if ktag != j.get("tag"):
            out.append(f"{w}: tag {ktag} in Kafka, {j.get('tag')} in klog")
    kd, jd = kafka_default(k, common), klog_default(j.get("default"))
    if json.dumps(kd) != json.dumps(jd):
        out.append(f"{w}: default {json.dumps(kd)} in Kafka, {json.dumps(jd)} in klog")
    if not j["type"].endswith("struct"):
        return
    # The nested class's versions, as far as both read the field.
    kx = kafka_nested(k, parent)
    kx = kx and (kx[0], clip(kx[1], lo2, hi2))
    jx = j.get("nested")
    jx = jx and (jx["name"], clip(versions(jx["versions"]), lo2, hi2))
    if kx != jx:
        def nested(x):
            return f"{x[0]} reads versions {show(x[1])}" if x else "no version check"
        out.append(f"{w}: nested struct: {nested(kx)} in Kafka, {nested(jx)} in klog")
    compare_fields(w, kafka_struct_fields(k, common), j.get("fields"), common, lo2, hi2, rel, out,
                   class_versions(k, parent, common))


def compare_entry(e, kafka, release, out):
    """Compare klog's table e with the release's schema file of its name."""
    rel = release_key(release)
    name = e["name"]
    where = f"{e['log']} {name}"
    since = e["since"]
    lo_j, hi_j = versions(e["validVersions"])
    # Which of klog's versions this release should hold, by the tables.
    expected = [lo_j + i for i, r in enumerate(since) if release_key(r) <= rel]
    removed = e.get("removed")
    if removed is not None and release_key(removed) <= rel:
        if name in kafka:
            out.append(f"{where}: klog's table says {removed} no longer reads it, "
                       f"yet Kafka {release} has {kafka[name][0]}")
        return
    # Before fileSince the release's file of this name was missing or
    # held another (early-access) layout: only its versions are compared.
    layout = release_key(e.get("fileSince", "3.9")) <= rel
    if name not in kafka:
        if expected and rel >= (3, 9) and layout:
            out.append(f"{where}: no schema of this name in Kafka {release}, though klog's "
                       f"table says versions {show((expected[0], expected[-1]))} came in "
                       f"{since[expected[0] - lo_j]} (removed since, or the release is wrong)")
        return
    file, k = kafka[name]
    kv = versions(k.get("validVersions"))
    is_key = e["part"] == "key" and e["log"] != "transaction-log"
    # The record type: apiKey (newer files) or, for keys of older ones, validVersions.
    api_key = k.get("apiKey")
    if api_key is None and is_key and kv is not None and kv[0] == kv[1] and kv[0] > 0:
        api_key = kv[0]
    if api_key is not None and int(api_key) != e["id"] and e["log"] != "kraft-control":
        out.append(f"{where}: record type {e['id']} in klog, apiKey {api_key} in Kafka ({file})")
    if kv is None:
        out.append(f"{where}: Kafka's {file} has no validVersions")
        return
    if e["fields"] is None:
        out.append(f"{where}: klog has no field table (Kafka: validVersions {show(kv)}, {file})")
    if is_key:
        if layout:
            compare_key(where, e, k, kv, rel, out)
        return
    if rel >= (3, 9):
        for v in range(lo_j, hi_j + 1):
            held = kv[0] <= v <= kv[1]
            if (v in expected) != held:
                out.append(f"{where} v{v}: klog says it came in {since[v - lo_j]}, "
                           f"Kafka {release} {'has' if held else 'does not have'} it "
                           f"(validVersions {show(kv)})")
    for v in range(kv[0], kv[1] + 1):
        if not lo_j <= v <= hi_j:
            out.append(f"{where} v{v}: in Kafka {release} (validVersions {show(kv)}), not in klog")
    if e["fields"] is not None and layout:
        compare_layout(where, e, k, kv, rel, out)


def compare_key(where, e, k, kv, rel, out):
    """A coordinator key: klog's at version 0, Kafka's at its version."""
    if e["fields"] is not None:
        kf = [f for f in k.get("fields", []) if clip(field_versions(f), kv[0], kv[0])]
        kf = [dict(f, versions="0") for f in kf]
        compare_fields(where, kf, e["fields"], {}, 0, 0, rel, out, (0, 0))
    kflex = versions(k.get("flexibleVersions"))
    if clip(kflex, kv[0], kv[0]) is not None and e["flexibleVersions"] == "none":
        out.append(f"{where}: flexible in Kafka, not in klog")


def compare_layout(where, e, k, kv, rel, out):
    """flexibleVersions and the fields, at the versions Kafka has and klog reads."""
    lo_j, hi_j = versions(e["validVersions"])
    lo, hi = max(kv[0], lo_j), min(kv[1], hi_j)
    if lo > hi:
        return
    kflex = clip(versions(k.get("flexibleVersions")), lo, hi)
    jflex = clip(versions(e["flexibleVersions"]), lo, hi)
    if kflex != jflex:
        out.append(f"{where}: flexibleVersions {show(kflex)} in Kafka, {show(jflex)} in klog")
    common = {c["name"]: c for c in k.get("commonStructs", [])}
    compare_fields(where, k.get("fields", []), e["fields"], common, lo, hi, rel, out, kv)


def untabled(kafka, named, logs, release):
    """The release's schemas of klog's logs that klog has no table for."""
    out = []
    for name, (file, k) in sorted(kafka.items()):
        if name in named:
            continue
        t = k.get("type")
        if file.split("!")[1].startswith("common/metadata/"):
            log = "metadata"
        elif name in CONTROL_NAMES:
            log = "kraft-control"
        elif t in ("coordinator-key", "coordinator-value"):
            log = "coordinator"
        else:
            continue
        if logs is not None and log != "coordinator" and log not in logs:
            continue
        if logs is not None and log == "coordinator" and not logs & {
                "group-coordinator", "share-coordinator", "transaction-log"}:
            continue
        out.append(f"{log} {name}: in Kafka {release} ({file}, validVersions "
                   f"{k.get('validVersions')}), no table in klog")
    return out


def main(argv):
    logs = None
    if "--logs" in argv:
        i = argv.index("--logs")
        logs = set(argv[i + 1].split(","))
        del argv[i:i + 2]
    if len(argv) < 3:
        sys.exit(__doc__)
    release, tables_path, jars = argv[0], argv[1], argv[2:]
    with open(tables_path) as f:
        tables = json.load(f)
    kafka = kafka_schemas(jars)
    if not kafka:
        print("schemas.py: no schema files in the jars given", file=sys.stderr)
        return 2
    out = []
    named = set()
    for e in tables["schemas"]:
        if logs is not None and e["log"] not in logs:
            continue
        named.add(e["name"])
        compare_entry(e, kafka, release, out)
    out += untabled(kafka, named, logs, release)
    for line in out:
        print(f"{release} {line}")
    sys.stdout.flush()
    print(f"schemas.py: Kafka {release}: {len(out)} difference(s)", file=sys.stderr)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
