#!/usr/bin/env python3
"""Count the generation requests in a tokentrace-sim ground-truth log
(formats/sim-truth-log.md): prints "REQUESTS ENDS", reading up to the first
incomplete record (a log cut by a kill)."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
if data[:8] != b"TTSIMTR1":
    sys.exit("not a truth log")
p, reqs, ends = 16, 0, 0
while p < len(data):
    t = data[p]
    if t == 1:
        if p + 27 > len(data):
            break
        (idlen,) = struct.unpack_from("<H", data, p + 25)
        if p + 27 + idlen > len(data):
            break
        p += 27 + idlen
        reqs += 1
    elif t == 2:
        if p + 25 > len(data):
            break
        (n,) = struct.unpack_from("<I", data, p + 21)
        p += 25 + 8 * n
    elif t == 3:
        if p + 32 > len(data):
            break
        p += 32
        ends += 1
    elif t == 4:  # version 2: QUEUE
        if p + 21 > len(data):
            break
        p += 21
    else:
        break
print(reqs, ends)
