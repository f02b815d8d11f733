#!/usr/bin/env python3
"""Compares `kernlens profile --format json` with the ground truth of realcode_truth.py.

Each truth line is mapped to its innermost statement (Python's ast: the smallest statement whose
own lines — for a compound statement its header — contain it). A kernlens line is EXACT for a
statement when it is not a function-body range and its lines are exactly the statement's.
  gemm share = sum over statements of min(truth forward GEMM ops, GEMM/conv kernels kernlens put
               exactly there) / truth forward GEMM ops (under the focus)
  time share = GPU time on exact lines (each line's time scaled by min(1, truth ops / launches):
               a line holding more launches than its own ops got kernels from elsewhere) /
               GPU time of every kernlens line except those whose statement only issued backward
               or out-of-focus work
Also: every atomic line must carry an atomic_reason.
usage: realcode_compare.py KL.json TRUTH.json WORKSPACE [--min-gemm F] [--min-time F] [--max-rounds N]
       [--label TEXT]   prints one line: label gemm= time= rounds= ranges=; exit 1 below the bars
"""
import ast
import json
import os
import re
import sys

GEMM_KERNEL = re.compile(r"gemm|xmma|cutlass|sgemm|conv|cudnn|wgrad|dgrad|fprop", re.I)


def statements(path):
    """[(first, last, header_last)] of every statement (1-based)."""
    tree = ast.parse(open(path).read())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            header_last = node.end_lineno
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(node, field, None)
                if sub:
                    header_last = min(header_last, sub[0].lineno - 1)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
                first = min(d.lineno for d in node.decorator_list)
            else:
                first = node.lineno
            out.append((first, node.end_lineno, max(first, header_last)))
    return out


def innermost(stmts, line):
    best = None
    for first, last, hlast in stmts:
        if first <= line <= hlast and (best is None or last - first < best[1] - best[0]):
            best = (first, last)
    return best


def main():
    kl = json.load(open(sys.argv[1]))
    truth = json.load(open(sys.argv[2]))["lines"]
    ws = sys.argv[3]
    opt = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    cache = {}
    by_stmt = {}
    for key, s in truth.items():
        f, ln = key.rsplit(":", 1)
        if f not in cache:
            cache[f] = statements(os.path.join(ws, f))
        st = innermost(cache[f], int(ln)) or (int(ln), int(ln))
        agg = by_stmt.setdefault((f, st), {"ops": 0, "gemm": 0, "other": 0})
        agg["ops"] += s.get("ops", 0)
        agg["gemm"] += s.get("gemm", 0)
        agg["other"] += s.get("bwd_ops", 0) + s.get("out_ops", 0)
    total_gemm = sum(a["gemm"] for a in by_stmt.values())
    exact_gemm = 0
    exact_time = 0.0
    total_time = 0
    problems = []
    for l in kl["lines"]:
        if l["atomic"] and not l.get("atomic_reason"):
            problems.append("%s:%d is atomic without a reason" % (l["file"], l["line"]))
        key = (l["file"], (l["line"], l["end_line"]))
        agg = by_stmt.get(key)
        if agg is not None and agg["ops"] == 0 and agg["other"] > 0:
            continue  # backward / outside the focus: not forward time
        # Forward work only: backward kernels (linked to this forward line) are compared elsewhere.
        fwd = [k for k in l["kernels"] if not k.get("backward")]
        fwd_ns = l["gpu_ns"] - l.get("backward_gpu_ns", 0)
        total_time += fwd_ns
        if agg is None or agg["ops"] == 0:
            continue
        g = sum(k["launches"] for k in fwd if GEMM_KERNEL.search(k["name"]))
        exact_gemm += min(g, agg["gemm"])
        exact_time += fwd_ns * min(1.0, agg["ops"] / max(1, sum(k["launches"] for k in fwd)))
    gemm_share = exact_gemm / total_gemm if total_gemm else 1.0
    time_share = exact_time / total_time if total_time else 1.0
    reasons = {}
    for l in kl["lines"]:
        if l["atomic"]:
            reasons[l.get("atomic_reason")] = reasons.get(l.get("atomic_reason"), 0) + 1
    print("%s gemm=%.3f (%d/%d) time=%.3f rounds=%d converged=%s atomic=%s" % (
        opt.get("--label", "result"), gemm_share, exact_gemm, total_gemm, time_share, kl["rounds"],
        kl["converged"], ",".join("%s:%d" % kv for kv in sorted(reasons.items(), key=str))))
    if gemm_share < float(opt.get("--min-gemm", 0)):
        problems.append("exact-line GEMM share %.3f < %s" % (gemm_share, opt["--min-gemm"]))
    if time_share < float(opt.get("--min-time", 0)):
        problems.append("exact-line forward GPU time share %.3f < %s" % (time_share, opt["--min-time"]))
    if "--max-rounds" in opt and kl["rounds"] > int(opt["--max-rounds"]):
        problems.append("%d rounds > %s" % (kl["rounds"], opt["--max-rounds"]))
    if total_gemm == 0 and "--min-gemm" in opt:
        problems.append("the truth saw no GEMM under the focus (wrong focus?)")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
