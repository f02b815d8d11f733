#!/usr/bin/env python3
"""Language-server benchmark (not a test): the real `kernlens lsp` over stdio pipes, timed
from the client side (request sent -> response read), on a 5,252-line Python file with
200,000 launches mapped onto 2,000 of its lines.

Prints p50/p99 (ms) of textDocument/inlayHint (whole file and a 60-line viewport),
textDocument/hover, textDocument/codeLens, a keystroke (didChange inserting one character,
then inlayHint for the viewport), and the kernlens.loadProfile time. The baseline in the
same run is an empty request round trip (kernlens/benchPing is unknown to the server,
which answers MethodNotFound at once): the pipe + JSON cost every request pays.

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
        self.proc = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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

    c = Client(a.kernlens)
    try:
        uri = "file://" + path
        rid = c.request("initialize", {"processId": os.getpid(), "rootUri": "file://" + ws,
                                       "capabilities": {}})
        check("result" in c.response(rid), "initialize failed")
        c.notify("initialized", {})
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                           "version": 1, "text": src}})
        t0 = time.perf_counter()
        r = c.response(c.request("workspace/executeCommand",
                                 {"command": "kernlens.loadProfile", "arguments": [prof]}))
        load_s = time.perf_counter() - t0
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
        results = {}
        for name, fn in [
            ("ping (baseline)", lambda i: timed("kernlens/benchPing", {})[0]),
            ("inlayHint whole file", lambda i: timed("textDocument/inlayHint", whole)[0]),
            ("inlayHint 60-line viewport", lambda i: timed("textDocument/inlayHint", viewport)[0]),
            ("hover", lambda i: timed("textDocument/hover", {
                "textDocument": {"uri": uri},
                "position": {"line": 2 + 7 * (i % 500) + 1, "character": 6}})[0]),
            ("codeLens", lambda i: timed("textDocument/codeLens", {"textDocument": {"uri": uri}})[0]),
        ]:
            xs = [fn(i) for i in range(a.reps)]
            results[name] = xs
        # Keystrokes: type characters into a comment at the end of a line in the viewport.
        version = 1
        keys = []
        line = view_first + 30
        col = len(src.split("\n")[line])
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
        results["keystroke: didChange + inlayHint viewport"] = keys
        c.response(c.request("shutdown"))
        c.notify("exit")
        c.wait_exit()
    finally:
        c.kill()

    print(f"file: {nlines} lines, {a.launches} launches on 2,000 lines, {hints} hints; {a.reps} requests each")
    print(f"kernlens.loadProfile: {load_s:.3f} s")
    print(f"{'request':44s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for name, xs in results.items():
        print(f"{name:44s} {pct(xs, 50):8.3f} {pct(xs, 99):8.3f}")


if __name__ == "__main__":
    main()
