import json, random, sys
# A Mooncake trace of N requests: bursts (several requests on one timestamp),
# shared prefixes (groups sharing leading block ids), and an Azure CSV of the
# same times and lengths.
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
t = 0.0
next_id = 1000
groups = [[g * 10 + k for k in range(4)] for g in range(6)]  # 6 shared prefixes of up to 4 blocks
rows = []
while len(rows) < N:
    burst = random.choice([1, 1, 1, 2, 3, 5])
    for _ in range(burst):
        if len(rows) == N: break
        inp = random.randint(200, 3000)
        nb = (inp + 511) // 512
        ids = []
        if random.random() < 0.7:
            g = random.choice(groups)
            k = random.randint(1, min(nb, len(g)))
            ids = g[:k]
        while len(ids) < nb:
            ids.append(next_id); next_id += 1
        rows.append((round(t, 3), inp, random.randint(4, 40), ids))
    t += random.expovariate(1 / 60.0)  # mean 60 ms between bursts
with open('trace.jsonl', 'w') as f:
    for ts, i, o, ids in rows:
        f.write(json.dumps({"timestamp": ts, "input_length": i, "output_length": o, "hash_ids": ids}) + "\n")
import datetime
base = datetime.datetime(2023, 11, 16, 18, 15, 46, 680590)
with open('trace.csv', 'w') as f:
    f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    for ts, i, o, ids in rows:
        d = base + datetime.timedelta(milliseconds=ts)
        f.write(d.strftime("%Y-%m-%d %H:%M:%S.%f") + "0,%d,%d\n" % (i, o))

