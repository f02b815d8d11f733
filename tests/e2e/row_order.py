#!/usr/bin/env python3
"""Row-order independence: every command's output is the same whatever order the rows come in.

usage: row_order.py KERNLENS WORKDIR INPUT...      (INPUT: nsys SQLite [.gz], Kineto JSON [.gz],
                                                    or a folder of rank files)
Nsight Systems 2025.6 and later no longer write rows in timestamp order, and a Kineto trace's
events may come in any order. For each input two copies are written with the same name in two
folders: "sorted" (every table's rows in ascending order of all their columns, the timestamp
columns first; Kineto events by timestamp) and "shuffled" (every table's rows, and the events, in a
seeded random order). Every command of tests/bench/compare_outputs.sh runs on both and the outputs
(the folder name replaced) must be byte-identical. A table with an INTEGER PRIMARY KEY is stored
in key order whatever the insert order, by SQLite as by nsys: its order cannot change.
Env: KL_ROW_ORDER_SEED (default 1), KL_ROW_ORDER_CMDS (";"-separated, default: the full list).
"""
import gzip
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys

CMDS = [
    "tree --format json", "tree --format text", "tree --format csv", "tree --format json --gpu 0",
    "summary --format json", "summary --format text", "summary --format csv", "summary --short --format text",
    "info --format json", "info --format text",
    "search kernel --format json", "search . --regex --format text",
    "gaps --format json", "overlap --format json", "nccl --format json", "iters --format json",
    "memcpy --format json", "launch --format json", "threads --format json", "diagnose --format json",
    "export --format csv", "export --format json",
    "tree --format json --trim 0 50ms",
]
TIME_FIRST = ("start", "timestamp", "end")


def opened(path, mode="rb"):
    return gzip.open(path, mode) if path.endswith(".gz") else open(path, mode)


def rewrite_sqlite(src, dst, rng):
    """Rows move inside SQLite (INSERT ... SELECT ... ORDER BY): every value keeps its bytes and type."""
    with opened(src) as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    db = sqlite3.connect(dst)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        q = '"%s"' % t.replace('"', '""')
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % q)]
        qc = ['"%s"' % c.replace('"', '""') for c in cols]
        db.execute("DROP TABLE IF EXISTS temp.kl_rows")
        db.execute("DROP TABLE IF EXISTS temp.kl_order")
        db.execute("CREATE TEMP TABLE kl_rows AS SELECT rowid AS kl_rid, * FROM %s" % q)
        db.execute("CREATE TEMP TABLE kl_order (kl_rid INTEGER PRIMARY KEY, pos INTEGER)")
        if rng is None:
            first = [qc[cols.index(c)] for c in TIME_FIRST if c in cols]
            order = ", ".join(first + [c for c in qc if c not in first])
            rids = [r[0] for r in db.execute("SELECT kl_rid FROM temp.kl_rows ORDER BY %s" % order)]
        else:
            rids = [r[0] for r in db.execute("SELECT kl_rid FROM temp.kl_rows")]
            rng.shuffle(rids)
        db.executemany("INSERT INTO temp.kl_order VALUES (?, ?)", ((rid, i) for i, rid in enumerate(rids)))
        db.execute("DELETE FROM %s" % q)
        db.execute("INSERT INTO %s (%s) SELECT %s FROM temp.kl_rows JOIN temp.kl_order USING (kl_rid) ORDER BY pos"
                   % (q, ", ".join(qc), ", ".join("kl_rows." + c for c in qc)))
    db.execute("DROP TABLE IF EXISTS temp.kl_rows")
    db.execute("DROP TABLE IF EXISTS temp.kl_order")
    db.commit()
    db.execute("VACUUM")
    db.close()


def rewrite_json(src, dst, rng):
    with opened(src, "rt") as f:
        doc = json.load(f)
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if isinstance(events, list):
        if rng is None:
            events.sort(key=lambda e: (e.get("ts", 0) if isinstance(e, dict) and isinstance(e.get("ts"), (int, float))
                                       else 0, json.dumps(e, sort_keys=True)))
        else:
            rng.shuffle(events)
    with open(dst, "w") as f:
        json.dump(doc, f)


def rewrite(src, dst, rng):
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
        for n in sorted(os.listdir(src)):
            rewrite(os.path.join(src, n), os.path.join(dst, n[:-3] if n.endswith(".gz") else n), rng)
    elif ".sqlite" in os.path.basename(src):
        rewrite_sqlite(src, dst, rng)
    else:
        rewrite_json(src, dst, rng)


def run(kernlens, cmd, path, folder):
    argv = cmd.split()
    r = subprocess.run([kernlens, argv[0], path] + argv[1:], capture_output=True, timeout=600)
    return (r.stdout + r.stderr).replace(folder.encode(), b"<dir>") + b"\nrc=%d\n" % r.returncode


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kernlens, work, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    seed = int(os.environ.get("KL_ROW_ORDER_SEED", "1"))
    cmds = [c.strip() for c in os.environ["KL_ROW_ORDER_CMDS"].split(";")] if os.environ.get("KL_ROW_ORDER_CMDS") else CMDS
    n = bad = 0
    for src in inputs:
        name = os.path.basename(src.rstrip("/"))
        name = name[:-3] if name.endswith(".gz") else name
        paths = {}
        for variant, rng in (("sorted", None), ("shuffled", random.Random("%d:%s" % (seed, name)))):
            d = os.path.join(work, variant)
            os.makedirs(d, exist_ok=True)
            paths[variant] = (os.path.join(d, name), d)
            rewrite(src, paths[variant][0], rng)
        differ = []
        for c in cmds:
            a = run(kernlens, c, *paths["sorted"])
            b = run(kernlens, c, *paths["shuffled"])
            n += 1
            if a != b:
                differ.append(c)
                if bad == 0 and len(differ) == 1:
                    import difflib
                    d = difflib.unified_diff(a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines(),
                                             "sorted", "shuffled", lineterm="", n=1)
                    print("\n".join(list(d)[:30]))
        print("row order: %-50s %d/%d commands identical%s" % (name, len(cmds) - len(differ), len(cmds),
                                                               ": differ: " + ", ".join(differ) if differ else ""),
              flush=True)
        bad += len(differ)
        for variant in paths:
            p = paths[variant][0]
            shutil.rmtree(p, True) if os.path.isdir(p) else os.remove(p)
    print("row order: %d outputs compared on %d inputs (seed %d): %d differ" % (n, len(inputs), seed, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
