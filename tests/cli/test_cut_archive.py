#!/usr/bin/env python3
"""A run archive compressed with xz or bzip2 and cut short: what tokentrace
keeps, stated as the current behaviour (docs/reliability.md, "What is not
promised").  These two filters are libarchive's (src/lib/format/run_source.c
decodes only gzip and zstd itself).  libarchive hands out their output in
blocks of 64 KiB and, when the input ends inside the stream, fails
(ARCHIVE_FATAL) without handing out the block it was filling.  So of D
decodable bytes of tar (what Python's lzma and bz2 decoders, or `xz -dc`,
get out of the cut file), tokentrace sees floor(D / 65536) x 65536: a cell
whose trace ends past that is damaged although its bytes are in the file.
With bzip2, D itself ends at the last complete bzip2 block (the format's
own granularity, 100 to 900 kB), and an archive whose first 64 KiB are not
decodable cannot be opened at all.

usage: test_cut_archive.py TOKENTRACE FIXTURES"""
import bz2
import csv
import hashlib
import io
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile

tt, fx = sys.argv[1], sys.argv[2]
BLOCK = 64 << 10  # libarchive's out_block_size for xz and bzip2 (3.6)
fails = passed = 0


def check(ok, what):
    global fails, passed
    if ok:
        passed += 1
    else:
        fails += 1
        print("FAIL:", what)


def report(path):
    r = subprocess.run([tt, "report", path, "--format", "csv"], capture_output=True, text=True)
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
    return r.returncode, rows, r.stderr


with tempfile.TemporaryDirectory() as tmp:
    run = os.path.join(tmp, "big")
    r = subprocess.run([tt, "synth", "--profile", os.path.join(fx, "profiles", "small.csv"), "-o", run,
                        "--max-tokens", "256", "--scale", "8", "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # the tar: manifest.json, 40 kB of incompressible bytes that are no
    # part of the run (the reader skips them), then the traces by name.  The
    # pad puts the first trace's end (about 78 kB) past the first 64 KiB
    # block and inside the first bzip2 -1 block (about 100 kB).
    pad = os.path.join(tmp, "pad.bin")
    open(pad, "wb").write(b"".join(hashlib.sha256(i.to_bytes(4, "little")).digest()
                                   for i in range(1250)))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        t.add(os.path.join(run, "manifest.json"), "big/manifest.json")
        t.add(pad, "big/pad.bin")
        for name in sorted(os.listdir(os.path.join(run, "cells"))):
            t.add(os.path.join(run, "cells", name), "big/cells/" + name)
    tar = buf.getvalue()
    ends = {}  # cell id -> end of its trace's bytes in the tar
    manifest_end = 0
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            if m.name == "big/manifest.json":
                manifest_end = m.offset_data + m.size
            elif m.name.startswith("big/cells/") and m.size > 0:
                ends[m.name[len("big/cells/"):-len(".ttz")]] = m.offset_data + m.size
    check(len(ends) >= 4 and max(ends.values()) > 3 * BLOCK, f"run too small: {ends}")

    codecs = [
        ("xz", lzma.compress(tar, format=lzma.FORMAT_XZ, preset=6),
         lambda b: len(lzma.LZMADecompressor().decompress(b)), "Lzma library error"),
        # bzip2 -1: 100 kB blocks, so that a cut leaves complete blocks
        ("bz2", bz2.compress(tar, 1), lambda b: len(bz2.BZ2Decompressor().decompress(b)),
         "truncated bzip2 input"),
    ]
    for ext, data, decodable, message in codecs:
        whole = os.path.join(tmp, "whole.tar." + ext)
        open(whole, "wb").write(data)
        code, rows, err = report(whole)
        check(code == 0 and all(rows[c]["status"] != "Damaged trace" for c in ends),
              f"{ext}: the whole archive: exit {code} {err}")
        lost_seen = unopened_seen = 0
        last = None
        for cut in range(4096, len(data), 4096):
            d = decodable(data[:cut])
            seen = d // BLOCK * BLOCK
            lost = {c for c, e in ends.items() if seen < e <= d}
            kept = {c for c, e in ends.items() if e <= seen}
            state = (seen, frozenset(lost))
            if state == last:
                continue  # one report per distinct outcome
            last = state
            path = os.path.join(tmp, f"cut.tar.{ext}")
            open(path, "wb").write(data[:cut])
            code, rows, err = report(path)
            where = f"{ext} cut at {cut} of {len(data)} (decodable {d}, delivered {seen})"
            if seen < manifest_end:
                # nothing delivered: not even the manifest
                check(code != 0 and code != 3 and "cannot read" in err, f"{where}: exit {code} {err}")
                unopened_seen += 1
                continue
            check(code == 3, f"{where}: exit {code}, want 3 (damaged cells): {err}")
            check(message in err, f"{where}: stderr lacks '{message}': {err}")
            for c in kept:
                check(rows[c]["status"] != "Damaged trace", f"{where}: {c} (ends at {ends[c]}) damaged")
            for c in lost:
                # in the file and decodable, yet past the last whole 64 KiB block
                check(rows[c]["status"] == "Damaged trace",
                      f"{where}: {c} (ends at {ends[c]}) is {rows[c]['status']}, want Damaged trace")
            lost_seen += len(lost)
        check(lost_seen > 0, f"{ext}: no cut lost a decodable cell (the 64 KiB rule untested)")
        print(f"{ext}: {lost_seen} decodable cells lost past the last 64 KiB block over the cuts; "
              f"{unopened_seen} cuts could not be opened")

print(f"{passed} passed, {fails} failed")
sys.exit(1 if fails else 0)
