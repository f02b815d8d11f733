#!/usr/bin/env python3
"""Language-server benchmark (not a test): the real `kernlens lsp` over stdio pipes, timed
from the client side (request sent -> response read), on a 5,252-line Python file with
200,000 launches mapped onto 2,000 of its lines.

Prints p50/p99 (ms) of textDocument/inlayHint (whole file and a 60-line viewport),
textDocument/hover, textDocument/codeLens, a keystroke (didChange inserting one character,
then inlayHint for the viewport), and the kernlens.loadProfile time (best of 3), each with a
baseline measured in the same run, interleaved request by request:
  - hint requests and keystrokes: kernlens/benchHints, a bare JSON-RPC round trip through the
    same server that answers the SAME number of hints, serialised once in advance (framing,
    JSON parse of the request, dispatch, writing the bytes: no more work than any server
    answering that many hints must do);
  - hover and codeLens: kernlens/benchPing, an empty round trip (unknown method: the server
    answers MethodNotFound at once);
  - loadProfile: a bare `sqlite3` scan of the columns attribution reads
    (tests/bench/bare_scan.sql, aggregates only), best of 3.
The targets (p99 of a keystroke < 2 ms, whole-file inlayHint p99 < 5 ms, loadProfile < 0.3 s)
are printed next to the figures; the exit status does not depend on them.

usage: lsp_bench.py KERNLENS KL_INGEST_BENCH SCHEMA.sql WORKDIR [--launches N] [--reps R]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import lsp_client  # noqa: E402
from lsp_client import check  # noqa: E402


class Client(lsp_client.Client):
    """Synchronous stdio client that does not parse the bodies it only waits for: a response
    is recognised by its leading '{"id":N' (the server writes keys in sorted order; an error
    response starts with "error"), so the timings are the server's, not Python's JSON decoding
    of 2,000 hints. (send/request/notify are lsp_client's; no reader threads.)"""

    def __init__(self, binary):  # pylint: disable=super-init-not-called
        self.proc = subprocess.Popen([binary, "lsp", "--bench-baseline"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 1

    def raw_response(self, rid):
        want = b'{"id":%d,' % rid
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                check(line, "server closed its output")
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = out.read(length)
            if body.startswith(want) or (body.startswith(b'{"error"') and
                                         re.search(rb'"id":%d[,}]' % rid, body)):
                return body

    def response(self, rid):
        return json.loads(self.raw_response(rid))

    def wait_exit(self):
        return self.proc.wait(timeout=20)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

FUNCS = 750  # 7 lines each + 2 header lines = 5,252 lines


def make_source():
    lines = ["import torch", ""]
    for f in range(FUNCS):
        lines += [f"def layer_{f}(x):",
                  "    a = torch.relu(x)",
                  "    b = a * 2",
                  "    c = b + 1",
                  "    d = c.sum()",
                  "    return d",
                  ""]
    return "\n".join(lines) + "\n"


def mapped_lines():
    # The four statement lines (1-based) of the first 500 functions: 2,000 lines.
    return [3 + 7 * f + k for f in range(500) for k in range(1, 5)]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernlens")
    ap.add_argument("gen")
    ap.add_argument("schema")
    ap.add_argument("work")
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=300)
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)
    ws = os.path.join(a.work, "ws")
    os.makedirs(ws, exist_ok=True)
    src = make_source()
    path = os.path.join(ws, "model.py")
    with open(path, "w") as f:
        f.write(src)
    prof = os.path.join(a.work, f"lsp-bench-v1-{a.launches}.sqlite")
    if not os.path.exists(prof):
        lines = ",".join(str(x) for x in mapped_lines())
        rc = os.spawnv(os.P_WAIT, a.gen, [a.gen, "generate-lines", prof + ".part", str(a.launches),
                                          "model.py", lines, a.schema])
        check(rc == 0, "generating the profile failed")
        os.replace(prof + ".part", prof)

    sql = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bare_scan.sql")).read()
    open(prof, "rb").read()  # page cache warm for both sides
    scans = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(["sqlite3", f"file:{prof}?immutable=1", sql], check=True, stdout=subprocess.DEVNULL)
        scans.append(time.perf_counter() - t)

    c = Client(a.kernlens)
    try:
        uri = "file://" + path
        rid = c.request("initialize", {"processId": os.getpid(), "rootUri": "file://" + ws,
                                       "capabilities": {}})
        check("result" in c.response(rid), "initialize failed")
        c.notify("initialized", {})
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                           "version": 1, "text": src}})
        loads = []
        for _ in range(3):
            t0 = time.perf_counter()
            r = c.response(c.request("workspace/executeCommand",
                                     {"command": "kernlens.loadProfile", "arguments": [prof]}))
            loads.append(time.perf_counter() - t0)
            check("result" in r, "loadProfile failed: %s" % r)
            check(r["result"]["mappedOps"] == a.launches, "not every launch mapped: %s" % r["result"])

        def timed(method, params):
            t = time.perf_counter()
            body = c.raw_response(c.request(method, params))
            return (time.perf_counter() - t) * 1000.0, body

        nlines = src.count("\n")
        whole = {"textDocument": {"uri": uri},
                 "range": {"start": {"line": 0, "character": 0}, "end": {"line": nlines, "character": 0}}}
        view_first = 3000
        viewport = {"textDocument": {"uri": uri},
                    "range": {"start": {"line": view_first, "character": 0},
                              "end": {"line": view_first + 60, "character": 0}}}
        hints = len(c.response(c.request("textDocument/inlayHint", whole)).get("result") or [])
        check(hints >= 1900, f"expected ~2,000 hints on the whole file, got {hints}")
        view_hints = len(c.response(c.request("textDocument/inlayHint", viewport)).get("result") or [])
        check(view_hints > 0, "no hints in the viewport")

        def hint_baseline(count):
            def run(_i):
                return timed("kernlens/benchHints", {"count": count, "uri": uri})[0]
            return run

        # (name, fn, baseline name, baseline fn); each rep runs the request, then its baseline.
        ping = ("ping", lambda i: timed("kernlens/benchPing", {})[0])
        cases = [
            ("inlayHint whole file", lambda i: timed("textDocument/inlayHint", whole)[0],
             (f"{hints} hints precomputed", hint_baseline(hints))),
            ("inlayHint 60-line viewport", lambda i: timed("textDocument/inlayHint", viewport)[0],
             (f"{view_hints} hints precomputed", hint_baseline(view_hints))),
            ("hover", lambda i: timed("textDocument/hover", {
                "textDocument": {"uri": uri},
                "position": {"line": 2 + 7 * (i % 500) + 1, "character": 6}})[0], ping),
            ("codeLens", lambda i: timed("textDocument/codeLens", {"textDocument": {"uri": uri}})[0], ping),
        ]
        # the baselines' own answers must be as large as the real ones
        b_body = c.raw_response(c.request("kernlens/benchHints", {"count": hints, "uri": uri}))
        check(len(json.loads(b_body)["result"]) == hints, "benchHints answered a different count")
        results = []
        for name, fn, (bname, bfn) in cases:
            xs, bs = [], []
            for i in range(a.reps):
                xs.append(fn(i))
                bs.append(bfn(i))
            results.append((name, xs, bname, bs))
        # Keystrokes: type characters into a comment at the end of a line in the viewport.
        version = 1
        keys, kbase = [], []
        line = view_first + 30
        col = len(src.split("\n")[line])
        kb = hint_baseline(view_hints)
        for i in range(a.reps):
            version += 1
            t = time.perf_counter()
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": line, "character": col + i},
                                              "end": {"line": line, "character": col + i}},
                                    "text": "#" if i == 0 else "x"}]})
            c.raw_response(c.request("textDocument/inlayHint", viewport))
            keys.append((time.perf_counter() - t) * 1000.0)
            kbase.append(kb(i))
        results.append(("keystroke: didChange + inlayHint viewport", keys,
                        f"{view_hints} hints precomputed", kbase))
        c.response(c.request("shutdown"))
        c.notify("exit")
        c.wait_exit()
    finally:
        c.kill()

    targets = {"inlayHint whole file": "p99 < 5", "keystroke: didChange + inlayHint viewport": "p99 < 2"}
    print(f"file: {nlines} lines, {a.launches} launches on 2,000 lines, {hints} hints "
          f"({view_hints} in the viewport); {a.reps} requests each, each followed by its baseline")
    print(f"kernlens.loadProfile: best {min(loads):.3f} s (runs: {', '.join('%.3f' % x for x in loads)}); "
          f"bare sqlite3 scan of the same columns: best {min(scans):.3f} s; "
          f"ratio {min(loads) / min(scans):.1f}x; target < 0.3 s")
    print(f"{'request':42s} {'p50 ms':>7s} {'p99 ms':>7s}  {'baseline':24s} {'p50 ms':>7s} {'p99 ms':>7s} "
          f"{'x p50':>6s} {'x p99':>6s}  target")
    for name, xs, bname, bs in results:
        p50, p99, b50, b99 = pct(xs, 50), pct(xs, 99), pct(bs, 50), pct(bs, 99)
        print(f"{name:42s} {p50:7.3f} {p99:7.3f}  {bname:24s} {b50:7.3f} {b99:7.3f} "
              f"{p50 / b50:6.1f} {p99 / b99:6.1f}  {targets.get(name, '')}")


if __name__ == "__main__":
    main()
