#!/usr/bin/env python3
"""Writes hostile nsys SQLite exports (schema: tests/data/fixtures/nsys-schema.sql).

usage: hostile_nsys.py KIND OUT.sqlite [N]
  deep        N (default 40000) nested push/pop ranges on one thread, one kernel at the bottom
  unbalanced  N (default 20000) range_push calls never popped (end NULL), a kernel after each
              50th push; about 1 MB
  corrupt     kernels with corrupt numbers: a TEXT start, an end near 2^62, an end before its
              start, plus 4 sane kernels of 1 us each (the only ones to be summed)
  names       range and kernel names with terminal control sequences (OSC title, clear, CR)
"""
import os
import sqlite3
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PID, TID = 4242, 4242
GTID = (1 << 48) | (PID << 24) | TID
GPID = (1 << 48) | (PID << 24)


class Export:
    def __init__(self, path):
        if os.path.exists(path):
            os.remove(path)
        self.db = sqlite3.connect(path)
        self.db.executescript(open(os.path.join(SRC, "tests/data/fixtures/nsys-schema.sql")).read())
        self.db.execute("INSERT INTO META_DATA_EXPORT(name, value) VALUES ('EXPORT_PRODUCT_VERSION', "
                        "'2026.2.1.210'), ('EXPORT_SCHEMA_VERSION', '3.25.0')")
        self.strings = {}
        self.corr = 0

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.db.execute("INSERT INTO StringIds(id, value) VALUES (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def push(self, start, end, text):
        self.db.execute('INSERT INTO NVTX_EVENTS(start, "end", eventType, globalTid, text) VALUES (?, ?, 59, ?, ?)',
                        (start, end, GTID, text))

    def kernel(self, launch, start, end, name):
        self.corr += 1
        self.db.execute('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, "end", eventClass, globalTid, correlationId, '
                        "nameId, returnValue) VALUES (?, ?, 0, ?, ?, ?, 0)",
                        (launch, launch + 5, GTID, self.corr, self.s("cudaLaunchKernel_v7000")))
        n = self.s(name)
        self.db.execute(
            'INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, "end", deviceId, contextId, streamId, correlationId, '
            "globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
            "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, tensorSizeMinusOneElements) "
            "VALUES (?, ?, 0, 1, 7, ?, ?, ?, ?, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1, '[]')",
            (start, end, self.corr, GPID, n, n))

    def close(self):
        self.db.commit()
        self.db.close()


def main():
    kind, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    e = Export(out)
    t0 = 1_000_000_000
    if kind == "deep":
        n = n or 40000
        for i in range(n):
            e.push(t0 + i, t0 + 2 * n + 100 - i, "level%d" % (i % 7))
        e.kernel(t0 + n + 10, t0 + 3 * n, t0 + 3 * n + 1000, "bottom_kernel")
    elif kind == "unbalanced":
        n = n or 20000
        for i in range(n):
            e.push(t0 + 10 * i, None, "step")
            if i % 50 == 49:
                e.kernel(t0 + 10 * i + 1, t0 + 10 * i + 2, t0 + 10 * i + 8, "k%d" % (i % 3))
    elif kind == "corrupt":
        e.push(t0, t0 + 100_000, "region")
        for i in range(4):
            e.kernel(t0 + 10 + i * 100, t0 + 1000 + i * 2000, t0 + 2000 + i * 2000, "sane_kernel")
        e.kernel(t0 + 500, t0 + 20_000, (1 << 62) + 7, "end_near_2_62")
        e.kernel(t0 + 600, t0 + 30_000, t0 + 29_000, "end_before_start")
        e.kernel(t0 + 700, t0 + 40_000, t0 + 41_000, "text_start")
        e.db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE correlationId = ?", (e.corr,))
    elif kind == "names":
        evil = "\x1b]0;pwned\x07\x1b[2J\rfake line\x1b[31m"
        e.push(t0, t0 + 100_000, "range" + evil)
        e.kernel(t0 + 10, t0 + 1000, t0 + 2000, "kernel" + evil)
    else:
        sys.exit("unknown kind " + kind)
    e.close()


if __name__ == "__main__":
    main()
