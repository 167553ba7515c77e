#!/usr/bin/env python3
"""`klog lag --format prometheus` read by the Prometheus project's own
Python client (prometheus_client, pinned below; its OpenMetrics parser)
and compared, sample by sample, with `klog lag --format json` on the same
directories: each committed offset and lag, each group's largest and
summed lag, each group's lag per topic, each partition's latest and
earliest offsets; no sample more, none missing.

    tests/lag/prometheus_check.py --klog PATH --venv DIR DIR...

The first run makes a venv in --venv and installs the pinned package there.
"""

import argparse
import json
import os
import subprocess
import sys

PACKAGE, VERSION = 'prometheus_client', '0.26.0'


def ensure(venv):
    """Return when the pinned package is importable; else install it into
    `venv` once and run this script again with the venv's python."""
    try:
        from importlib.metadata import version
        if version(PACKAGE) == VERSION:
            return
    except Exception:
        pass
    if os.environ.get('KLOG_PROMETHEUS_VENV'):
        sys.exit(f'{PACKAGE} {VERSION} is not importable even in {venv}')
    py = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(py):
        subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    subprocess.run([py, '-m', 'pip', 'install', '-q', f'{PACKAGE}=={VERSION}'], check=True)
    os.environ['KLOG_PROMETHEUS_VENV'] = '1'
    os.execv(py, [py] + sys.argv)


def klog(binary, fmt, d):
    o = subprocess.run([binary, 'lag', '--format', fmt, d], capture_output=True, text=True)
    if o.returncode not in (0, 1):
        sys.exit(f'klog lag --format {fmt} {d}: exit {o.returncode}: {o.stderr}')
    return o.stdout


def expected(doc, cluster):
    """The samples the rule gives for `lag --format json`'s document."""
    want = {}
    def put(name, labels, value):
        key = (name, tuple(sorted(labels.items())))
        assert key not in want, key
        want[key] = value
    ends, max_lag = {}, {}
    for p in doc['partitions']:
        member = {'cluster_name': cluster, 'group': p['group'], 'topic': p['topic'],
                  'partition': str(p['partition']), 'member_host': p['host'] or '',
                  'consumer_id': p['consumer_id'] or '', 'client_id': p['client_id'] or ''}
        put('kafka_consumergroup_group_offset', member, p['committed_offset'])
        if p['lag'] is not None:
            put('kafka_consumergroup_group_lag', member, p['lag'])
        max_lag[p['group']] = max(max_lag.get(p['group'], 0), p['lag'] or 0)
        if p['log_start_offset'] is not None:
            ends.setdefault((p['topic'], p['partition']), p)
    for g, lag in max_lag.items():
        put('kafka_consumergroup_group_max_lag', {'cluster_name': cluster, 'group': g}, lag)
    for g in doc['groups']:
        put('kafka_consumergroup_group_sum_lag', {'cluster_name': cluster, 'group': g['group']}, g['lag'])
    for t in doc['topics']:
        put('kafka_consumergroup_group_topic_sum_lag',
            {'cluster_name': cluster, 'group': t['group'], 'topic': t['topic']}, t['lag'])
    for (topic, partition), p in ends.items():
        labels = {'cluster_name': cluster, 'topic': topic, 'partition': str(partition)}
        latest = p['high_watermark'] if p['high_watermark'] is not None else p['log_end_offset']
        if latest is not None:
            put('kafka_partition_latest_offset', labels, latest)
        put('kafka_partition_earliest_offset', labels, p['log_start_offset'])
    return want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--klog', required=True)
    ap.add_argument('--venv', required=True)
    ap.add_argument('dirs', nargs='+')
    args = ap.parse_args()
    ensure(args.venv)
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    compared = 0
    for d in args.dirs:
        text = klog(args.klog, 'prometheus', d)
        doc = json.loads(klog(args.klog, 'json', d))
        got, clusters = {}, set()
        for family in text_string_to_metric_families(text):
            assert family.type == 'gauge', (family.name, family.type)
            for s in family.samples:
                clusters.add(s.labels.get('cluster_name'))
                got[(s.name, tuple(sorted(s.labels.items())))] = s.value
        # cluster_name is the directory's cluster.id (meta.properties).
        cluster = ''
        meta = os.path.join(d, 'meta.properties')
        if os.path.exists(meta):
            for line in open(meta, encoding='latin-1'):
                if line.startswith('cluster.id='):
                    cluster = line.strip().split('=', 1)[1]
        assert clusters <= {cluster}, (d, clusters, cluster)
        want = expected(doc, cluster)
        missing = set(want) - set(got)
        extra = set(got) - set(want)
        assert not missing and not extra, (d, sorted(missing)[:5], sorted(extra)[:5])
        for key, value in want.items():
            assert got[key] == value, (d, key, got[key], value)
        compared += len(want)
    print(f'{compared} samples compared over {len(args.dirs)} directories')


if __name__ == '__main__':
    main()
