#!/usr/bin/env python3
"""Correctness of `kernlens annotate --all-functions` / `kernlens strip` on real Python files.

For every file: annotate every function, then check
  (a) the result compiles whenever the original did,
  (b) the AST of the result, with the kernlens `with` wrappers spliced out and the
      `import torch  # kl:import` line removed, equals the original's AST,
  (c) `kernlens strip` gives back the original bytes.
Files kernlens refuses (syntax errors it sees, constructs it declines) are counted separately;
--min-annotated makes the run fail when too few files were annotated, so a refusing engine cannot
pass. Standard library only.

usage: nvtx_corpus_check.py --kernlens BIN --root DIR [--subset N] [--jobs J] [--min-annotated F]
                            [--list FILE | PATHS...]
"""
import argparse
import ast
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time


def is_kl_range(item):
    call = item.context_expr
    if not isinstance(call, ast.Call) or not call.args:
        return False
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "range"):
        return False
    a = call.args[0]
    return isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("kl:")


class Unwrap(ast.NodeTransformer):
    """Splices the bodies of kernlens `with` ranges into their parents."""

    def __init__(self):
        self.removed = 0

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                out = []
                for v in value:
                    if isinstance(v, ast.AST):
                        v = self.visit(v)
                        if isinstance(v, list):
                            out.extend(v)
                            continue
                    out.append(v)
                setattr(node, field, out)
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_With(self, node):
        node = self.generic_visit(node)
        if len(node.items) == 1 and node.items[0].optional_vars is None and is_kl_range(node.items[0]):
            self.removed += 1
            return node.body
        return node


def strip_import(tree, source_lines):
    body = []
    for stmt in tree.body:
        if (isinstance(stmt, ast.Import) and len(stmt.names) == 1 and stmt.names[0].name == "torch"
                and stmt.names[0].asname is None
                and source_lines[stmt.lineno - 1].rstrip(b"\r\n") == b"import torch  # kl:import"):
            continue
        body.append(stmt)
    tree.body = body
    return tree


def compiles(data, name):
    try:
        compile(data, name, "exec", dont_inherit=True)
        return True, ""
    except (SyntaxError, ValueError) as e:  # ValueError: null bytes
        return False, f"{type(e).__name__}: {e}"


def check(kernlens, root, path, tmpdir):
    rec = {"path": path, "status": None, "detail": "", "ranges": 0, "functions": 0, "skipped": []}
    with open(path, "rb") as fh:
        orig = fh.read()
    ok_orig, _ = compiles(orig, path)
    rec["orig_compiles"] = ok_orig
    if ok_orig:
        rec["functions"] = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                               for n in ast.walk(ast.parse(orig)))
    base = os.path.join(tmpdir, str(abs(hash(path))))
    annotated, back = base + ".annotated.py", base + ".back.py"
    p = subprocess.run([kernlens, "annotate", path, "--all-functions", "--root", root, "-o", annotated],
                       capture_output=True)
    if p.returncode != 0:
        rec["status"] = "refused"
        rec["detail"] = p.stderr.decode(errors="replace").strip().splitlines()[-1:] or ""
        return rec
    for line in p.stderr.decode(errors="replace").splitlines():
        if ": note: skipped " in line:
            rec["skipped"].append(line.split(": note: skipped ", 1)[1])
    with open(annotated, "rb") as fh:
        out = fh.read()
    # (a)
    if ok_orig:
        ok, why = compiles(out, path)
        if not ok:
            rec["status"], rec["detail"] = "fail-compile", why
            return rec
        # (b)
        try:
            t_orig = ast.parse(orig)
            t_out = ast.parse(out)
        except SyntaxError as e:
            rec["status"], rec["detail"] = "fail-ast", f"parse: {e}"
            return rec
        u = Unwrap()
        t_out = strip_import(u.visit(t_out), out.splitlines(keepends=True))
        rec["ranges"] = u.removed
        if ast.dump(t_orig) != ast.dump(t_out):
            rec["status"], rec["detail"] = "fail-ast", "AST differs after unwrapping"
            return rec
    # (c)
    p = subprocess.run([kernlens, "strip", annotated, "-o", back], capture_output=True)
    if p.returncode != 0:
        rec["status"], rec["detail"] = "fail-strip", p.stderr.decode(errors="replace").strip()
        return rec
    with open(back, "rb") as fh:
        if fh.read() != orig:
            rec["status"], rec["detail"] = "fail-strip", "stripped bytes differ from the original"
            return rec
    for f in (annotated, back):
        os.unlink(f)
    rec["status"] = "ok"
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernlens", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--subset", type=int, default=1, help="every N-th file (sorted), deterministic")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-annotated", type=float, default=0.95,
                    help="fail when fewer than this share of compiling files were annotated")
    ap.add_argument("--list")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()

    files = []
    if a.list:
        with open(a.list) as fh:
            files = [l.strip() for l in fh if l.strip()]
    for p in a.paths or ([] if a.list else [a.root]):
        if os.path.isdir(p):
            for d, dirs, fs in os.walk(p):
                dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", "site-packages", "dist-packages"))
                files += [os.path.join(d, f) for f in sorted(fs) if f.endswith(".py")]
        else:
            files.append(p)
    files = sorted(set(files))[:: max(1, a.subset)]
    t0 = time.time()
    results = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda f: check(a.kernlens, a.root, f, tmp), files):
            results.append(r)
    dt = time.time() - t0

    total = len(results)
    compiling = [r for r in results if r["orig_compiles"]]
    ok = [r for r in results if r["status"] == "ok"]
    refused = [r for r in results if r["status"] == "refused"]
    refused_compiling = [r for r in refused if r["orig_compiles"]]
    fails = [r for r in results if r["status"].startswith("fail")]
    ranges = sum(r["ranges"] for r in results)
    annotated_compiling = len(compiling) - len(refused_compiling)
    print(f"files: {total} ({len(compiling)} compile with {sys.version.split()[0]}), {dt:.1f}s")
    print(f"annotated: {total - len(refused)}; refused: {len(refused)} "
          f"({len(refused_compiling)} of them compile)")
    functions = sum(r["functions"] for r in results)
    skipped = [s for r in results for s in r["skipped"]]
    print(f"functions: {functions}; function ranges placed (unwrapped in (b)): {ranges}; "
          f"skipped with a reason: {len(skipped)}")
    reasons = {}
    for s in skipped:
        why = s.split(": ", 1)[-1]
        why = why.split("' ", 1)[-1] if why.startswith("function '") else why
        why = re.sub(r"\(line \d+\) ", "", why)
        reasons[why] = reasons.get(why, 0) + 1
    for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  skipped {n}: {why}")
    for key, label in (("fail-compile", "(a) compiles"), ("fail-ast", "(b) AST equal"),
                       ("fail-strip", "(c) strip exact")):
        n_fail = sum(1 for r in results if r["status"] == key)
        base = annotated_compiling if key != "fail-strip" else total - len(refused)
        print(f"{label}: {base - n_fail}/{base} passed")
    for r in refused_compiling[:20]:
        print(f"  refused (compiles): {r['path']}: {r['detail']}")
    for r in fails[:50]:
        print(f"  FAIL {r['status']}: {r['path']}: {r['detail']}")
    share = annotated_compiling / len(compiling) if compiling else 1.0
    if fails:
        return 1
    if share < a.min_annotated:
        print(f"only {share:.1%} of compiling files annotated (< {a.min_annotated:.0%})")
        return 1
    print(f"ok: 100% of annotated files pass (a), (b), (c); {share:.1%} of compiling files annotated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
