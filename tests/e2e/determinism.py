#!/usr/bin/env python3
"""The same program profiled N times gives the same per-line attribution.

usage: determinism.py KERNLENS N NAME=WORKSPACE::ENTRY::FOCUS...
Each case copies WORKSPACE to a fresh folder per run (the loop writes .kernlens/ there) and runs
`kernlens profile --backend emulate --format json` (discovery and the loop as a user runs them;
no baseline: its wall time is the only number allowed to move). The emulated kernels and their
modelled times depend only on the program, and the samples fix their seeds, so every run must
give the same lines: (file, line, end line, launches, gpu_ns, backward_gpu_ns, atomic reason,
step kind) plus each line's kernels (name, pass, launches, gpu_ns), the unmapped ops, the stop
reason and the rounds. Prints one line per case; on a difference, the first differing line of
the first run that differs, and exit 1.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def answer(doc):
    lines = []
    for l in doc["lines"]:
        kernels = sorted((k.get("name"), k.get("pass"), k.get("launches"), k.get("gpu_ns"))
                         for k in l.get("kernels", []))
        lines.append((l["file"], l["line"], l["end_line"], l["launches"], l["gpu_ns"], l["backward_gpu_ns"],
                      l.get("atomic_reason"), l.get("step_kind"), tuple(kernels)))
    unmapped = sorted(json.dumps(u, sort_keys=True) for u in doc.get("unmapped", []))
    return {"stop_reason": doc["stop_reason"], "rounds": doc["rounds"], "converged": doc["converged"],
            "lines": sorted(lines), "unmapped": unmapped}


def run_once(kernlens, src, entry, focus, tmp, i):
    ws = os.path.join(tmp, "run%d" % i)
    shutil.copytree(src, ws)
    r = subprocess.run([kernlens, "profile", "--root", ws, "--entry", entry, "--focus", focus, "--backend", "emulate",
                        "--format", "json", "--no-store", "--no-baseline"],
                       cwd=ws, capture_output=True, text=True, timeout=1200)
    shutil.rmtree(ws, True)
    if r.returncode != 0:
        sys.exit("determinism: run %d of %s failed (exit %d):\n%s" % (i, focus, r.returncode, r.stderr[-3000:]))
    return answer(json.loads(r.stdout))


def first_difference(a, b):
    for key in ("stop_reason", "rounds", "converged", "unmapped"):
        if a[key] != b[key]:
            return "%s: %r != %r" % (key, a[key], b[key])
    la, lb = a["lines"], b["lines"]
    for x, y in zip(la, lb):
        if x != y:
            return "line %r != %r" % (x, y)
    return "lines: %d != %d" % (len(la), len(lb))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kernlens, n = sys.argv[1], int(sys.argv[2])
    bad = 0
    for case in sys.argv[3:]:
        name, spec = case.split("=", 1)
        src, entry, focus = spec.split("::", 2)
        tmp = tempfile.mkdtemp(prefix="kl-determinism-")
        try:
            first = run_once(kernlens, src, entry, focus, tmp, 0)
            same = 1
            diff = None
            for i in range(1, n):
                got = run_once(kernlens, src, entry, focus, tmp, i)
                if got == first:
                    same += 1
                elif diff is None:
                    diff = "run %d: %s" % (i + 1, first_difference(first, got))
        finally:
            shutil.rmtree(tmp, True)
        lines = len(first["lines"])
        launches = sum(l[3] for l in first["lines"])
        bwd = sum(l[5] for l in first["lines"])
        print("determinism: %-24s %d/%d runs identical (%d lines, %d launches, backward %d ns, %s after %d rounds)"
              % (name, same, n, lines, launches, bwd, first["stop_reason"], first["rounds"]), flush=True)
        if diff:
            print("  first difference: " + diff, flush=True)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
