#!/usr/bin/env python3
"""Independent backward -> forward count of a real PyTorch-profiler (Kineto) training trace.

Reads the trace with the json module only (no kernlens code) and, for every GPU op (kernel,
memcpy, memset), follows what the trace itself records:
  GPU op --correlation--> runtime launch call --(same pid/tid, time containment)--> cpu_ops open
  around the call. If the innermost of them is an autograd backward node (its name holds
  "Backward" or it carries "Fwd thread id" > 0), the op is backward work: the node's `fwdbwd`
  flow (ph "f" at the node's start) leads to the flow's start (ph "s"), the forward op that
  created the node, on the forward thread; a node without a flow (the engine's
  evaluate_function wrapper) goes to the forward op with its "Sequence number" that started
  last before it. A launch that also lies inside a forward cpu_op
  (one with a "Sequence number" and "Fwd thread id" 0) started after the node is recomputation
  (activation checkpointing), attributed where it ran.
The owner of forward work is the launch point itself; of backward work the forward op's start.
Forward work launched inside a training-step annotation the profiler records (user_annotation
"Optimizer.step#..." / "Optimizer.zero_grad#...", or a record_function "GradScaler.*" or
"torch.nn.utils.clip_grad_*_") is counted under that step's kind ("optimizer", "zero_grad",
"amp-scaler", "grad-clip"; the innermost annotation wins) instead of "forward".

Output (JSON on stdout), with --files SUFFIX... (workspace file suffixes):
  per owner "file:line" (from the innermost python_function frame at the owner point up the
  stack the trace records through "Python parent id", the first frame whose file ends with one of
  the suffixes; frames are "file.py(line): func"), per pass, the number of GPU ops;
without --files: per owner "op name" (the outermost cpu_op at the owner point), per pass.
Backward ops of nodes without a flow (AccumulateGrad, engine work) are counted as "unowned".
"""
import bisect
import collections
import gzip
import json
import re
import sys


def step_kind(name):
    """The training-step kind a profiler annotation names, or None."""
    if name.startswith("Optimizer.step#"):
        return "optimizer"
    if name.startswith("Optimizer.zero_grad#"):
        return "zero_grad"
    if name.startswith("GradScaler."):
        return "amp-scaler"
    if name in ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_"):
        return "grad-clip"
    return None


def main():
    args = sys.argv[1:]
    trace = args[0]
    suffixes = args[args.index("--files") + 1:] if "--files" in args else None
    ev = json.load(gzip.open(trace) if trace.endswith(".gz") else open(trace))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev

    def ns(x):
        return round(float(x) * 1000)

    runtime = {}
    ops = collections.defaultdict(list)      # tid -> [(start, end, name, args)]
    frames = collections.defaultdict(list)   # tid -> [(start, end, name)]
    steps = collections.defaultdict(list)    # tid -> [(start, end, kind)] training-step annotations
    by_id = {}                               # Python id -> python_function event
    flow_s, flow_f = {}, {}
    gpu = []
    for e in ev:
        cat = (e.get("cat") or "").lower()
        if e.get("ph") == "X" and cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.append(e)
        elif e.get("ph") == "X" and cat in ("cuda_runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if c is not None:
                runtime[c] = (e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        elif e.get("ph") == "X" and cat in ("user_annotation", "cpu_op") and step_kind(e["name"]):
            steps[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), step_kind(e["name"])))
            if cat == "cpu_op":
                ops[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"], e.get("args", {})))
        elif e.get("ph") == "X" and cat == "cpu_op":
            ops[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"], e.get("args", {})))
        elif e.get("ph") == "X" and cat == "python_function":
            frames[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"], e))
            by_id[e.get("args", {}).get("Python id")] = e
        elif cat == "fwdbwd" and e.get("ph") in ("s", "f"):
            (flow_s if e["ph"] == "s" else flow_f)[e["id"]] = (e["tid"], ns(e["ts"]))
    for d in (ops, frames, steps):
        for v in d.values():
            v.sort(key=lambda x: (x[0], -x[1]))
    starts = {t: [x[0] for x in v] for t, v in ops.items()}
    fstarts = {t: [x[0] for x in v] for t, v in frames.items()}
    node_flow = {}  # (tid, start) -> flow id at a backward node
    for fid, (tid, ts) in flow_f.items():
        node_flow[(tid, ts)] = fid

    def around(lst, st, tid, a, b):
        """Items of lst[tid] containing [a, b], outermost first."""
        v = lst.get(tid, [])
        i = bisect.bisect_right(st.get(tid, []), a)
        return [x for x in v[:i] if x[1] >= b]

    def is_node(op):
        return ("Backward" in op[2] or op[2].startswith(("autograd::engine::evaluate_function:", "torch::autograd::"))
                or op[3].get("Fwd thread id", 0) > 0)

    by_seq = collections.defaultdict(list)  # sequence number -> [(start, tid)] of forward ops
    for tid, v in ops.items():
        for x in v:
            if x[3].get("Sequence number", -1) >= 0 and not is_node(x):
                by_seq[x[3]["Sequence number"]].append((x[0], tid))

    def owner(tid, a, b):
        if suffixes is None:
            enc = around(ops, starts, tid, a, b)
            return enc[0][2] if enc else None
        enc = around(frames, fstarts, tid, a, b)
        f = max(enc, key=lambda x: x[0])[3] if enc else None  # innermost: the latest start
        while f is not None:  # up the stack the trace records (Python parent id)
            m = re.match(r"(.*)\((\d+)\): ", f["name"])
            if m and any(m.group(1).endswith(s) for s in suffixes):
                return "%s:%s" % (m.group(1), m.group(2))
            f = by_id.get(f.get("args", {}).get("Python parent id"))
        return None

    counts = collections.Counter()
    for k in gpu:
        c = k.get("args", {}).get("correlation")
        if c not in runtime:
            counts[("no_launch", None)] += 1
            continue
        tid, a, b = runtime[c]
        enc = around(ops, starts, tid, a, b)
        nodes = [o for o in enc if is_node(o)]
        if not nodes:
            st = [x for x in steps.get(tid, []) if x[0] <= a and x[1] >= b]
            counts[(max(st)[2] if st else "forward", owner(tid, a, b))] += 1
            continue
        node = nodes[-1]
        if any(o[0] > node[0] and not is_node(o) and o[3].get("Sequence number", -1) > 0 for o in enc):
            counts[("recompute", owner(tid, a, b))] += 1
            continue
        fid = node_flow.get((tid, node[0]))
        if fid is not None and fid in flow_s:
            ftid, fts = flow_s[fid]
        else:
            # No flow (the engine's evaluate_function wrapper around a node): the forward op with
            # the node's sequence number that started last before the node.
            seq = node[3].get("Sequence number", -1)
            cands = [x for x in by_seq.get(seq, []) if x[0] < node[0]] if seq >= 0 else []
            if not cands:
                counts[("unowned", None)] += 1
                continue
            fts, ftid = max(cands)
        counts[("backward", owner(ftid, fts, fts))] += 1
    out = collections.defaultdict(dict)
    for (p, o), n in counts.items():
        out[p][o if o is not None else "-"] = n
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
