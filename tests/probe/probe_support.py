"""Shared helpers for the probe tests (run with the project venv's Python; see tests/e2e/probe_unit.sh)."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("KL_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
PROBE_DIR = os.environ.get("KL_PROBE_DIR") or os.path.join(SOURCE_DIR, "core", "runner", "probe")
DATA = os.path.join(SOURCE_DIR, "tests", "data", "probe")
PYTHON = os.environ.get("KL_PYTHON", sys.executable)

if PROBE_DIR not in sys.path:
    sys.path.insert(0, PROBE_DIR)


def make_workspace(tmp, name):
    """Copies tests/data/probe/<name>_ws to tmp/ws and writes tmp/overlay from <name>_overlay.
    Returns (workspace, overlay_dir)."""
    ws = os.path.join(tmp, "ws")
    shutil.copytree(os.path.join(DATA, name + "_ws"), ws)
    ov = os.path.join(tmp, "overlay")
    src = os.path.join(DATA, name + "_overlay")
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), src)
            dst = os.path.join(ov, "files", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(root, n), dst)
            files[rel.replace(os.sep, "/")] = "files/" + rel.replace(os.sep, "/")
    write_manifest(ov, ws, files)
    return ws, ov


def write_manifest(ov, ws, files):
    os.makedirs(ov, exist_ok=True)
    with open(os.path.join(ov, "overlay.json"), "w") as f:
        json.dump({"version": 1, "workspace": ws, "files": files}, f)


def run_probe(args, entry, cwd, env=None, timeout=300):
    e = dict(os.environ)
    e["PYTHONPATH"] = PROBE_DIR
    for k in list(e):
        if k.startswith("KERNLENS_PROBE_") and k != "KERNLENS_PROBE_NVTX":
            del e[k]
    e.update(env or {})
    return subprocess.run([PYTHON, "-m", "kernlens_probe"] + args + ["--"] + entry, cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=timeout)


def tmpdir(test):
    d = tempfile.mkdtemp(prefix="kl-probe-test-")
    test.addCleanup(shutil.rmtree, d, True)
    return d


def query(db, sql, args=()):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


# Innermost kl: range (on the launching thread) around each GPU op's launch call, plus its
# name; the attribution rule of DESIGN.md §5.
ATTRIBUTION_SQL = """
WITH ops AS (
  SELECT k.correlationId, k.globalPid, s.value AS name, k.start, k."end" FROM CUPTI_ACTIVITY_KIND_KERNEL k
  JOIN StringIds s ON s.id = k.shortName
  UNION ALL SELECT correlationId, globalPid, 'memcpy', start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY)
SELECT o.correlationId, o.name, r.globalTid,
  (SELECT n.text FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.globalTid = r.globalTid
     AND n.start <= r.start AND n."end" >= r."end" AND n.text LIKE 'kl:%'
     ORDER BY n.start DESC LIMIT 1) AS range_text
FROM ops o JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
  ON r.correlationId = o.correlationId AND (r.globalTid & -16777216) = o.globalPid
ORDER BY o.correlationId
"""
