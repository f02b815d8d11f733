#!/usr/bin/env python3
"""Backward GEMM share of `kernlens profile --format json` against backward_truth.py.

  share = sum over forward lines of min(truth backward GEMM ops created there, backward GEMM
          kernels kernlens put on that line) / truth backward GEMM ops
usage: backward_compare.py KL.json TRUTH.json   prints "bwd_gemm=S (HIT/TOTAL)", or "bwd_gemm=n/a"
       when kernlens's lines hold no backward kernel (a focus that runs no backward pass)
"""
import collections
import json
import sys


def share(doc, truth):
    got = collections.Counter()
    for line in doc["lines"]:
        for k in line["kernels"]:
            if k["backward"] and "gemm" in k["name"].lower():
                got["%s:%d" % (line["file"], line["line"])] += k["launches"]
    want = collections.Counter(truth["bwd"])
    total = sum(want.values())
    hit = sum(min(got[w], n) for w, n in want.items())
    return hit, total, got, want


if __name__ == "__main__":
    doc = json.load(open(sys.argv[1]))
    if not any(k["backward"] for line in doc["lines"] for k in line["kernels"]):
        print("bwd_gemm=n/a")
        sys.exit(0)
    hit, total, _, _ = share(doc, json.load(open(sys.argv[2])))
    print("bwd_gemm=%.3f (%d/%d)" % (hit / total if total else 0.0, hit, total))
