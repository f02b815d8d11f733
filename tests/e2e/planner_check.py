#!/usr/bin/env python3
"""Checks a `kernlens profile --format json` result against a sample's expected_lines.txt.

expected_lines.txt: one `FILE:LINE  REGEX` per line (# comments). Every kernel the loop maps to a
line must match (re.search) an entry of that same FILE:LINE, and every entry must match at least
one kernel mapped there. `unmapped REGEX` entries allow unmapped kernels (none allowed otherwise).
Also checks the JSON shape (exact key set), converged == true and emulated == true.
usage: planner_check.py RESULT.json EXPECTED.txt [--allow-not-converged]
"""
import json
import re
import sys

TOP = {"converged", "stop_reason", "rounds", "backend", "emulated", "lines", "unmapped", "notes"}
LINE = {"file", "line", "end_line", "function", "gpu_ns", "launches", "atomic", "atomic_reason", "kernels"}
KERNEL = {"name", "launches", "gpu_ns"}
UNMAPPED = {"name", "launches", "gpu_ns", "reason"}


def main():
    doc = json.load(open(sys.argv[1]))
    errors = []
    if set(doc) != TOP:
        errors.append("top-level keys %s" % sorted(doc))
    for l in doc.get("lines", []):
        if set(l) != LINE:
            errors.append("line keys %s" % sorted(l))
        for k in l.get("kernels", []):
            if set(k) != KERNEL:
                errors.append("kernel keys %s" % sorted(k))
    for u in doc.get("unmapped", []):
        if set(u) != UNMAPPED:
            errors.append("unmapped keys %s" % sorted(u))
    if not doc.get("converged") and "--allow-not-converged" not in sys.argv:
        errors.append("not converged: %s" % doc.get("stop_reason"))
    if doc.get("emulated") is not True or doc.get("backend") != "emulate":
        errors.append("expected the emulate backend, emulated == true")
    expected = {}
    allowed_unmapped = []
    for raw in open(sys.argv[2]):
        raw = raw.split("#", 1)[0].strip()
        if not raw:
            continue
        where, rx = raw.split(None, 1)
        if where == "unmapped":
            allowed_unmapped.append(re.compile(rx))
            continue
        f, ln = where.rsplit(":", 1)
        expected.setdefault((f, int(ln)), []).append([re.compile(rx), 0])
    for l in doc["lines"]:
        key = (l["file"], l["line"])
        for k in l["kernels"]:
            entries = expected.get(key)
            hit = False
            for e in entries or []:
                if e[0].search(k["name"]):
                    e[1] += 1
                    hit = True
            if not hit:
                errors.append("%s:%d: unexpected kernel %s" % (key[0], key[1], k["name"][:100]))
    for key, entries in expected.items():
        for rx, n in entries:
            if n == 0:
                errors.append("%s:%d: no kernel matching /%s/ was mapped there" % (key[0], key[1], rx.pattern))
    for u in doc["unmapped"]:
        if not any(rx.search(u["name"]) for rx in allowed_unmapped):
            errors.append("unmapped kernel %s (%s)" % (u["name"][:100], u["reason"]))
    if errors:
        print("FAIL %s:" % sys.argv[2])
        for e in errors:
            print("  " + e)
        return 1
    nk = sum(len(l["kernels"]) for l in doc["lines"])
    print("ok %s: %d lines, %d kernel names, %d rounds" % (sys.argv[2], len(doc["lines"]), nk, doc["rounds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
