#!/usr/bin/env python3
"""A small LSP client that drives the real `kernlens lsp` over stdio pipes.

Used by tests/e2e/lsp_stdio.sh. Each scenario starts a fresh server process, talks
Content-Length framed JSON-RPC to it, checks the answers and the process exit code.
Exits non-zero (with a one-line reason) on the first failure.
"""
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 20  # seconds for any single answer


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Client:
    def __init__(self, binary, *args, log_file=None):
        cmd = [binary, "lsp"] + list(args)
        if log_file:
            cmd += ["--log-file", log_file]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.messages = queue.Queue()
        self.stdout_error = None
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.next_id = 1

    def _read(self):
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    check(line.endswith(b"\r\n"), "server header line not CRLF-terminated: %r" % line)
                    name, _, value = line.decode("ascii").partition(":")
                    headers[name.strip().lower()] = value.strip()
                check("content-length" in headers, "server message without Content-Length")
                body = out.read(int(headers["content-length"]))
                self.messages.put(json.loads(body.decode("utf-8")))
        except Exception as e:  # reported by the next receive()
            self.stdout_error = e

    def _drain_stderr(self):
        # The server logs to stderr unless --log-file is given; never let the pipe fill up.
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.stderr += chunk

    def write(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        msg = dict(msg, jsonrpc="2.0")
        body = json.dumps(msg).encode("utf-8")
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method, params=None):
        msg = {"method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def receive(self):
        try:
            return self.messages.get(timeout=TIMEOUT)
        except queue.Empty:
            raise Failure("no message from the server within %d s (stdout error: %s)"
                          % (TIMEOUT, self.stdout_error))

    def response(self, rid):
        """The response to request `rid`; server→client messages before it are skipped."""
        while True:
            msg = self.receive()
            if msg.get("id") == rid and "method" not in msg:
                return msg

    def wait_exit(self):
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure("server did not exit within %d s" % TIMEOUT)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def initialize(c, capabilities=None):
    rid = c.request("initialize", {"processId": os.getpid(), "rootUri": "file:///tmp/ws",
                                   "capabilities": capabilities or {}})
    r = c.response(rid)
    check("result" in r, "initialize failed: %s" % r)
    c.notify("initialized", {})
    return r["result"]


def open_in_workspace(c, ws, path, text):
    """initialize (workspace root `ws`, Markdown hovers) → initialized → didOpen of `ws`/`path`
    with `text`; returns the document's URI."""
    rid = c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                                   "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}}})
    check("result" in c.response(rid), "initialize failed")
    c.notify("initialized", {})
    uri = "file://" + ws + "/" + path
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": text}})
    return uri


def hover_text(c, uri, line, character=8, wait=TIMEOUT):
    """The hover's text on 1-based `line`, asked again until the server has loaded the stored
    results (it loads them at `initialized`); None when there is none within `wait` seconds."""
    deadline = time.time() + wait
    while True:
        r = c.response(c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                        "position": {"line": line - 1, "character": character}}))
        if r.get("result"):
            return r["result"]["contents"]["value"]
        if time.time() >= deadline:
            return None
        time.sleep(0.2)


def shutdown_and_exit(c):
    """shutdown → exit; the server must exit with code 0."""
    c.send({"id": 999, "method": "shutdown"})
    c.response(999)
    c.notify("exit")
    check(c.wait_exit() == 0, "the server did not exit cleanly")


def scenario_handshake(binary, threads, *extra):
    """initialize → initialized → didOpen/didChange → shutdown → exit: exit code 0."""
    c = Client(binary, "--threads", threads, *extra)
    try:
        result = initialize(c)
        caps = result["capabilities"]
        check(caps.get("positionEncoding") == "utf-16", "positionEncoding: %s" % caps)
        check(caps.get("textDocumentSync", {}).get("change") == 2, "incremental sync: %s" % caps)
        check(result.get("serverInfo", {}).get("name") == "kernlens", "serverInfo: %s" % result)
        c.notify("textDocument/didOpen", {"textDocument": {
            "uri": "file:///tmp/ws/a.py", "languageId": "python", "version": 1,
            "text": "def f():\n    return '🔥'  # 火\n"}})
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": "file:///tmp/ws/a.py", "version": 2},
            "contentChanges": [{"range": {"start": {"line": 1, "character": 12},
                                          "end": {"line": 1, "character": 14}}, "text": "x"}]})
        rid = c.request("kernlens/noSuchMethod", {})
        check(c.response(rid).get("error", {}).get("code") == -32601, "unknown method")
        rid = c.request("kernlens/sync")
        check(c.response(rid).get("result", "missing") is None, "kernlens/sync")
        rid = c.request("shutdown")
        r = c.response(rid)
        check("result" in r and r["result"] is None, "shutdown: %s" % r)
        c.notify("exit")
        code = c.wait_exit()
        check(code == 0, "exit code after shutdown+exit: %d (stderr: %s)"
              % (code, c.stderr.decode(errors="replace")))
    finally:
        c.kill()


def scenario_malformed(binary):
    """Garbage framing and bodies are logged; the server keeps serving; exit without
    shutdown gives 1."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "server.log")
        c = Client(binary, "--threads", "2", log_file=log)
        try:
            c.write(b"Content-Length: abc\r\n\r\n{}")
            c.write(b"Content-Length: 9\r\n\r\n{not json")
            c.write(b"Content-Type: text/plain\r\n\r\n")
            # A request split into single bytes arriving over time (partial reads).
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"processId": None, "rootUri": None,
                                          "capabilities": {}}}).encode()
            framed = b"Content-Length: %d\r\n\r\n" % len(body) + body
            for i in range(0, len(framed), 7):
                c.write(framed[i:i + 7])
                time.sleep(0.002)
            r = c.response(1)
            check("result" in r, "initialize after garbage: %s" % r)
            # Two requests in one write.
            b2 = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "nope"}).encode()
            b3 = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "kernlens/sync"}).encode()
            c.write(b"Content-Length: %d\r\n\r\n%sContent-Length: %d\r\n\r\n%s"
                    % (len(b2), b2, len(b3), b3))
            check(c.response(2)["error"]["code"] == -32601, "request 2")
            check(c.response(3)["result"] is None, "request 3")
            c.notify("exit")
            code = c.wait_exit()
            check(code == 1, "exit without shutdown must give 1, got %d" % code)
            text = open(log, encoding="utf-8").read()
            for needle in ("invalid Content-Length", "not valid JSON", "without Content-Length"):
                check(needle in text, "log lacks '%s':\n%s" % (needle, text))
        finally:
            c.kill()


def scenario_eof(binary):
    """The client goes away (stdin closed) without exit: the server ends with 1."""
    c = Client(binary)
    try:
        initialize(c)
        c.proc.stdin.close()
        code = c.wait_exit()
        check(code == 1, "exit code at end of input: %d" % code)
    finally:
        c.kill()


def main():
    binary = sys.argv[1]
    scenarios = [("handshake (inline)", lambda: scenario_handshake(binary, "0")),
                 ("handshake (pool)", lambda: scenario_handshake(binary, "3")),
                 ("handshake (--stdio, as clients pass it)",
                  lambda: scenario_handshake(binary, "1", "--stdio")),
                 ("malformed input", lambda: scenario_malformed(binary)),
                 ("end of input", lambda: scenario_eof(binary))]
    for name, run in scenarios:
        try:
            run()
        except Failure as e:
            print("lsp_stdio: %s: FAILED: %s" % (name, e))
            return 1
        print("lsp_stdio: %s: ok" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
