#!/usr/bin/env python3
"""Writes the intra-kernel region buffers used by the LSP tests (tests/unit/lsp/cute_regions_test.cpp
and tests/lsp/transcripts/cute_*.lsp) from known events. No numpy needed. Re-run to regenerate:
    python3 tests/data/cute/make_fixtures.py
Layout (transformer_nuggets): int64 little-endian [count, then per event: start_ns, dur_ns, tag_id, tid].
Tags follow samples/cute/tiled_add.py: TAG_LOAD = 0, TAG_ADD = 1, TAG_STORE = 2.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# Four blocks (tid = block id), one event per region per block; durations in ns.
LOAD = [1000, 1200, 1400, 1600]   # mean 1300 ns, total 5200
ADD = [200, 250, 300, 250]        # mean  250 ns, total 1000
STORE = [2000, 2100, 2200, 2500]  # mean 2200 ns, total 8800  (all regions: 15000 ns)


def events():
    out = []
    for b in range(4):
        t = 1_000_000_000_000 + 10_000 * b
        out.append((t, LOAD[b], 0, b))
        t += LOAD[b] + 50
        out.append((t, ADD[b], 1, b))
        t += ADD[b] + 50
        out.append((t, STORE[b], 2, b))
    return out


def words(count, evs, capacity):
    w = [0] * (1 + 4 * capacity)
    w[0] = count
    for i, e in enumerate(evs):
        w[1 + 4 * i: 5 + 4 * i] = list(e)
    return w


def raw(w):
    return struct.pack("<%dq" % len(w), *w)


def npy(w):
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % len(w)
    while (10 + len(header) + 1) % 64:
        header += " "
    header += "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + raw(w)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


evs = events()
write("tiled_add_regions.bin", raw(words(len(evs), evs, 12)))
write("tiled_add_regions.npy", npy(words(len(evs), evs, 12)))
write("tiled_add_tags.txt", b"TAG_LOAD\nTAG_ADD\nTAG_STORE\n")
# Capacity 2, but the kernel counted 12 events: 10 lost.
write("tiled_add_overflow.bin", raw(words(12, evs[:2], 2)))
# 13 bytes: not a whole number of int64 words.
write("malformed.bin", raw([1, 2])[:13])
