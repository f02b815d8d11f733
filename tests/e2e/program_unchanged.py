"""The program under the probe is the program: every sample and real-code entry, and the probe's
own edge-case programs (tests/data/probe/unchanged_ws), run once without kernlens and once under
each backend with every workspace file instrumented; the program's own stdout, exit status and
stderr (tracebacks and warnings included) must be identical.

usage: program_unchanged.py [--backends emulate,torch,nsys] [--only NAME,...] [--nsys PATH]
       [--report FILE]

Instrumentation: each workspace .py file that does `import torch` gets every one-line simple
statement inside a function wrapped in `with torch.cuda.nvtx.range("kl:<rel>:<L>-<L>"):` (the
form kernlens's edits take, docs/annotations.md), far more ranges than a real round places, so
the overlay's line mapping is exercised on every line. What the comparison ignores, and why:
  * lines starting "kernlens-probe: " on stderr: the probe's own notes (documented in docs/probe.md);
  * nsys: the program's output is redirected inside the profiled command, so nsys's own messages
    never mix with it.
Whether spawn children and DataLoader workers ran the overlay is read from the emulated child
exports (kl: ranges of wslib.py in OUT.pid<PID>.sqlite) and printed.
"""

import argparse
import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("KL_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.environ.get("KL_PROBE_DIR") or os.path.join(SRC, "core", "runner", "probe")
PY = os.environ.get("KL_PYTHON") or sys.executable
WS_DATA = os.path.join(SRC, "tests", "data", "probe", "unchanged_ws")

# name: (workspace folder to copy, entry argv after "python", files whose kl: ranges show the overlay ran)
ENTRIES = {
    "mlp": ("samples/mlp", ["mlp.py", "--steps", "2"]),
    "transformer": ("samples/transformer", ["train.py", "--steps", "2"]),
    "dispatch": ("samples/dispatch", ["dispatch.py"]),
    "threads": ("samples/threads", ["threads.py"]),
    "nanogpt": ("tests/data/realcode/nanogpt", ["train_tiny.py", "--steps", "2"]),
    "nanogpt-foreach": ("tests/data/realcode/nanogpt", ["train_tiny.py", "--steps", "2", "--foreach"]),
    "nanogpt-eval": ("tests/data/realcode/nanogpt", ["train_tiny.py", "--steps", "1", "--forward-only"]),
    "nanogpt-ckpt": ("tests/data/realcode/nanogpt", ["train_ckpt.py", "--steps", "1"]),
    "wlm-lstm": ("tests/data/realcode/word_language_model", ["train_tiny.py", "--model", "LSTM"]),
    "wlm-transformer": ("tests/data/realcode/word_language_model", ["train_tiny.py", "--model", "Transformer"]),
    "raises": (WS_DATA, ["raises.py"]),
    "introspect": (WS_DATA, ["introspect.py"]),
    "tracers": (WS_DATA, ["tracers.py"]),
    "workers": (WS_DATA, ["workers.py"]),
    "legacy": (WS_DATA, ["legacy.py"]),
}
# Samples not run here, with the reason (printed, so a reader sees they were considered).
NOT_RUN = {
    "compiled": "torch.compile on a GPU (samples/compiled/README.md); the emulator does not support it",
    "cute": "needs the CUTE DSL (nvidia-cutlass-dsl) and a GPU",
}
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert,
          ast.Delete, ast.Pass, ast.Break, ast.Continue, ast.Import, ast.ImportFrom)


def instrument(text, rel):
    """Every one-line simple statement in a function body wrapped in an NVTX range; None when the
    file does not import torch at module level (the range would not resolve)."""
    tree = ast.parse(text)
    if not any(isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
               for n in tree.body):
        return None
    lines = text.splitlines(True)
    on_line = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            on_line[node.lineno] = on_line.get(node.lineno, 0) + 1
    wrap = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for body in _bodies(fn):
            for i, st in enumerate(body):
                if (isinstance(st, SIMPLE) and st.lineno == st.end_lineno and on_line[st.lineno] == 1
                        and not (i == 0 and body is fn.body and isinstance(st, ast.Expr)
                                 and isinstance(st.value, ast.Constant))
                        and not lines[st.lineno - 1][:st.col_offset].strip()):
                    wrap.add((st.lineno, st.col_offset))
    out = []
    for n, line in enumerate(lines, 1):
        col = next((c for (ln, c) in wrap if ln == n), None)
        if col is None:
            out.append(line)
            continue
        out.append(" " * col + 'with torch.cuda.nvtx.range("kl:%s:%d-%d"):\n' % (rel, n, n))
        out.append("    " + line)
    return "".join(out)


def _bodies(fn):
    """Statement lists of `fn`, nested blocks included, not nested functions or classes."""
    stack = [fn.body]
    while stack:
        body = stack.pop()
        yield body
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    stack.append(sub)
            for h in getattr(st, "handlers", []) or []:
                stack.append(h.body)


def make_overlay(ws, ov):
    files = {}
    for root, dirs, names in os.walk(ws):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            if not n.endswith(".py"):
                continue
            path = os.path.join(root, n)
            rel = os.path.relpath(path, ws).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                text = instrument(f.read(), rel)
            if text is None:
                continue
            dst = os.path.join(ov, "files", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w", encoding="utf-8") as f:
                f.write(text)
            files[rel] = "files/" + rel
    with open(os.path.join(ov, "overlay.json"), "w") as f:
        json.dump({"version": 1, "workspace": ws, "files": files}, f)
    return files


def nsys_binary(explicit):
    for c in (explicit, shutil.which("nsys"), "/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys"):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("KERNLENS_"):
            del env[k]
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    return env


def run(cmd, cwd, env, out_dir, timeout=600):
    """Runs cmd with stdout/stderr to files (inside the profiled command for nsys)."""
    so, se = os.path.join(out_dir, "stdout"), os.path.join(out_dir, "stderr")
    t0 = time.monotonic()
    with open(so, "wb") as fo, open(se, "wb") as fe:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=fo, stderr=fe, timeout=timeout)
    with open(so, encoding="utf-8", errors="replace") as f:
        out = f.read()
    with open(se, encoding="utf-8", errors="replace") as f:
        err = f.read()
    return rc, out, err, time.monotonic() - t0


def program_stderr(err):
    return "".join(l for l in err.splitlines(True) if not l.startswith("kernlens-probe: "))


def overlay_seen_in_children(out_path, rel):
    """{pid-export: number of kl: ranges of `rel`} for every child export next to out_path."""
    stem, ext = os.path.splitext(out_path)
    found = {}
    d = os.path.dirname(out_path)
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if not (n.startswith(os.path.basename(stem) + ".pid") and n.endswith(ext)):
            continue
        con = sqlite3.connect(p)
        try:
            k = con.execute("SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE ?", ("kl:%s:%%" % rel,)).fetchone()[0]
        finally:
            con.close()
        found[n] = k
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="emulate,torch,nsys")
    ap.add_argument("--only", default="")
    ap.add_argument("--nsys", default=None)
    ap.add_argument("--report", default=None)
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    names = [n for n in args.only.split(",") if n] or list(ENTRIES)
    nsys = nsys_binary(args.nsys) if "nsys" in backends else None
    if "nsys" in backends and nsys is None:
        print("program_unchanged: nsys not found: scripts/install-deps.sh nsys", file=sys.stderr)
        return 1
    for name, why in NOT_RUN.items():
        print("program_unchanged: %-16s not run: %s" % (name, why))
    tmp = tempfile.mkdtemp(prefix="kl-unchanged-")
    failures, report = [], []
    try:
        for name in names:
            folder, argv = ENTRIES[name]
            src = folder if os.path.isabs(folder) else os.path.join(SRC, folder)
            base = os.path.join(tmp, name)
            ws = os.path.join(base, "ws")
            shutil.copytree(src, ws, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            ov = os.path.join(base, "ov")
            files = make_overlay(ws, ov)
            env = clean_env()
            plain_dir = os.path.join(base, "plain")
            os.makedirs(plain_dir)
            rc0, out0, err0, t_plain = run([PY] + argv, ws, env, plain_dir)
            row = {"entry": name, "exit": rc0, "plain_s": round(t_plain, 1), "overlaid_files": len(files)}
            for be in backends:
                d = os.path.join(base, be)
                os.makedirs(d)
                penv = dict(env, PYTHONPATH=PROBE)
                probe = [PY, "-m", "kernlens_probe", "--backend", be, "--overlay", ov,
                         "--status", os.path.join(d, "status.json")]
                out_path = None
                if be == "emulate":
                    out_path = os.path.join(d, "out.sqlite")
                elif be == "torch":
                    out_path = os.path.join(d, "trace.json")
                if out_path:
                    probe += ["--out", out_path]
                cmd = probe + ["--", "python"] + argv
                if be == "nsys":
                    inner = " ".join(_q(c) for c in cmd) + " >%s 2>%s" % (_q(os.path.join(d, "prog.out")),
                                                                          _q(os.path.join(d, "prog.err")))
                    cmd = [nsys, "profile", "--trace=nvtx,osrt", "--sample=none", "--cpuctxsw=none",
                           "--force-overwrite=true", "--export=sqlite", "-o", os.path.join(d, "rep"),
                           "sh", "-c", "exec " + inner]
                rc, out, err, secs = run(cmd, ws, penv, d)
                if be == "nsys":
                    with open(os.path.join(d, "prog.out"), encoding="utf-8", errors="replace") as f:
                        out = f.read()
                    with open(os.path.join(d, "prog.err"), encoding="utf-8", errors="replace") as f:
                        err = f.read()
                with open(os.path.join(d, "status.json")) as f:
                    status = json.load(f)
                diffs = []
                if status.get("exit_code") != rc0 or (be != "nsys" and rc != rc0):
                    diffs.append("exit %s (status %s), plain %d" % (rc, status.get("exit_code"), rc0))
                if out != out0:
                    diffs.append("stdout differs:\n--- plain\n%s--- %s\n%s" % (out0, be, out))
                if program_stderr(err) != err0:
                    diffs.append("stderr differs:\n--- plain\n%s--- %s\n%s" % (err0, be, err))
                row[be] = {"s": round(secs, 1), "same": not diffs, "notes": status.get("notes", [])}
                if be == "emulate" and name == "workers":
                    seen = overlay_seen_in_children(out_path, "wslib.py")
                    row["children_kl_ranges_of_wslib"] = seen
                    # docs/probe.md §3: the 2 spawn Pool workers (square: 4 calls x 2 ranges) and the
                    # 2 spawn DataLoader workers (__getitem__: 6 items x 2 ranges) run the overlaid
                    # module and write exports; the fork workers write none.
                    if len(seen) != 4 or sum(seen.values()) != 4 * 2 + 6 * 2:
                        diffs.append("child exports with wslib.py ranges: %s (want 4 exports, 20 ranges)" % seen)
                print("program_unchanged: %-16s %-8s %s (plain %.1f s, probe %.1f s, exit %d)"
                      % (name, be, "same" if not diffs else "DIFFERENT", t_plain, secs, rc0))
                for dd in diffs:
                    failures.append("%s under %s: %s" % (name, be, dd))
            report.append(row)
            if name == "workers" and "emulate" in backends:
                print("program_unchanged: workers: kl: ranges of wslib.py in child exports:",
                      row["children_kl_ranges_of_wslib"])
    finally:
        shutil.rmtree(tmp, True)
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
    for f in failures:
        print("program_unchanged: FAIL " + f, file=sys.stderr)
    print("program_unchanged: %d entries x %d backends, %d differences"
          % (len(names), len(backends), len(failures)))
    return 1 if failures else 0


def _q(s):
    return "'" + s.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main())
