#!/usr/bin/env python3
"""Write hostile runs for tests/cli/test_hostile.sh.

usage: hostile_gen.py BASE_RUN OUT_DIR

BASE_RUN is a good run (tokentrace synth of fixtures/profiles/small.csv).
Each case is a directory OUT_DIR/<case> (or a file), built from formats/run-v1.md
only: manifests as JSON, traces as records packed here and compressed with the
zstd command (which writes the content size the format requires).
"""
import copy
import json
import os
import shutil
import struct
import subprocess
import sys

base, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
manifest = json.load(open(os.path.join(base, "manifest.json")))

ESC = "\x1b]0;pwned\x07\x1b[31mRED\x1b[0m"
FORMULA = "=HYPERLINK(\"http://x\",\"y\")"
HTML = "<img src=x onerror=alert(1)>"
BADUTF8 = b"bad\xff\xfe\xc3(utf8"


def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7F) | 0x80)
        v >>= 7
    b.append(v)
    return bytes(b)


def svarint(v):
    return varint((v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1)


def s(b):
    return varint(len(b)) + b


def rec(t, payload):
    return bytes([t]) + varint(len(payload)) + payload


def header(unit=1000, base_t=0):
    return rec(1, b"TTRC" + varint(1) + varint(0) + varint(unit) + svarint(base_t))


def request(slot, seq, sched, send, end, chunks, error=b"", role=0, finish=1, fail=0):
    """Times in units; chunks: [(arrival, tokens)]."""
    p = varint(slot) + varint(seq) + bytes([role, finish, fail]) + varint(200)
    p += varint(101) + varint(0)
    p += svarint(sched) + svarint(send - sched) + svarint(end - send)
    p += s(error) + varint(len(chunks))
    t = send
    for a, _ in chunks:
        p += varint(max(0, a - t))
        t = a
    for _, k in chunks:
        p += varint(k)
    return rec(2, p)


def scrape(t, samples):
    p = svarint(t) + varint(len(samples))
    for name, labels, value in samples:
        p += s(name) + s(labels) + struct.pack("<d", value)
    return rec(3, p)


def whole_records_file(records, path):
    """One frame per ~200 KiB of whole records, each starting with a header."""
    frames, cur = [], bytearray()
    for r in records:
        if len(cur) + len(r) > (200 << 10) and cur:
            frames.append(bytes(cur))
            cur = bytearray()
        cur += r
    frames.append(bytes(cur))
    with open(path, "wb") as f:
        for fr in frames:
            tmp = path + ".raw"
            with open(tmp, "wb") as t:
                t.write(header() + fr)
            f.write(subprocess.run(["zstd", "-q", "-c", "--check", tmp], check=True,
                                   stdout=subprocess.PIPE).stdout)
            os.unlink(tmp)


def new_case(name, m=None):
    d = os.path.join(out, name)
    shutil.copytree(base, d)
    if m is not None:
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f)
    return d


def write_manifest_bytes(d, data):
    with open(os.path.join(d, "manifest.json"), "wb") as f:
        f.write(data)


decode_cell = next(c for c in manifest["cells"] if c["id"] == "decode-8192x1")
w0, w1 = decode_cell["window_start_ns"] // 1000, decode_cell["window_end_ns"] // 1000

# -- strings: escapes, formula, html, long strings in every string field
m = copy.deepcopy(manifest)
m["tool"] = {"name": ESC, "version": FORMULA}
m["created"] = ESC
m["server"] = {"url": "http://" + ESC, "engine": FORMULA, "engine_version": HTML}
m["model"] = {"id": ESC + FORMULA, "served_name": HTML}
m["notes"] = [{"key": HTML, "value": ESC}, {"key": "gpu", "value": FORMULA},
              {"key": "launch_command", "value": "vllm --api-key sk-SECRET " + ESC},
              {"key": ESC, "value": "-cmd|' /C calc'!A0"}]
m["kv_capacity"]["source"] = ESC
for c in m["cells"]:
    c["reason"] = ESC + HTML + FORMULA
new_case("strings-injection", m)

# cell ids outside the spec's pattern
m = copy.deepcopy(manifest)
m["cells"][0]["id"] = "=HYPERLINK(\"http://evil\")"
new_case("cell-id-formula", m)
m = copy.deepcopy(manifest)
m["cells"][0]["id"] = "+cmd|' /C calc'!A0"
new_case("cell-id-plus", m)
m = copy.deepcopy(manifest)
m["cells"][0]["id"] = "prefill-1\x1b[2J"
new_case("cell-id-escape", m)

# invalid UTF-8 in manifest strings (the JSON parser passes bytes through)
raw = json.dumps(manifest).replace('"synthetic-model"', '"@@BAD@@"', 1).encode()
d = new_case("bad-utf8-manifest")
write_manifest_bytes(d, raw.replace(b"@@BAD@@", BADUTF8))

# 10 MB model name and notes
m = copy.deepcopy(manifest)
m["model"]["id"] = "M" * (10 << 20)
m["notes"] = [{"key": "gpu", "value": "G" * (2 << 20)}, {"key": "k" * 100000, "value": "v"}]
new_case("huge-strings", m)

# deep nesting, huge numbers
d = new_case("deep-nesting")
write_manifest_bytes(d, b"[" * 200000 + b"]" * 200000)
m = copy.deepcopy(manifest)
m["settings"]["duration_s"] = 1e308
m["settings"]["max_tokens"] = 1e300
m["settings"]["contexts"] = [1e15]
m["kv_capacity"]["tokens"] = -1e300
m["origin_unix_ns"] = "99999999999999999999999999"
for c in m["cells"]:
    c["start_ns"] = 9.2e18
    c["window_end_ns"] = -9.2e18
new_case("huge-numbers", m)
m = copy.deepcopy(manifest)
m["format_version"] = "99999999999.1"
new_case("version-oversized", m)

# many cells, many notes (linear parsing)
m = copy.deepcopy(manifest)
m["cells"] = [{"id": "decode-%dx1" % (1000 + i), "phase": "decode", "context": 1000 + i,
               "concurrency": 1, "state": "pending"} for i in range(100000)]
new_case("cells-100k", m)
m = copy.deepcopy(manifest)
m["notes"] = [{"key": "k%d" % i, "value": "v"} for i in range(60000)]
new_case("notes-60k", m)

# 2,000 cells, each with a trace (archived by the suite: dump read the
# archive once per cell, 87 s)
m = copy.deepcopy(manifest)
tmpl = next(c for c in manifest["cells"] if c["id"] == "decode-8192x1")
d = os.path.join(out, "cells-2k")
os.makedirs(os.path.join(d, "cells"))
m["cells"] = []
for i in range(2000):
    c = dict(tmpl)
    c["id"] = "decode-%dx1" % (1000 + i)
    c["context"] = 1000 + i
    c["trace"] = "cells/%s.ttz" % c["id"]
    shutil.copy(os.path.join(base, tmpl["trace"]), os.path.join(d, c["trace"]))
    m["cells"].append(c)
with open(os.path.join(d, "manifest.json"), "w") as f:
    json.dump(m, f)

# trace path tricks
m = copy.deepcopy(manifest)
m["cells"][2]["trace"] = "../../../../etc/passwd"
new_case("trace-dotdot", m)
m = copy.deepcopy(manifest)
m["cells"][2]["trace"] = "/etc/passwd"
new_case("trace-absolute", m)

# traces: bad UTF-8 and escapes in a request error, a chunk claiming 2^32-1
# tokens, duplicated request records, many records for one request
def trace_case(name, records):
    d = new_case(name)
    whole_records_file(records, os.path.join(d, "cells", "decode-8192x1.ttz"))
    return d


good = [request(0, i, w0 + i * 1000, w0 + i * 1000 + 10, w0 + i * 1000 + 900,
                [(w0 + i * 1000 + 50 + 20 * k, 1) for k in range(40)]) for i in range(3000)
        if w0 + i * 1000 + 900 < w1]
trace_case("trace-error-strings", good[:50] + [
    request(0, 9999, w0, w0 + 1, w0 + 500, [(w0 + 100, 1)], error=BADUTF8 + ESC.encode(),
            finish=4, fail=5)])
trace_case("trace-token-bomb", good[:50] + [
    request(0, 9998, w0, w0 + 1, w0 + 500, [(w0 + 100, 0xFFFFFFFF)])])
trace_case("trace-duplicates", good[:20] * 200)
# one request split over many records (same slot and seq), 33 KB: every chunk kept
many = [request(0, 7, w0, w0 + 1, w1, [(w0 + 2 + k, 1) for k in range(0, 20000, 10)])
        for _ in range(60)]
trace_case("trace-many-records", many)
# a scrape with a huge value and escape sequences in names
trace_case("trace-scrape-strings", good[:20] + [
    scrape(w0 + 5, [(ESC.encode(), BADUTF8, 1e308), (b"vllm:num_requests_running", b"", float("inf"))]),
    scrape(w0 + 50, [(b"vllm:num_requests_waiting", b"", float("inf")),
                     (b"vllm:num_requests_running", b"", 1.0)])] +
    [scrape(w0 + 100 + 100 * k, [(b"vllm:num_requests_waiting", b"", 1.0),
                                 (b"vllm:num_requests_running", b"", 1.0)]) for k in range(20)])
# constant time between tokens (a constant series)
const = [request(0, i, w0 + i * 1000, w0 + i * 1000 + 10, w0 + i * 1000 + 900,
                 [(w0 + i * 1000 + 100 + 20 * k, 1) for k in range(40)]) for i in range(200)
         if w0 + i * 1000 + 900 < w1]
trace_case("trace-constant-tbt", const)
# every decode cell with the same constant time between tokens, on a 1-2-5
# value (0.02 ms): the TBT chart's axis had lo == hi and cairo failed the PDF
d = new_case("all-constant-tbt")
for c in manifest["cells"]:
    if c["phase"] != "decode" or "window_start_ns" not in c:
        continue
    a, b = c["window_start_ns"] // 1000, c["window_end_ns"] // 1000
    recs = [request(sl, i, a + i * 1000, a + i * 1000 + 10, a + i * 1000 + 900,
                    [(a + i * 1000 + 100 + 20 * k, 1) for k in range(40)])
            for sl in range(c["concurrency"]) for i in range(100) if a + i * 1000 + 900 < b]
    whole_records_file(recs, os.path.join(d, c["trace"]))
# compression bombs inside a trace: one record of 30 M empty chunks (2 KB
# on disk, 60 MB of frame: it took 540 MB to hold), and 30 records of 1 M
# chunks each in one frame (streamed, never held)
def raw_frame_file(payload, path):
    tmp = path + ".raw"
    with open(tmp, "wb") as t:
        t.write(header() + payload)
    with open(path, "wb") as f:
        f.write(subprocess.run(["zstd", "-q", "-c", "--check", tmp], check=True,
                               stdout=subprocess.PIPE).stdout)
    os.unlink(tmp)


def bomb_record(seq, n, gap=0):
    p = varint(0) + varint(seq) + bytes([0, 1, 0]) + varint(200) + varint(101) + varint(0)
    p += svarint(w0 + seq) + svarint(1) + svarint(500000) + varint(0) + varint(n)
    return rec(2, p + bytes([gap]) * n + b"\x01" * n)


d = new_case("trace-chunk-bomb")
raw_frame_file(bomb_record(0, 30000000), os.path.join(d, "cells", "decode-8192x1.ttz"))
d = new_case("trace-chunk-bomb-many")
raw_frame_file(b"".join(bomb_record(i, 1000000, 1) for i in range(30)),
               os.path.join(d, "cells", "decode-8192x1.ttz"))
# a trace that is not zstd at all
d = new_case("trace-garbage")
with open(os.path.join(d, "cells", "decode-8192x1.ttz"), "wb") as f:
    f.write(os.urandom(100000))

print("ok")
