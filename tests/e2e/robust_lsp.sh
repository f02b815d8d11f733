#!/usr/bin/env bash
# ctest-labels: lsp
# The server always answers and leaves nothing behind: a frame right after junk is served; a
# body that is not JSON gets -32700 (with its id when readable); kernlens.loadProfile on a FIFO
# fails at once and the server goes on; $/cancelRequest stops a running profile; a program that
# floods stdout reaches the editor rate-limited and capped while its log keeps every line; closing
# stdin during a run ends the server within 2 s with no process of the program left; a run left
# running by a killed server is closed as interrupted when the next server starts.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws"
printf 'def f():\n    return 1\n\nf()\n' > "$T/ws/app.py"
/usr/bin/python3 - "$KL" "$T" "$SRC/tests/e2e" "$SRC" <<'PY'
import json, os, sqlite3, sys, time
sys.path.insert(0, sys.argv[3])
from lsp_client import Client, Failure, check
kl, T, SRC = sys.argv[1], sys.argv[2], sys.argv[4]
ws = T + "/ws"
uri = "file://" + ws + "/app.py"

def alive(pid):
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

def pids_of(path, n, timeout=20):
    until = time.time() + timeout
    while time.time() < until:
        if os.path.exists(path):
            p = [int(x) for x in open(path).read().split()]
            if len(p) >= n: return p
        time.sleep(0.05)
    raise Failure("the program did not start (%s)" % path)

def all_gone(pids, within):
    until = time.time() + within
    while time.time() < until:
        if not any(alive(p) for p in pids): return True
        time.sleep(0.05)
    return False

def start(settings=None):
    pidfile = T + "/pids.%d" % time.time_ns()
    os.environ["PIDS"] = pidfile  # inherited by the server, hence by the program
    c = Client(kl, "--threads", "1")
    rid = c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                                   "capabilities": {"window": {"workDoneProgress": True}},
                                   "initializationOptions": {"kernlens": settings or {}}})
    check("result" in c.response(rid), "initialize failed")
    c.notify("initialized", {})
    return c, pidfile

def messages_until(c, pred, timeout=30):
    seen = []
    until = time.time() + timeout
    while time.time() < until:
        m = c.receive()
        if m.get("method") == "window/workDoneProgress/create": c.send({"id": m["id"], "result": None})
        seen.append(m)
        if pred(m): return seen
    raise Failure("timeout waiting")

hang = {"entry": "python app.py", "backend": "emulate", "launch": "template",
        "launchTemplate": "bash " + SRC + "/tests/data/runner/escaping_program.sh # {cmd}", "rounds": 1}

# 1. Transport: junk, then a frame; a body that is not JSON.
c, _ = start()
try:
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "kernlens/sync"}).encode()
    c.write(b"garbage bytes\r\n" + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    check(c.response(5).get("result", 1) is None, "the frame after junk was not answered")
    bad = b'{"jsonrpc": "2.0", "id": 42, "method": "kernlens/sync", "params": {'
    c.write(b"Content-Length: %d\r\n\r\n" % len(bad) + bad)
    r = c.response(42)
    check(r["error"]["code"] == -32700, "not JSON with a readable id: %r" % r)
    c.write(b"Content-Length: 9\r\n\r\n{not json")
    r = c.response(None)
    check(r["error"]["code"] == -32700, "not JSON without an id: %r" % r)
    print("robust_lsp: junk then frame answered; -32700 with id 42 and with id null")

    # 2. loadProfile on a FIFO fails at once; the server still answers.
    os.mkfifo(ws + "/trace.json")
    t0 = time.time()
    rid = c.request("workspace/executeCommand", {"command": "kernlens.loadProfile", "arguments": [ws + "/trace.json"]})
    r = c.response(rid)
    check("error" in r and "not a regular file" in r["error"]["message"], "loadProfile on a FIFO: %r" % r)
    rid = c.request("kernlens/sync")
    c.response(rid)
    print("robust_lsp: loadProfile on a FIFO: error in %.2f s, server still answering" % (time.time() - t0))
    rid = c.request("shutdown"); c.response(rid); c.notify("exit")
    check(c.wait_exit() == 0, "exit code")
finally:
    c.kill()

# 3. $/cancelRequest reaches a running profile.
c, pidfile = start(hang)
try:
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction", "arguments": [{"uri": uri, "function": "f"}]})
    pids = pids_of(pidfile, 3)
    c.notify("$/cancelRequest", {"id": rid})
    msgs = messages_until(c, lambda m: m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end")
    check(msgs[-1]["params"]["value"].get("message") == "cancelled", "end: %r" % msgs[-1])
    check(all_gone(pids, 5), "processes left after $/cancelRequest: %r" % [p for p in pids if alive(p)])
    print("robust_lsp: $/cancelRequest stopped the run; all %d processes gone" % len(pids))

    # 4. An output flood: rate-limited and capped in the editor, complete in the log.
    c.notify("workspace/didChangeConfiguration", {"settings": {"kernlens": dict(hang, launchTemplate="seq 1 1000000 # {cmd}")}})
    t0 = time.time()
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction", "arguments": [{"uri": uri, "function": "f"}]})
    msgs = messages_until(c, lambda m: m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end", 120)
    logs = [m for m in msgs if m.get("method") == "window/logMessage"]
    run_key = [m for m in msgs if m.get("id") == rid][0]["result"]["runKey"]
    import glob
    logs_on_disk = glob.glob(ws + "/.kernlens/runs/%s/round*/stdout.log" % run_key)
    check(logs_on_disk, "no stdout.log in the run folder")
    out = max((open(f).read().split() for f in logs_on_disk), key=len)
    check(len(out) == 1000000 and out[-1] == "1000000", "stdout.log lacks lines: %d" % len(out))
    check(len(logs) <= 5100, "%d logMessage notifications for 1,000,000 lines" % len(logs))
    check(any("more lines of program output not shown" in m["params"]["message"] for m in logs), "no count of dropped lines")
    print("robust_lsp: 1,000,000 output lines -> %d logMessage notifications in %.1f s; stdout.log complete"
          % (len(logs), time.time() - t0))
    rid = c.request("shutdown"); c.response(rid); c.notify("exit"); c.wait_exit()
finally:
    c.kill()

# 5. End of input during a run: exit within 2 s, no process of the program left.
c, pidfile = start(hang)
try:
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction", "arguments": [{"uri": uri, "function": "f"}]})
    pids = pids_of(pidfile, 3)
    t0 = time.time()
    c.proc.stdin.close()
    code = c.wait_exit()
    took = time.time() - t0
    check(took < 2.0, "the server took %.2f s to exit after end of input" % took)
    check(all_gone(pids, 3), "processes left after end of input: %r" % [p for p in pids if alive(p)])
    print("robust_lsp: end of input during a run: exit %d after %.2f s, all %d processes gone" % (code, took, len(pids)))
finally:
    c.kill()

# 6. A killed server: its run is closed as interrupted by the next server start.
c, pidfile = start(hang)
try:
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction", "arguments": [{"uri": uri, "function": "f"}]})
    pids = pids_of(pidfile, 3)
    c.proc.kill(); c.proc.wait()
    check(all_gone(pids, 5), "processes left after kill -9 of the server: %r" % [p for p in pids if alive(p)])
finally:
    c.kill()
db = sqlite3.connect(ws + "/.kernlens/kernlens.db")
last = db.execute("SELECT id, status FROM runs ORDER BY id DESC LIMIT 1").fetchone()
check(last[1] == "running", "before the next start: %r" % (last,))
c, _ = start()
try:
    rid = c.request("kernlens/sync"); c.response(rid)
    until = time.time() + 10
    while time.time() < until and db.execute("SELECT status FROM runs WHERE id = ?", (last[0],)).fetchone()[0] == "running":
        time.sleep(0.1)
    st = db.execute("SELECT status FROM runs WHERE id = ?", (last[0],)).fetchone()[0]
    check(st == "interrupted", "the stale run is %s" % st)
    left = db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0]
    check(left == 0, "%d runs still running" % left)
    print("robust_lsp: kill -9 of the server: all processes gone; the next start closed its run as interrupted")
    rid = c.request("shutdown"); c.response(rid); c.notify("exit"); c.wait_exit()
finally:
    c.kill()
print("PASS robust_lsp")
PY
