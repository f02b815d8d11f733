#!/usr/bin/env python3
"""Independent oracle for the editor tests: what kernlens should show for an nsys-schema SQLite
profile with kl: NVTX ranges, computed with plain SQL + Python's ast (no kernlens code).

usage: expected_hints.py PROFILE.sqlite WORKSPACE_DIR [--min-share 0.01]
prints JSON:
  {"total_ns", "unmapped_ops",
   "lines": [{"path", "line" (1-based), "ns", "ops", "kernels": [names by time], "label", "code"}],
   "functions": [{"path", "qualname", "def_line" (1-based), "ns", "kernels", "title"}]}
Rules (DESIGN.md §5): kernel -> runtime call with the same correlationId in the same process;
call -> NVTX push/pop or start/end ranges named kl:... on the same thread containing it;
innermost = latest start. Backward work (emit_nvtx sequence ranges, as PyTorch writes them): a
call inside a backward-node range ("XBackward0, seq = N", "torch::autograd::..."; innermost)
counts where the forward op of that node ran — the last non-node range "..., seq = N" that
started before the node — and the kl: range is the innermost one around that op on its thread; a
node without a forward op (AccumulateGrad) is engine work of the backward() call: the kl: range
around the call's own interval on the forward thread of the nearest linked call of its thread. A line's label: "◷ <time> · <n> kernel(s)"; shown when its share of
its function's time >= min-share (the server's default hints.minShare). Time launched inside a
backward-node range (linked or engine work) is the line's backward time: the label reads
"◷ <forward> + bwd <backward> · <n> kernel(s)" when there is any.
"""
import ast
import json
import os
import re
import sqlite3
import sys

SEQ = re.compile(r"^(.*?),\s*(stashed )?seq = (\d+)")


def node_of(text):
    """(is a backward node, seq or None) of an NVTX range text."""
    m = SEQ.match(text)
    name = m.group(1) if m else text
    node = bool(m and m.group(2)) or "Backward" in name or name.startswith("torch::autograd::")
    return node, int(m.group(3)) if m else None


def fmt_duration(ns):
    v = float(ns)
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(v) >= div:
            x = v / div
            s = "%.0f" % x if abs(x) >= 100 else "%.1f" % x if abs(x) >= 10 else "%.2f" % x
            return "%s %s" % (s, unit)
    return "%d ns" % ns


def fmt_share(share):
    pct = share * 100.0
    if pct >= 1 or pct == 0:
        return "%.0f %%" % pct
    if pct >= 0.1:
        return "%.1f %%" % pct
    return "<0.1 %"


def pass_time(ns, bwd):
    """A time split by pass: "<forward> + bwd <backward>" when any of it ran in backward."""
    if bwd <= 0:
        return fmt_duration(ns)
    return "%s + bwd %s" % (fmt_duration(ns - bwd), fmt_duration(bwd))


def kernels_word(n):
    return "%d kernel%s" % (n, "" if n == 1 else "s")


def functions_of(path):
    """(qualname, first, last) 1-based, from Python's own ast."""
    out = []
    tree = ast.parse(open(path, encoding="utf-8").read())

    def walk(node, prefix, in_func):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + ch.name
                out.append((q, ch.lineno, ch.end_lineno))
                walk(ch, q + ".<locals>.", True)
            elif isinstance(ch, ast.ClassDef):
                walk(ch, prefix + ch.name + ".", in_func)
            else:
                walk(ch, prefix, in_func)

    walk(tree, "", False)
    return out


def main():
    prof, ws = sys.argv[1], sys.argv[2]
    min_share = 0.01
    if "--min-share" in sys.argv:
        min_share = float(sys.argv[sys.argv.index("--min-share") + 1])
    db = sqlite3.connect("file:%s?mode=ro" % prof, uri=True)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    ranges = {}
    nodes, forward_ops = {}, {}  # tid -> [(start, end, seq)]; seq -> [(start, end, tid)]
    for start, end, text, text_id, tid in db.execute(
            "SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE eventType IN (59, 60)"):
        name = strings.get(text_id) if text_id is not None else text
        if not name or end is None:
            continue
        if name.startswith("kl:"):
            ranges.setdefault(tid, []).append((start, end, name))
            continue
        node, seq = node_of(name)
        if node:
            nodes.setdefault(tid, []).append((start, end, seq))
        elif seq is not None:
            forward_ops.setdefault(seq, []).append((start, end, tid))

    def forward_point(tid, cs, ce):
        """(thread, start, end) whose kl: range owns the call; (None, ...) for engine work."""
        inside = [n for n in nodes.get(tid, []) if n[0] <= cs and ce <= n[1]]
        if not inside:
            return (tid, cs, ce)
        ns, _, seq = max(inside, key=lambda n: n[0])
        ops = [o for o in forward_ops.get(seq, []) if o[0] < ns] if seq is not None else []
        if not ops:
            return (None, cs, ce)
        os_, oe, otid = max(ops, key=lambda o: o[0])
        return (otid, os_, oe)
    calls = {}
    for corr, tid, start, end in db.execute(
            "SELECT correlationId, globalTid, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        calls[(tid & ~0xFFFFFF, corr)] = (tid, start, end)
    ops = []
    # A kernel's identity is its demangled name (template instances differ); hovers show short names.
    for table, name_sql in (("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName, shortName"),
                            ("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind"),
                            ("CUPTI_ACTIVITY_KIND_MEMSET", None)):
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (table,)).fetchone():
            continue
        cols = "start, end, correlationId, globalPid" + (", " + name_sql if name_sql else "")
        for row in db.execute("SELECT %s FROM %s" % (cols, table)):
            if name_sql == "copyKind":
                kind = {1: "HtoD", 2: "DtoH", 8: "DtoD", 10: "PtoP"}.get(row[4], "unknown")
                nm = ("[CUDA memcpy %s]" % kind,) * 2
            elif name_sql:
                nm = (strings.get(row[4]) or strings.get(row[5]), strings.get(row[5]) or strings.get(row[4]))
            else:
                nm = ("[CUDA memset]",) * 2
            ops.append((row[0], row[1], row[2], row[3], nm))
    total = sum(e - s for s, e, _, _, _ in ops)
    acc = {}
    unmapped = 0
    points = {}  # op index -> (thread, start, end)
    backward = set()  # op indices launched inside a backward-node range (linked or engine work)
    linked = {}  # launching thread -> [(call start, forward thread)] of linked backward calls
    for i, (s, e, corr, gpid, nm) in enumerate(ops):
        call = calls.get((gpid, corr))
        if call:
            points[i] = forward_point(*call)
            if any(n[0] <= call[1] and call[2] <= n[1] for n in nodes.get(call[0], [])):
                backward.add(i)
            if points[i][0] is not None and points[i][0] != call[0]:
                linked.setdefault(call[0], []).append((call[1], points[i][0]))
    for i, p in list(points.items()):
        if p[0] is None:  # engine work: the thread blocked in backward(), at the call's own time
            tid, cs, ce = calls[(ops[i][3], ops[i][2])]
            near = min(linked.get(tid, []), key=lambda l: abs(l[0] - cs), default=None)
            points[i] = (near[1] if near else tid, cs, ce)
    for i, (s, e, corr, gpid, nm) in enumerate(ops):
        best = None
        if i in points:
            tid, cs, ce = points[i]
            for rs, re_, rn in ranges.get(tid, []):
                if rs <= cs and ce <= re_ and (best is None or rs > best[0]):
                    best = (rs, rn)
        if not best:
            unmapped += 1
            continue
        _, path, span = best[1].split(":", 3)[:3]
        first = int(span.split("-")[0])
        a = acc.setdefault((path, first), {"ns": 0, "bwd": 0, "ops": 0, "k": {}})
        a["ns"] += e - s
        if i in backward:
            a["bwd"] += e - s
        a["ops"] += 1
        a["k"][nm] = a["k"].get(nm, 0) + (e - s)
    funcs = {}
    lines = []
    for (path, first), a in sorted(acc.items()):
        if path not in funcs:
            funcs[path] = functions_of(os.path.join(ws, path))
        src = open(os.path.join(ws, path), encoding="utf-8").read().split("\n")
        inner = None
        for q, f0, f1 in funcs[path]:
            if f0 <= first <= f1 and (inner is None or f0 >= inner[1]):
                inner = (q, f0, f1)
        kernels = [k[1] for k, _ in sorted(a["k"].items(), key=lambda kv: (-kv[1], kv[0]))]
        a["distinct"] = sorted(k[0] for k in a["k"])
        lines.append({"path": path, "line": first, "ns": a["ns"], "bwd_ns": a["bwd"], "ops": a["ops"],
                      "kernels": kernels, "function": inner[0] if inner else "",
                      "distinct": a["distinct"],
                      "label": "◷ %s · %s" % (pass_time(a["ns"], a["bwd"]), kernels_word(len(a["distinct"]))),
                      "code": src[first - 1].strip()})
    functions = []
    for path, fl in sorted(funcs.items()):
        for q, f0, f1 in fl:
            inside = [l for l in lines if l["path"] == path and f0 <= l["line"] <= f1]
            if not inside:
                continue
            ns = sum(l["ns"] for l in inside)
            bwd = sum(l["bwd_ns"] for l in inside)
            names = set(k for l in inside for k in l["distinct"])
            title = "GPU %s · %s" % (pass_time(ns, bwd), kernels_word(len(names)))
            if total:
                title += " · " + fmt_share(ns / total)
            functions.append({"path": path, "qualname": q, "def_line": f0, "ns": ns, "bwd_ns": bwd,
                              "kernels": len(names), "title": title})
    fn_ns = {(f["path"], f["qualname"]): f["ns"] for f in functions}
    for l in lines:
        denom = fn_ns.get((l["path"], l["function"])) if l["function"] else total
        l["shown"] = bool(denom) and l["ns"] / denom >= min_share
    for l in lines:
        l["kernels"] = list(dict.fromkeys(l["kernels"]))  # short names, once each
    json.dump({"total_ns": total, "unmapped_ops": unmapped, "lines": lines,
               "functions": functions}, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
