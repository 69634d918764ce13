import json, subprocess, sys
# Check a replay against its trace: every request sent once, prompt tokens
# (server's usage) and max_tokens asked equal the trace's, output served
# equal to asked; send lateness (t_send - t_sched) p50/p99.
tt, run, trace = sys.argv[1], sys.argv[2], sys.argv[3]
limit_ms = float(sys.argv[4]) if len(sys.argv) > 4 else None
fmt = 'azure' if trace.endswith('.csv') else 'mooncake'
rows = {}
with open(trace) as f:
    for ln, line in enumerate(f, 1):
        if fmt == 'mooncake':
            o = json.loads(line)
            rows[ln] = (o['input_length'], o['output_length'], o.get('hash_ids', []))
        elif ln > 1:
            ts, i, o = line.strip().split(',')
            rows[ln] = (int(i), int(o), [])
out = subprocess.run([tt, 'dump', run], capture_output=True, text=True, check=True).stdout
reqs = [json.loads(l) for l in out.splitlines() if '"type":"request"' in l]
bad = []
seen = set()
late = []
for r in reqs:
    w = r.get('workload')
    if not w:
        bad.append('no workload group: seq %d' % r['seq']); continue
    ln = w['line']
    if ln in seen: bad.append('line %d twice' % ln)
    seen.add(ln)
    i, o, ids = rows[ln]
    if w['prompt_asked'] != i or r['prompt_tokens'] != i:
        bad.append('line %d: prompt asked %d, served %d, trace %d' % (ln, w['prompt_asked'], r['prompt_tokens'], i))
    if w['output_asked'] != o:
        bad.append('line %d: output asked %d, trace %d' % (ln, w['output_asked'], o))
    got = sum(c[1] for c in r['chunks'])
    if r['finish'] in ('length', 'stop') and got != o:
        bad.append('line %d: output served %d, asked %d' % (ln, got, o))
    if w['blocks'] != ids:
        bad.append('line %d: blocks %s, trace %s' % (ln, w['blocks'], ids))
    late.append(r['send'] - r['sched'])
missing = set(rows) - seen
if missing: bad.append('%d trace rows never sent (e.g. line %d)' % (len(missing), min(missing)))
late.sort()
p = lambda q: late[min(len(late) - 1, int(q * len(late)))] / 1e6
span = (max(r['sched'] for r in reqs) - min(r['sched'] for r in reqs)) / 1e9
print('%s: requests %d over %.2f s (%.1f/s); send lateness p50 %.3f ms p99 %.3f ms max %.3f ms'
      % (trace, len(reqs), span, len(reqs) / span, p(0.5), p(0.99), late[-1] / 1e6))
if limit_ms is not None and p(0.99) > limit_ms:
    bad.append('send lateness p99 %.3f ms above %.3f ms' % (p(0.99), limit_ms))
for b in bad[:10]: print('BAD', b)
sys.exit(1 if bad else 0)
