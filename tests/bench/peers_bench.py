#!/usr/bin/env python3
"""kernlens next to the tools users already use, on the same inputs, in one run (not a test).

  nsys exports  kernlens `summary` + `tree`  vs  nsys-ai `skill run top_kernels` +
                `skill run nvtx_layer_breakdown` (its kernel -> NVTX attribution)
  Kineto traces kernlens `summary` + `overlap` + `gaps --per-stream`  vs  HolisticTraceAnalysis
                TraceAnalysis(trace_dir=...) .get_gpu_kernel_breakdown / .get_comm_comp_overlap /
                .get_idle_time_breakdown (all ranks of the run)

For every input: wall time and peak RSS of each side (each command is a child process, measured
with os.wait4; best of --repeat runs), the ratio peer / kernlens, and whether each side's numbers
agree with an independent count made here (SQL over the export with Python's sqlite3; counting
the JSON events), never with either tool's own tables. Where a side differs, the line says so and
by how much; "=SQL"/"=JSON" marks the side the independent count agrees with.

The truth, stated once:
  nsys   kernels: CUPTI_ACTIVITY_KIND_KERNEL rows, grouped by demangled name (count, sum(end-start)).
         attribution: a GPU op's (kernel, memcpy, memset) launch call is the
         CUPTI_ACTIVITY_KIND_RUNTIME row with its correlationId in the same process (the first such
         row); its ranges are the NVTX push/pop ranges (eventType 59, 70; NULL ends dropped) on the
         launching thread that contain the whole call; its path is their texts outermost first,
         joined by " > ". Per path: ops whose innermost range is the path's last (count, GPU ns);
         counted twice, all GPU ops (what `kernlens tree` counts) and kernels only (what nsys-ai's
         nvtx_layer_breakdown counts). Ops without a launch call or outside every range are in
         no path.
  Kineto GPU ops: ph "X" events of category kernel / gpu_memcpy / gpu_memset (and the pre-2022
         Kernel / Memcpy / Memset), ts/dur in us -> ns rounded; rank from distributedInfo.rank.
         Per rank: op count and GPU time; communication/compute overlap = |C n N| / |N| with N the
         union of kernels whose name starts with "nccl", C the union of the other kernels (memcpy
         and memset in neither); per (rank, stream): idle = span of the stream's ops - their union.
Agreement: counts exactly; times within max(1 us, 0.1 %) (nsys-ai prints milliseconds with two
decimals, so its times are compared within 0.005 ms per row); overlap percentages within 0.1.

usage:
  peers_bench.py --kernlens KL [--bench-venv DIR | --kernlens-only] [--nsys F...] [--kineto P...]
                 [--work DIR] [--repeat N] [--timeout S] [--markdown OUT]
  peers_bench.py --self-test           the agreement checker must report a planted difference
  peers_bench.py hta-worker TRACE_DIR OUT.json    (run by the bench venv's python)
Exit status: 1 when kernlens disagrees with the independent count (a peer disagreeing is a result,
printed, not a failure), 2 bad usage.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict

# ---------------------------------------------------------------- measurement


def measure(argv, out_path, env=None, timeout=None):
    """Runs argv as a child; stdout to out_path. Returns dict(rc, s, rss_kb, timed_out, err).
    The peak RSS comes from GNU time (/usr/bin/time -f %M), a small C parent: a child forked
    from this Python process would report this process's RSS at fork time when larger (Linux
    carries the parent's high-water mark across fork + exec). Wall time: measured here."""
    err_path = out_path + ".err"
    rss_path = out_path + ".rss"
    if os.path.exists(rss_path):
        os.remove(rss_path)
    # Without GNU time (the ctest smoke run on a machine without the `time` package) the peak
    # RSS is not measured and shows as "-"; tests/bench/peers.sh requires it.
    wrap = ["/usr/bin/time", "-f", "%M", "-o", rss_path] if os.access("/usr/bin/time", os.X_OK) else []
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(wrap + argv, stdout=out, stderr=err, env=env, start_new_session=True)
        killed = []
        timer = None
        if timeout:
            timer = threading.Timer(timeout, lambda: (killed.append(1), os.killpg(p.pid, 9)))
            timer.start()
        p.wait()
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
    with open(err_path, "rb") as f:
        err_text = f.read().decode("utf-8", "replace")
    rss = None
    try:
        with open(rss_path) as f:
            rss = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return {"rc": p.returncode, "s": wall, "rss_kb": rss, "timed_out": bool(killed),
            "err": err_text, "out": out_path}


def peak(values):
    """The largest peak RSS, or None when one was not measured."""
    values = list(values)
    return None if any(v is None for v in values) else max(values)


def best_of(n, run):
    """Calls run() n times; the run with the least wall time (its RSS with it)."""
    best = None
    for _ in range(n):
        r = run()
        if r["rc"] != 0 or r["timed_out"]:
            return r
        if best is None or r["s"] < best["s"]:
            best = r
    return best


def fail_reason(r, timeout):
    if r["timed_out"]:
        return f"timed out after {timeout:.0f} s"
    try:  # nsys-ai prints its errors as JSON on stdout
        with open(r["out"]) as f:
            e = json.load(f)["error"]
        msg = e.get("message", str(e)) if isinstance(e, dict) else str(e)
        return f"exit {r['rc']}: " + msg.strip().splitlines()[0][:160]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        pass
    lines = [l for l in r["err"].strip().splitlines() if l.strip()]
    return f"exit {r['rc']}: " + (lines[-1][:160] if lines else "no message")

# ---------------------------------------------------------------- agreement helpers


def time_ok(a, b, extra_ns=0):
    return abs(a - b) <= max(1000, 0.001 * abs(b)) + extra_ns


def compare_maps(side, truth, extra_ns_per_row=0):
    """side, truth: {key: (count, ns)}. Returns (n_differing_keys, n_keys_union, example)."""
    keys = set(side) | set(truth)
    bad = []
    for k in keys:
        a = side.get(k, (0, 0))
        b = truth.get(k, (0, 0))
        if a[0] != b[0] or not time_ok(a[1], b[1], extra_ns_per_row):
            bad.append((k, a, b))
    bad.sort(key=lambda x: -abs(x[2][0] - x[1][0]))
    ex = None
    if bad:
        k, a, b = bad[0]
        if a[0] == b[0] == 0:  # a time only (idle time per stream)
            ex = f"{str(k)[:60]!r}: {a[1]} ns vs {b[1]} ns"
        else:
            ex = f"{str(k)[:60]!r}: {a[0]} ops {a[1]} ns vs {b[0]} ops {b[1]} ns"
    return len(bad), len(keys), ex


def verdict(name, side, truth, unit, extra_ns_per_row=0, truth_name="SQL"):
    """One agreement word for one side: '=SQL' or '≠SQL (n/m differ, e.g. ...)'."""
    if side is None:
        return None
    nbad, nkeys, ex = compare_maps(side, truth, extra_ns_per_row)
    if nbad == 0:
        return {"ok": True, "text": f"={truth_name} ({nkeys} {unit})"}
    n_side = sum(v[0] for v in side.values())
    n_truth = sum(v[0] for v in truth.values())
    total = f"; {n_side} ops in all vs {n_truth}" if n_side != n_truth else ""
    return {"ok": False, "text": f"≠{truth_name} ({nbad}/{nkeys} {unit} differ{total}; e.g. {ex})"}

# ---------------------------------------------------------------- nsys: the independent count


def sqlite_input(path, work):
    """A plain .sqlite for path (a .gz is decompressed into work once)."""
    if not path.endswith(".gz"):
        return path
    out = os.path.join(work, "inputs", os.path.basename(path)[:-3])
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with gzip.open(path, "rb") as src, open(out + ".part", "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(out + ".part", out)
    return out


def nsys_truth(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    ops = []  # (pid, corr, dur, kernel name or None for a memcpy / memset)
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        for gpid, corr, s, e, dn in db.execute(
                'SELECT globalPid, correlationId, start, "end", demangledName '
                "FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            ops.append(((gpid or 0) >> 24, corr, e - s, strings.get(dn, str(dn))))
    kernels = list(ops)
    for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if table in tables:
            for gpid, corr, s, e in db.execute(
                    f'SELECT globalPid, correlationId, start, "end" FROM {table}'):
                ops.append(((gpid or 0) >> 24, corr, e - s, None))
    by_name = defaultdict(lambda: [0, 0])
    for _, _, d, n in kernels:
        by_name[n][0] += 1
        by_name[n][1] += d
    launches = {}  # (pid, corr) -> (tid, start, end)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for gtid, corr, s, e in db.execute(
                'SELECT globalTid, correlationId, start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME'):
            launches.setdefault(((gtid or 0) >> 24, corr), (gtid, s, e))
    ranges = defaultdict(list)  # tid -> [(start, end, text)]
    if "NVTX_EVENTS" in tables:
        cols = {r[1] for r in db.execute("PRAGMA table_info(NVTX_EVENTS)")}
        text = "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))" \
            if "textId" in cols else "text"
        for tid, s, e, t in db.execute(
                f'SELECT globalTid, start, "end", {text} FROM NVTX_EVENTS '
                'WHERE eventType IN (59, 70) AND "end" IS NOT NULL'):
            ranges[tid].append((s, -e, t or ""))
    db.close()
    # Per thread: launch calls in start order, swept against the ranges in start order.
    calls = defaultdict(list)  # tid -> [(start, end, op index)]
    no_launch = 0
    for i, (pid, corr, d, n) in enumerate(ops):
        l = launches.get((pid, corr))
        if l is None:
            no_launch += 1
        else:
            calls[l[0]].append((l[1], l[2], i))
    paths = defaultdict(lambda: [0, 0])
    kpaths = defaultdict(lambda: [0, 0])
    outside = 0
    for tid, cs in calls.items():
        cs.sort()
        rs = sorted(ranges.get(tid, []))
        j = 0
        stack = []  # open candidates: (start, end, text)
        for s, e, i in cs:
            while j < len(rs) and rs[j][0] <= s:
                stack.append((rs[j][0], -rs[j][1], rs[j][2]))
                j += 1
            # Ranges that ended before this call cannot contain a later one (calls on a thread
            # do not overlap), so they leave the stack for good.
            stack = [r for r in stack if r[1] >= e]
            enclosing = stack  # every range left started before the call and ends after it
            if not enclosing:
                outside += 1
                continue
            key = " > ".join(r[2] for r in enclosing)
            for m in (paths, kpaths) if ops[i][3] is not None else (paths,):
                m[key][0] += 1
                m[key][1] += ops[i][2]
    return {
        "kernels": len(kernels),
        "kernel_ns": sum(k[2] for k in kernels),
        "by_name": {k: tuple(v) for k, v in by_name.items()},
        "paths": {k: tuple(v) for k, v in paths.items()},
        "kernel_paths": {k: tuple(v) for k, v in kpaths.items()},
        "no_launch": no_launch,
        "outside": outside,
    }

# ---------------------------------------------------------------- nsys: the two sides


def kernlens_tree_paths(tree):
    paths = defaultdict(lambda: [0, 0])

    def walk(node, prefix):
        names = [node["name"]] * max(1, node.get("repeat", 1))
        path = prefix + names
        if node["exclusive_ops"]:
            p = paths[" > ".join(path)]
            p[0] += node["exclusive_ops"]
            p[1] += node["exclusive_ns"]
        for c in node.get("children", []):
            walk(c, path)

    for r in tree["roots"]:
        walk(r, [])
    return {k: tuple(v) for k, v in paths.items()}


def run_nsys_input(args, path, label):
    work = os.path.join(args.work, "nsys", label)
    os.makedirs(work, exist_ok=True)
    db = sqlite_input(path, args.work)
    truth = nsys_truth(db)
    reps = args.repeat if truth["kernels"] <= 200000 else 1
    row = {"input": label, "kind": "nsys", "ops": truth["kernels"], "notes": []}
    kl = args.kernlens
    ks = best_of(reps, lambda: measure([kl, "summary", db, "--format", "json", "--top", "0"],
                                       os.path.join(work, "kl-summary.json")))
    kt = best_of(reps, lambda: measure([kl, "tree", db, "--format", "json", "--max-nodes", "0"],
                                       os.path.join(work, "kl-tree.json")))
    row["kl"] = {"s": ks["s"] + kt["s"], "rss_kb": peak([ks["rss_kb"], kt["rss_kb"]]),
                 "parts": {"summary": ks["s"], "tree": kt["s"]}}
    if ks["rc"] or kt["rc"]:
        row["kl"]["error"] = fail_reason(ks if ks["rc"] else kt, args.timeout)
        row["kl_ok"] = False
    else:
        s = json.load(open(os.path.join(work, "kl-summary.json")))
        t = json.load(open(os.path.join(work, "kl-tree.json")))
        by_name = {k["name"]: (k["count"], k["total_ns"]) for k in s["top_kernels"]}
        row["kl"]["summary"] = verdict("kl", by_name, truth["by_name"], "kernel names")
        row["kl"]["tree"] = verdict("kl", kernlens_tree_paths(t), truth["paths"], "range paths")
        row["kl_ok"] = row["kl"]["summary"]["ok"] and row["kl"]["tree"]["ok"]
    if args.kernlens_only:
        return row, truth
    # nsys-ai: a copy of the export of its own (it writes its cache next to the profile);
    # cold = no cache yet (the first command builds it, the first NVTX query builds the
    # kernel map), warm = the same two commands again.
    ai = os.path.join(args.bench_venv, "bin", "nsys-ai")
    mine = os.path.join(work, os.path.basename(db))
    env = peer_env(args)

    def cold_and_warm():
        for p in (mine, mine + ".nsys-cache", mine + ".nsys-cache.build.lock"):
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)
        try:
            os.link(db, mine)
        except OSError:
            shutil.copyfile(db, mine)
        out = {}
        for phase in ("cold", "warm"):
            out[phase + "_summary"] = measure(
                [ai, "skill", "run", "top_kernels", mine, "--format", "json", "-p", "limit=1000000000"],
                os.path.join(work, f"ai-{phase}-summary.json"), env=env, timeout=args.timeout)
            out[phase + "_tree"] = measure(
                [ai, "skill", "run", "nvtx_layer_breakdown", mine, "--format", "json",
                 "-p", "limit=1000000000", "-p", "auto_depth=false", "-p", "report=compact"],
                os.path.join(work, f"ai-{phase}-tree.json"), env=env, timeout=args.timeout)
        return out

    best = None
    for _ in range(reps):
        r = cold_and_warm()
        failed = [k for k, v in r.items() if v["rc"] or v["timed_out"]]
        if failed:
            best = r
            break
        if best is None or r["cold_summary"]["s"] + r["cold_tree"]["s"] < \
                best["cold_summary"]["s"] + best["cold_tree"]["s"]:
            best = r
    row["peer"] = {"name": "nsys-ai"}
    failed = [k for k, v in best.items() if v["rc"] or v["timed_out"]]
    if failed:
        row["peer"]["error"] = f"{failed[0].replace('_', ' ')}: {fail_reason(best[failed[0]], args.timeout)}"
        return row, truth
    row["peer"]["s_cold"] = best["cold_summary"]["s"] + best["cold_tree"]["s"]
    row["peer"]["s_warm"] = best["warm_summary"]["s"] + best["warm_tree"]["s"]
    row["peer"]["rss_kb"] = peak(v["rss_kb"] for v in best.values())
    if any("DuckDB unavailable" in v["err"] for v in best.values()):
        row["notes"].append("nsys-ai fell back to sqlite3 (DuckDB unavailable)")
    # The cold output is judged; a warm one that prints something else is said so.
    summ = json.load(open(os.path.join(work, "ai-cold-summary.json")))
    tree = json.load(open(os.path.join(work, "ai-cold-tree.json")))
    for what, cold in (("summary", summ), ("tree", tree)):
        if json.load(open(os.path.join(work, f"ai-warm-{what}.json"))) != cold:
            row["notes"].append(f"nsys-ai's warm {what} differs from its cold one")
    row["peer"]["summary"] = peer_rows_verdict(
        summ, truth["by_name"], "kernel names", "kernel_name", "invocations", "total_ms")
    row["peer"]["tree"] = peer_rows_verdict(
        tree, truth["kernel_paths"], "range paths", "nvtx_path", "kernel_count", "total_gpu_ms")
    return row, truth


def peer_rows_verdict(rows, truth, unit, key, count, ms):
    if isinstance(rows, dict):
        rows = [rows]
    errs = [r["error"] for r in rows if isinstance(r, dict) and "error" in r]
    if errs:
        return {"ok": False, "text": f"no result: {str(errs[0])[:120]}"}
    side = defaultdict(lambda: [0, 0])
    for r in rows:
        if not isinstance(r, dict) or key not in r:
            continue
        v = side[r[key]]
        v[0] += int(r[count])
        v[1] += int(round(float(r[ms]) * 1e6))
    if not side and truth:
        return {"ok": False, "text": f"no result: empty output ({len(truth)} {unit} expected)"}
    # milliseconds with 2 decimals: up to 0.005 ms rounding per row
    return verdict("nsys-ai", {k: tuple(v) for k, v in side.items()}, truth, unit, 5000)


def peer_env(args):
    """The peers' environment: HOME in the work dir, where DuckDB finds the sqlite extension
    that requirements/bench.txt installed (duckdb-ext-sqlite), so nothing is downloaded."""
    home = os.path.join(args.work, "home")
    ext = os.path.join(home, ".duckdb", "extensions")
    if not os.path.exists(ext):
        os.makedirs(os.path.dirname(ext), exist_ok=True)
        site = subprocess.check_output(
            [os.path.join(args.bench_venv, "bin", "python"), "-c",
             "import duckdb_ext, os; print(os.path.join(list(duckdb_ext.__path__)[0], 'extensions'))"],
            text=True).strip()
        os.symlink(site, ext)
    env = dict(os.environ)
    env["HOME"] = home
    env["MPLCONFIGDIR"] = os.path.join(home, "mpl")
    return env

# ---------------------------------------------------------------- Kineto: the independent count


GPU_CATS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memory", "Memcpy": "memory",
            "gpu_memset": "memory", "Memset": "memory"}


def kineto_files(path):
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path)
                      if f.endswith(".json") or f.endswith(".json.gz"))
    return [path]


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    i = j = 0
    tot = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if e > s:
            tot += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def kineto_stats(rank, ops):
    """ops: [(kind, stream, start_ns, end_ns, name)] of one rank -> counts, overlap, idle."""
    comm = union((s, e) for k, _, s, e, n in ops if k == "kernel" and n.startswith("nccl"))
    comp = union((s, e) for k, _, s, e, n in ops if k == "kernel" and not n.startswith("nccl"))
    streams = defaultdict(list)
    for _, st, s, e, _ in ops:
        streams[st].append((s, e))
    idle = {}
    for st, iv in streams.items():
        u = union(iv)
        idle[(rank, str(st))] = (0, u[-1][1] - u[0][0] - length(u))
    n_len = length(comm)
    return {
        "ops": (len(ops), sum(e - s for _, _, s, e, _ in ops)),
        "overlap_pct": (100.0 * intersect(comp, comm) / n_len) if n_len else None,
        "idle": idle,
    }


def kineto_truth(path):
    """{rank: stats of every GPU op}, and the same for the ops HTA keeps by default when the
    trace has 2+ ProfilerStep ranges: those whose launch call (the CPU event with the op's
    correlation id) starts before the last ProfilerStep starts; None otherwise."""
    ranks, scoped = {}, {}
    for f in kineto_files(path):
        opener = gzip.open if f.endswith(".gz") else open
        with opener(f, "rt") as fh:
            d = json.load(fh)
        rank = int((d.get("distributedInfo") or {}).get("rank", 0))
        ops = []  # (kind, stream, start_ns, end_ns, name, correlation)
        cpu_corr_ts = {}
        steps = []
        for e in d.get("traceEvents", []):
            if e.get("ph") != "X":
                continue
            args = e.get("args") or {}
            cat = e.get("cat")
            if cat in GPU_CATS:
                stream = args.get("stream", e.get("tid"))
                s = int(round(float(e["ts"]) * 1000))
                en = s + int(round(float(e.get("dur", 0)) * 1000))
                ops.append((GPU_CATS[cat], stream, s, en, e.get("name", ""), args.get("correlation")))
            elif not str(cat).startswith("gpu_"):
                if "ProfilerStep" in str(e.get("name", "")):
                    steps.append(float(e["ts"]))
                if args.get("correlation") is not None:
                    cpu_corr_ts.setdefault(args["correlation"], float(e["ts"]))
        ranks[rank] = kineto_stats(rank, [o[:5] for o in ops])
        if len(steps) >= 2:
            last = max(steps)
            kept = [o[:5] for o in ops if o[5] is not None and cpu_corr_ts.get(o[5], last) < last]
            scoped[rank] = kineto_stats(rank, kept)
    return ranks, (scoped if len(scoped) == len(ranks) else None)

# ---------------------------------------------------------------- Kineto: the two sides


def run_kineto_input(args, path, label):
    work = os.path.join(args.work, "kineto", label)
    os.makedirs(work, exist_ok=True)
    truth, scoped = kineto_truth(path)
    row = {"input": label, "kind": "kineto", "ops": sum(r["ops"][0] for r in truth.values()),
           "ranks": len(truth), "notes": []}
    t_ops = {r: v["ops"] for r, v in truth.items()}
    t_idle = {k: v for r in truth.values() for k, v in r["idle"].items()}
    kl = args.kernlens
    cmds = {
        "summary": [kl, "summary", path, "--format", "json", "--top", "0"],
        "overlap": [kl, "overlap", path, "--format", "json"],
        "gaps": [kl, "gaps", path, "--format", "json", "--per-stream", "--min-gap", "1ns", "--top", "1"],
    }
    res = {}
    for name, argv in cmds.items():
        res[name] = best_of(args.repeat, lambda argv=argv, name=name: measure(
            argv, os.path.join(work, f"kl-{name}.json")))
    row["kl"] = {"s": sum(r["s"] for r in res.values()), "rss_kb": peak(r["rss_kb"] for r in res.values()),
                 "parts": {k: v["s"] for k, v in res.items()}}
    bad = [k for k, v in res.items() if v["rc"]]
    if bad:
        row["kl"]["error"] = f"{bad[0]}: {fail_reason(res[bad[0]], args.timeout)}"
        row["kl_ok"] = False
    else:
        s = json.load(open(os.path.join(work, "kl-summary.json")))
        o = json.load(open(os.path.join(work, "kl-overlap.json")))
        g = json.load(open(os.path.join(work, "kl-gaps.json")))
        ops = defaultdict(lambda: [0, 0])
        for st in s["streams"]:
            v = ops[int(st["rank"])]
            v[0] += st["kernels"] + st["memcpys"] + st["memsets"]
            v[1] += st["kernel_ns"] + st["memcpy_ns"] + st["memset_ns"]
        row["kl"]["summary"] = verdict("kl", {k: tuple(v) for k, v in ops.items()}, t_ops, "ranks",
                                       truth_name="JSON")
        row["kl"]["overlap"] = overlap_verdict(
            {int(d["rank"]): 100.0 * d["nccl_overlapped_fraction"] for d in o["devices"]
             if d.get("nccl_ns")}, truth)
        row["kl"]["idle"] = verdict(
            "kl", {(int(x["rank"]), str(x["stream"])): (0, x["idle_ns"]) for x in g["streams"]},
            t_idle, "streams", truth_name="JSON")
        row["kl_ok"] = all(row["kl"][k]["ok"] for k in ("summary", "overlap", "idle"))
    if args.kernlens_only:
        return row, truth
    # HTA reads a directory of the run's ranks: a single file gets a directory of its own.
    tdir = path
    if not os.path.isdir(path):
        tdir = os.path.join(work, "trace")
        os.makedirs(tdir, exist_ok=True)
        dst = os.path.join(tdir, os.path.basename(path))
        if not os.path.exists(dst):
            os.symlink(os.path.abspath(path), dst)
    py = os.path.join(args.bench_venv, "bin", "python")
    out = os.path.join(work, "hta.json")

    def one():
        if os.path.exists(out):
            os.remove(out)
        return measure([py, os.path.abspath(__file__), "hta-worker", tdir, out],
                       os.path.join(work, "hta.log"), env=peer_env(args), timeout=args.timeout)

    r = best_of(args.repeat, one)
    row["peer"] = {"name": "HTA"}
    if r["rc"] or r["timed_out"] or not os.path.exists(out):
        row["peer"]["error"] = fail_reason(r, args.timeout)
        return row, truth
    h = json.load(open(out))
    row["peer"]["s_cold"] = r["s"]
    row["peer"]["rss_kb"] = r["rss_kb"]
    row["peer"]["parts"] = h["times"]
    for k in ("breakdown", "overlap", "idle"):
        if "error" in h.get(k, {}):
            row["peer"][{"breakdown": "summary"}.get(k, k)] = {"ok": False, "text": f"no result: {h[k]['error'][:140]}"}
    if "summary" not in row["peer"]:
        ops = defaultdict(lambda: [0, 0])
        for x in h["breakdown"]["rows"]:
            v = ops[int(x["rank"])]
            v[0] += x["count"]
            v[1] += int(round(x["sum_us"] * 1000))
        side = {k: tuple(v) for k, v in ops.items()}
        # HTA keeps us: up to 1 us rounding per op.
        slack = 1000 * max(1, row["ops"])
        row["peer"]["summary"] = with_scope(
            verdict("HTA", side, t_ops, "ranks", extra_ns_per_row=slack, truth_name="JSON"),
            scoped and verdict("HTA", side, {r: v["ops"] for r, v in scoped.items()}, "ranks",
                               extra_ns_per_row=slack, truth_name="JSON"))
    if "overlap" not in row["peer"]:
        side = {int(x["rank"]): x["pct"] for x in h["overlap"]["rows"] if x["pct"] is not None}
        row["peer"]["overlap"] = with_scope(overlap_verdict(side, truth),
                                            scoped and overlap_verdict(side, scoped))
    if "idle" not in row["peer"]:
        idle = defaultdict(lambda: [0, 0])
        for x in h["idle"]["rows"]:
            idle[(int(x["rank"]), str(x["stream"]))][1] += int(round(x["idle_us"] * 1000))
        side = {k: tuple(v) for k, v in idle.items()}
        row["peer"]["idle"] = with_scope(
            verdict("HTA", side, t_idle, "streams", truth_name="JSON"),
            scoped and verdict("HTA", side, {k: v for r in scoped.values() for k, v in r["idle"].items()},
                               "streams", truth_name="JSON"))
    if h.get("warnings"):
        row["notes"].extend(h["warnings"])
    return row, truth


def with_scope(full, scoped):
    """A difference from the whole trace that vanishes on HTA's default scope is said so."""
    if full["ok"] or not scoped:
        return full
    if not scoped["ok"]:
        return {"ok": False, "text": full["text"] + "; without the last ProfilerStep (HTA's default scope) "
                + scoped["text"]}
    return {"ok": False, "text": full["text"].split(" (")[0] +
            " over the whole trace, =JSON without the last ProfilerStep (HTA's default scope)"}


def overlap_verdict(side, truth):
    t = {r: v["overlap_pct"] for r, v in truth.items() if v["overlap_pct"] is not None}
    if not t and not side:
        return {"ok": True, "text": "=JSON (no NCCL kernels)"}
    bad = [(r, side.get(r), t.get(r)) for r in sorted(set(side) | set(t))
           if side.get(r) is None or t.get(r) is None or abs(side[r] - t[r]) > 0.1]
    if not bad:
        return {"ok": True, "text": f"=JSON ({len(t)} ranks)"}
    r, a, b = bad[0]
    fa = "-" if a is None else f"{a:.2f}"
    fb = "-" if b is None else f"{b:.2f}"
    return {"ok": False, "text": f"≠JSON ({len(bad)}/{len(set(side) | set(t))} ranks differ; rank {r}: {fa} % vs {fb} %)"}


def hta_worker(trace_dir, out_path):
    """Runs in the bench venv: HTA the way its documentation shows, results as plain JSON."""
    import warnings
    warnings.filterwarnings("ignore")
    res = {"times": {}, "warnings": []}
    t0 = time.perf_counter()
    from hta.trace_analysis import TraceAnalysis
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    res["times"]["load"] = time.perf_counter() - t0
    ranks = sorted(analyzer.t.traces.keys())

    def timed(name, fn):
        t = time.perf_counter()
        try:
            res[name] = fn()
        except Exception as e:  # an input HTA cannot analyse is a result, not a crash
            res[name] = {"error": f"{type(e).__name__}: {e}"}
        res["times"][name] = time.perf_counter() - t

    def breakdown():
        _, kd = analyzer.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0,
                                                  num_kernels=10**9, include_memory_kernels=True)
        rows = []
        for _, x in kd.iterrows():
            mean = float(x["mean (us)"])
            rows.append({"rank": int(x["rank"]), "name": str(x["name"]), "sum_us": float(x["sum (us)"]),
                         "count": int(round(float(x["sum (us)"]) / mean)) if mean > 0 else 0})
        return {"rows": rows}

    def overlap():
        o = analyzer.get_comm_comp_overlap(visualize=False)
        return {"rows": [{"rank": int(x["rank"]),
                          "pct": None if x["comp_comm_overlap_pctg"] != x["comp_comm_overlap_pctg"]
                          else float(x["comp_comm_overlap_pctg"])} for _, x in o.iterrows()]}

    def idle():
        df, _ = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
        return {"rows": [{"rank": int(x["rank"]), "stream": str(x["stream"]), "idle_us": float(x["idle_time"])}
                         for _, x in df.iterrows()]}

    timed("breakdown", breakdown)
    timed("overlap", overlap)
    timed("idle", idle)
    with open(out_path, "w") as f:
        json.dump(res, f)

# ---------------------------------------------------------------- report


def fmt_s(x):
    return "-" if x is None else f"{x:.2f}"


def fmt_mb(kb):
    return "-" if kb is None else f"{kb / 1024:.0f}"


def agreement_text(row):
    parts = []
    kl = row.get("kl", {})
    peer = row.get("peer", {})
    pname = peer.get("name", "peer")
    for k in ("summary", "tree", "overlap", "idle"):
        if k in kl or k in peer:
            a = kl.get(k, {}).get("text", "-")
            b = peer.get(k, {}).get("text", "-") if "error" not in peer else "-"
            parts.append(f"{k}: kernlens {a}" + ("" if "peer" not in row else f"; {pname} {b}"))
    if "error" in kl:
        parts.append(f"kernlens failed: {kl['error']}")
    if "error" in peer:
        parts.append(f"{pname} could not read it: {peer['error']}")
    parts.extend(row.get("notes", []))
    return " | ".join(parts)


def print_header(peers, ops="ops"):
    hdr = f"{'input':<44} {ops:>9} {'kl_s':>7} {'kl_MB':>6}"
    if peers:
        hdr += f" {'peer':>8} {'cold_s':>8} {'warm_s':>8} {'peer_MB':>7} {'t_ratio':>8} {'mem_ratio':>9}"
    print(hdr)
    sys.stdout.flush()


def print_rows(rows, peers):
    for r in rows:
        kl = r["kl"]
        line = f"{r['input'][:44]:<44} {r['ops']:>9} {fmt_s(kl['s']):>7} {fmt_mb(kl['rss_kb']):>6}"
        if peers:
            p = r.get("peer", {})
            if "error" in p:
                line += f" {p.get('name', ''):>8} {'n/a':>8} {'n/a':>8} {'n/a':>7} {'n/a':>8} {'n/a':>9}"
            else:
                ratio = p["s_cold"] / kl["s"] if kl["s"] else None
                mem = p["rss_kb"] / kl["rss_kb"] if kl["rss_kb"] and p["rss_kb"] else None
                line += (f" {p['name']:>8} {fmt_s(p['s_cold']):>8} {fmt_s(p.get('s_warm')):>8}"
                         f" {fmt_mb(p['rss_kb']):>7} {fmt_s(ratio):>8} {fmt_s(mem):>9}")
        print(line)
        print("    " + agreement_text(r))
    sys.stdout.flush()


def markdown(rows, peers):
    out = []
    out.append("| input | kernels (nsys) / GPU ops (Kineto) | kernlens s | kernlens MB | peer | peer s (cold / warm) | peer MB "
               "| time ratio peer/kernlens | memory ratio | agreement with the independent count |")
    out.append("|---|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for r in rows:
        kl = r["kl"]
        p = r.get("peer", {})
        if not peers:
            ps = pm = tr = mr = "-"
        elif "error" in p:
            ps = pm = tr = mr = "n/a"
        else:
            ps = fmt_s(p["s_cold"]) + (f" / {fmt_s(p['s_warm'])}" if p.get("s_warm") is not None else "")
            pm = fmt_mb(p["rss_kb"])
            tr = fmt_s(p["s_cold"] / kl["s"]) if kl["s"] else "-"
            mr = fmt_s(p["rss_kb"] / kl["rss_kb"]) if kl["rss_kb"] and p["rss_kb"] else "-"
        agree = agreement_text(r).replace("|", "\\|")
        out.append(f"| {r['input']} | {r['ops']} | {fmt_s(kl['s'])} | {fmt_mb(kl['rss_kb'])} | "
                   f"{p.get('name', '-')} | {ps} | {pm} | {tr} | {mr} | {agree} |")
    return "\n".join(out) + "\n"

# ---------------------------------------------------------------- self-test


def self_test():
    """The checker must see a planted difference and pass an identical copy."""
    truth = {"a > b": (3, 3000), "a": (1, 50000)}
    same = verdict("x", dict(truth), truth, "paths")
    moved = verdict("x", {"a > b": (2, 2000), "a": (2, 51000)}, truth, "paths")
    late = verdict("x", {"a > b": (3, 3000), "a": (1, 60000)}, truth, "paths")
    t = kineto_truth_from_ops({0: [("kernel", 1, 0, 100, "gemm"), ("kernel", 2, 50, 150, "ncclKernel_x")]})
    ok = same["ok"] and not moved["ok"] and not late["ok"] and abs(t[0]["overlap_pct"] - 50.0) < 1e-9
    ov = overlap_verdict({0: 40.0}, t)
    ok = ok and not ov["ok"] and overlap_verdict({0: 50.0}, t)["ok"]
    print("peers_bench self-test:", "ok" if ok else "FAIL", same["text"], "/", moved["text"], "/", ov["text"])
    return 0 if ok else 1


def kineto_truth_from_ops(by_rank):
    out = {}
    for rank, ops in by_rank.items():
        comm = union((s, e) for k, _, s, e, n in ops if k == "kernel" and n.startswith("nccl"))
        comp = union((s, e) for k, _, s, e, n in ops if k == "kernel" and not n.startswith("nccl"))
        out[rank] = {"overlap_pct": 100.0 * intersect(comp, comm) / length(comm) if comm else None}
    return out

# ---------------------------------------------------------------- main


def main(argv):
    if argv[:1] == ["hta-worker"]:
        hta_worker(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser(description="kernlens vs nsys-ai and HolisticTraceAnalysis")
    ap.add_argument("--kernlens")
    ap.add_argument("--bench-venv")
    ap.add_argument("--kernlens-only", action="store_true",
                    help="only kernlens and the independent count (no peers; what ctest runs)")
    ap.add_argument("--nsys", nargs="*", default=[])
    ap.add_argument("--kineto", nargs="*", default=[])
    ap.add_argument("--work")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--markdown")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.kernlens or (not args.kernlens_only and not args.bench_venv):
        ap.error("--kernlens and (--bench-venv or --kernlens-only) are required")
    if not args.kernlens_only:
        for tool in ("nsys-ai", "python"):
            if not os.access(os.path.join(args.bench_venv, "bin", tool), os.X_OK):
                ap.error(f"{args.bench_venv}/bin/{tool} missing: make it with scripts/venv.sh bench")
    for path in args.nsys + args.kineto:
        if not os.path.exists(path):
            ap.error(f"{path}: no such input")
    args.work = args.work or os.path.join(os.environ.get("TMPDIR", "/tmp"), "kl-peers")
    os.makedirs(args.work, exist_ok=True)
    peers = not args.kernlens_only
    kl_bad = 0
    all_rows = []
    def label_of(p):
        label = os.path.basename(p.rstrip("/"))
        m = re.fullmatch(r"attr-bench-v\d+-(\d+)\.sqlite", label)
        return f"synthetic-{int(m.group(1)):,}-kernels.sqlite" if m else label  # a generated export

    groups = [
        (args.nsys, run_nsys_input, "kernels", "-- nsys exports: kernlens summary + tree" +
         (" vs nsys-ai skill run top_kernels + nvtx_layer_breakdown (cold: no cache yet; warm: cached)"
          if peers else "")),
        (args.kineto, run_kineto_input, None, "-- Kineto traces: kernlens summary + overlap + gaps" +
         (" vs HTA TraceAnalysis: load + kernel breakdown + comm/comp overlap + idle time" if peers else "")),
    ]
    for inputs, run_input, unit, title in groups:
        if not inputs:
            continue
        print(title)
        print_header(peers, *([unit] if unit else []))
        for p in inputs:
            row, _ = run_input(args, p, label_of(p))
            all_rows.append(row)
            kl_bad += not row["kl_ok"]
            print_rows([row], peers)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(all_rows, peers))
    if kl_bad:
        print(f"peers_bench: kernlens disagrees with the independent count on {kl_bad} input(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
