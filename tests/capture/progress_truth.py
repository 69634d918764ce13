#!/usr/bin/env python3
"""Issue 24.2: the progress line tells the truth.  The capture runs on a
pseudo-terminal (the pty module) against tokentrace-sim on loopback, and
every redraw of the line is checked:

  1. warm-up: a slow prefill (8K prompts at 20,000 tokens/s, 4 workers)
     keeps the cell warming for over a second: the line says "warm-up" and
     counts the prompts still warming, then "readiness", then "measuring
     Ns of 2s";
  2. a readiness check that cannot pass (llama.cpp flavour, one slot, two
     workers): the line says so, and its ETA counts the whole timeout
     (never 0 s before the window);
  3. an SLO search: "search step N", offered against achieved rate, the
     open-loop phases, never "cell 3/2"; stopped with SIGINT after the
     second step (bounded time), the capture exits 130.

Everywhere: the ETA is never negative and never "?"; no cell counter
beyond its total.  usage: progress_truth.py SIM CAPTURE WORKDIR
"""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time

SIM, CAP, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def start_sim(*args):
    out = open("sim-%d.out" % len(SIMS), "w+")
    p = subprocess.Popen([SIM, "--port", "0", "--max-runtime", "120", *args],
                         stdout=out, stderr=subprocess.STDOUT)
    SIMS.append(p)
    for _ in range(200):
        out.seek(0)
        m = re.search(r"http://127\.0\.0\.1:\d+", out.read())
        if m:
            return m.group(0)
        time.sleep(0.05)
    sys.exit("FAIL: the simulator did not start")


def capture(args, limit_s, stop_when=None):
    """Run the capture on a pty; return (exit status, lines as redrawn).
    stop_when(text) -> True sends SIGINT once."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(CAP, [CAP, *args])
    buf = b""
    t0 = time.monotonic()
    sent = False
    while True:
        if time.monotonic() - t0 > limit_s:
            os.kill(pid, signal.SIGKILL)
            fail("capture %s ran over %ss" % (args[:3], limit_s))
            break
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            buf += data
        if stop_when and not sent and stop_when(buf.decode("utf-8", "replace")):
            os.kill(pid, signal.SIGINT)
            sent = True
    _, st = os.waitpid(pid, 0)
    os.close(fd)
    text = buf.decode("utf-8", "replace")
    lines = [l.replace("\x1b[K", "").strip() for l in re.split(r"[\r\n]+", text)]
    return os.waitstatus_to_exitcode(st), [l for l in lines if l]


def check_common(tag, lines):
    live = [l for l in lines if l.startswith(("cell ", "search step "))]
    if not live:
        fail("%s: no progress line" % tag)
    for l in live:
        if "ETA ?" in l or "ETA -" in l or re.search(r"-\d+s", l):
            fail("%s: an ETA that is unknown or negative: %s" % (tag, l))
        m = re.match(r"cell (\d+)/(\d+) ", l)
        if m and int(m.group(1)) > int(m.group(2)):
            fail("%s: a cell counter past its total: %s" % (tag, l))
        if not re.search(r"\| (warm-up|readiness|measuring|drain|scout) ", l):
            fail("%s: the line names no phase: %s" % (tag, l))
    return live


SIMS = []
try:
    common = ["--max-tokens", "64", "--no-realtime"]
    # 1. warm-up, readiness, measuring
    url = start_sim("--prefill-tok-s", "20000")
    st, lines = capture([url, "-o", "run1", "--contexts", "8K", "--concurrency", "4",
                         "--cells", "decode-8Kx4", "--duration", "2s", "--readiness", "0.5s",
                         "--readiness-timeout", "10s", *common], 60)
    live = check_common("warm-up", lines)
    if st != 0:
        fail("warm-up run exited %d" % st)
    warm = [l for l in live if re.search(r"\| warm-up \d+s, \d+ of 4 prompts warming", l)]
    if not warm:
        fail("no warm-up phase on the line: %s" % live[:3])
    if not any("| readiness " in l for l in live):
        fail("no readiness phase on the line")
    if not any(re.search(r"\| measuring \d+s of 2s, \d+ streaming, \d+ waiting", l) for l in live):
        fail("no measuring phase with streaming and waiting counts")
    # the ETA while warming counts the readiness and the window still to come
    for l in warm:
        if "ETA 0s" in l:
            fail("ETA 0s while warming up: %s" % l)
    # 2. a readiness check that cannot pass: 2 workers, 1 slot
    url = start_sim("--max-num-seqs", "1", "--flavor", "llamacpp")
    st, lines = capture([url, "-o", "run2", "--contexts", "1K", "--concurrency", "2",
                         "--cells", "decode-1Kx2", "--duration", "1s", "--readiness", "0.2s",
                         "--readiness-timeout", "3s", *common], 60)
    live = check_common("readiness", lines)
    ready = [l for l in live if "| readiness " in l]
    if not any(re.search(r"readiness \d+s of 3s \(cannot pass: more workers than the "
                         r"server's slots\), 1 of 2 streaming", l) for l in ready):
        fail("the readiness wait does not say it cannot pass: %s" % ready[-1:])
    for l in ready:
        m = re.search(r"\| readiness (\d+)s .*ETA (\d+)s", l)
        # the whole timeout and the window: at least (3 - waited) + 1 s
        if m and int(m.group(2)) < 3 - int(m.group(1)):
            fail("the ETA does not count the readiness timeout: %s" % l)
        if "ETA 0s" in l:
            fail("ETA 0s while the readiness check waits: %s" % l)
    # 3. an SLO search, stopped after its second step
    url = start_sim("--max-num-seqs", "2")
    st, lines = capture([url, "-o", "run3", "--contexts", "1K", "--rates", "8/s",
                         "--slo", "e2e=300ms", "--warmup", "0.5s", "--duration", "1s",
                         "--drain", "1s", *common], 90,
                        stop_when=lambda t: re.search(r"search step 2 \S+ \| measuring", t))
    live = check_common("search", lines)
    if st != 130:
        fail("the search stopped by SIGINT exited %d, not 130" % st)
    steps = [l for l in live if l.startswith("search step ")]
    if not steps:
        fail("no 'search step' on the line: %s" % live[-3:])
    for l in steps:
        if not re.search(r"ETA \d+(m\d+)?s \(this step; at most \d+ more\)", l):
            fail("a search step's ETA is not a time: %s" % l)
    ol = [l for l in live if "offered" in l]
    if not any(re.search(r"\| warm-up \d+s of 0\.5s, ", l) for l in ol):
        fail("the warm-up's planned length is not shown as given (0.5s)")
    if not any(re.search(r"offered 8/s achieved [0-9.]+/s", l) for l in ol):
        fail("no offered against achieved rate in open loop: %s" % ol[:2])
    # (the drain shows only while requests are still running: not checked)
    for ph in ("warm-up", "measuring"):
        if not any(("| %s " % ph) in l for l in ol):
            fail("open loop: no %s phase on the line" % ph)
    if not any("continue with --resume run3" in l for l in lines):
        fail("the stopped search does not name the --resume command")
finally:
    for p in SIMS:
        p.terminate()
        p.wait()
if FAILS:
    sys.exit(1)
print("progress truth: ok")
