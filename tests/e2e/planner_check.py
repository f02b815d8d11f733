#!/usr/bin/env python3
"""Checks a `kernlens profile --format json` result against a sample's expected_lines.txt.

expected_lines.txt: one `FILE:LINE  REGEX` per line (# comments). Every kernel the loop maps to a
line must match (re.search) an entry of that same FILE:LINE, and every entry must match at least
one kernel mapped there. Kernels of the backward pass are matched as "bwd:NAME" (recomputed
forward ops as "recompute:NAME"), so an entry for them starts with that prefix. `unmapped REGEX` entries allow unmapped kernels (none allowed otherwise).
Also checks the JSON shape (exact key set), converged == true and emulated == true.
usage: planner_check.py RESULT.json EXPECTED.txt [--allow-not-converged]
"""
import json
import re
import sys

TOP = {"schema", "converged", "stop_reason", "rounds", "backend", "emulated", "lines", "unmapped", "notes", "round_log"}
LINE = {"file", "line", "end_line", "function", "gpu_ns", "backward_gpu_ns", "step_kind", "launches", "invocations", "atomic", "atomic_reason", "no_matching_kernel", "note", "suggest_focus", "kernels"}
KERNEL = {"name", "backward", "pass", "launches", "gpu_ns"}
PREFIX = {"forward": "", "backward": "bwd:", "recompute": "recompute:", "optimizer": "optimizer:",
          "zero_grad": "zero_grad:", "grad-clip": "grad-clip:", "amp-scaler": "amp-scaler:"}


def label(k):
    return PREFIX.get(k.get("pass"), "?:") + k["name"]


def entry(rx):
    """'bwd:REGEX' -> ("backward", REGEX); 'recompute:REGEX', 'optimizer:REGEX'... likewise; else forward."""
    for p, pre in PREFIX.items():
        if pre and rx.startswith(pre):
            return p, re.compile(rx[len(pre):])
    return "forward", re.compile(rx)
STEP_KINDS = {"optimizer", "zero_grad", "grad-clip", "amp-scaler"}
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
            if set(k) != KERNEL | ({"forward_owner"} if k.get("backward") else set()):
                errors.append("kernel keys %s" % sorted(k))
            if k.get("backward") != (k.get("pass") in ("backward", "recompute")):
                errors.append("backward flag and pass disagree: %s" % k)
        kinds = sorted({k["pass"] for k in l.get("kernels", []) if k.get("pass") in STEP_KINDS})
        if l.get("step_kind") != ("+".join(kinds) or None):
            errors.append("%s:%s: step_kind %r, kernels say %r" % (l.get("file"), l.get("line"), l.get("step_kind"), kinds))
        bwd = sum(k["gpu_ns"] for k in l.get("kernels", []) if k.get("backward"))
        if l.get("backward_gpu_ns") != bwd:
            errors.append("%s:%s: backward_gpu_ns %s != sum of backward kernels %d"
                          % (l.get("file"), l.get("line"), l.get("backward_gpu_ns"), bwd))
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
        expected.setdefault((f, int(ln)), []).append([entry(rx), 0, rx])
    for l in doc["lines"]:
        key = (l["file"], l["line"])
        for k in l["kernels"]:
            entries = expected.get(key)
            hit = False
            for e in entries or []:
                if e[0][0] == k.get("pass") and e[0][1].search(k["name"]):
                    e[1] += 1
                    hit = True
            if not hit:
                errors.append("%s:%d: unexpected kernel %s" % (key[0], key[1], label(k)[:100]))
    for key, entries in expected.items():
        for _, n, rx in entries:
            if n == 0:
                errors.append("%s:%d: no kernel matching /%s/ was mapped there" % (key[0], key[1], rx))
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
