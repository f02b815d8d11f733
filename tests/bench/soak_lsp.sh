#!/usr/bin/env bash
# Soak test of the server's profiling runs (not part of `make test`): SOAK_RUNS runs (default
# 1000) of kernlens.profileFunction on train_step of samples/mlp, each randomly left to finish,
# cancelled (kernlens.cancel, $/cancelRequest, window/workDoneProgress/cancel), disturbed by edits,
# or ended by killing the server with SIGKILL (the next server is started at once). Programs vary:
# the real emulated profile of mlp.py, exit at once, fail, hang, flood stdout, spawn grandchildren
# that start their own session. Prints the counts that must be 0 (orphaned processes, runs left
# `running`, requests never answered, real profiles left to finish that did not) and the memory
# growth of the server that lived longest (VmRSS after its 10th run vs after its last run).
# SOAK_KILLS=0 leaves out the server kills: one server lives through every run, so its memory
# growth is measured over all of them.
# usage: KERNLENS=build/kernlens [SOAK_RUNS=N] [SOAK_SEED=S] [SOAK_KILLS=0] tests/bench/soak_lsp.sh
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
KL="${KERNLENS:-$SRC/build/kernlens}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws"
cp "$SRC/samples/mlp/mlp.py" "$T/ws/mlp.py"
exec /usr/bin/python3 - "$KL" "$T" "$SRC/tests/e2e" "${SOAK_RUNS:-1000}" "${SOAK_SEED:-1}" "$SRC" "${SOAK_KILLS:-1}" <<'PY'
import json, os, random, sqlite3, sys, time
sys.path.insert(0, sys.argv[3])
from lsp_client import Client, Failure
kl, T, runs, seed, SRC = sys.argv[1], sys.argv[2], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
rng = random.Random(seed)
ws = T + "/ws"; uri = "file://" + ws + "/mlp.py"
pidfile = T + "/pids"
os.environ["PIDS"] = pidfile
text = open(ws + "/mlp.py").read()
entry = "python mlp.py --steps 1"

def alive(pid):
    try: return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError: return False

def rss(pid):
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS:"): return int(l.split()[1])
    return 0

class Server:
    def __init__(self):
        self.c = Client(kl, "--threads", "2")
        rid = self.c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                             "capabilities": {"window": {"workDoneProgress": True}},
                             "initializationOptions": {"kernlens": {"entry": entry, "backend": "emulate",
                                                                    "launch": "template", "rounds": 1, "keepRuns": 5,
                                                                    "timeoutSeconds": 8}}})
        self.c.response(rid)
        self.c.notify("initialized", {})
        self.c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        self.version = 1
        self.runs = 0          # runs this server process went through
        self.rss10 = None      # its VmRSS after its 10th run (KiB)
        self.rss_last = None   # after its latest run

longest = None  # (runs, rss after the 10th, rss after the last) of the longest-lived server

def retire(server):
    global longest
    if server.rss10 is not None and (longest is None or server.runs > longest[0]):
        longest = (server.runs, server.rss10, server.rss_last)

stats = {"orphans": 0, "unanswered": 0, "server_kills": 0, "finished": 0, "cancelled": 0, "failed": 0,
         "profiles_finished": 0, "profiles_not_finished": 0}
kinds = ["run", "quick", "fail", "flood", "escape", "hang"]
actions = ["wait", "cancel", "cancelRequest", "progressCancel", "edit"] + (["kill"] if sys.argv[7] != "0" else [])
s = Server()
t0 = time.time()
for i in range(runs):
    open(pidfile, "w").close()
    kind = rng.choice(kinds)
    action = rng.choice(actions) if kind == "hang" or rng.random() < 0.3 else "wait"
    s.c.notify("workspace/didChangeConfiguration", {"settings": {"kernlens": {
        "entry": entry, "backend": "emulate", "launch": "template", "rounds": 1, "keepRuns": 5,
        "timeoutSeconds": 60 if kind == "run" else 8,
        "launchTemplate": "bash %s/tests/data/runner/escaping_program.sh %s {cmd}" % (SRC, kind)}}})
    rid = s.c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                                                   "arguments": [{"uri": uri, "function": "train_step"}]})
    token, ended, acted = None, None, False
    deadline = time.time() + 60
    try:
        while time.time() < deadline and ended is None:
            m = s.c.receive()
            if m.get("method") == "window/workDoneProgress/create":
                token = m["params"]["token"]; s.c.send({"id": m["id"], "result": None})
            elif m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end":
                ended = m["params"]["value"].get("message", "")
            elif m.get("method") == "$/progress" and not acted and action != "wait":
                acted = True
                time.sleep(rng.random() * 0.3)
                if action == "cancel":
                    s.c.request("workspace/executeCommand", {"command": "kernlens.cancel", "arguments": []})
                elif action == "cancelRequest":
                    s.c.notify("$/cancelRequest", {"id": rid})
                elif action == "progressCancel" and token is not None:
                    s.c.notify("window/workDoneProgress/cancel", {"token": token})
                elif action == "edit":
                    s.version += 1
                    s.c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": s.version},
                               "contentChanges": [{"text": text + "# edit %d\n" % i}]})
                    s.c.request("workspace/executeCommand", {"command": "kernlens.cancel", "arguments": []})
                elif action == "kill":
                    s.c.proc.kill(); s.c.proc.wait(); stats["server_kills"] += 1
                    ended = "killed"
    except Failure:
        pass
    if ended is None:
        stats["unanswered"] += 1
        s.c.kill(); ended = "stuck"
    elif ended == "cancelled": stats["cancelled"] += 1
    elif ended == "failed": stats["failed"] += 1
    elif ended != "killed": stats["finished"] += 1
    if kind == "run" and action == "wait":
        stats["profiles_finished" if ended not in ("killed", "stuck", "cancelled", "failed") else "profiles_not_finished"] += 1
    if ended in ("killed", "stuck"):
        retire(s)
        s = Server()
    else:
        s.runs += 1
        s.rss_last = rss(s.c.proc.pid)
        if s.runs == 10: s.rss10 = s.rss_last
    pids = [int(x) for x in open(pidfile).read().split()]
    until = time.time() + 5
    while time.time() < until and any(alive(p) for p in pids): time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    stats["orphans"] += len(left)
    for p in left: os.kill(p, 9)
    if (i + 1) % max(1, runs // 10) == 0:
        print("soak: %d/%d runs, %.0f s, %s" % (i + 1, runs, time.time() - t0, json.dumps(stats)), flush=True)
retire(s)
rid = s.c.request("shutdown"); s.c.response(rid); s.c.notify("exit"); s.c.wait_exit()
# A fresh server start closes what a killed one left.
s2 = Server(); rid = s2.c.request("shutdown"); s2.c.response(rid); s2.c.notify("exit"); s2.c.wait_exit()
db = sqlite3.connect(ws + "/.kernlens/kernlens.db")
running = db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0]
statuses = dict(db.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall())
dirs = len(os.listdir(ws + "/.kernlens/runs"))
growth = "n/a (no server lived through 10 runs)" if longest is None else \
    "%d KiB after its 10th run -> %d KiB after its %dth (%+.1f%%, longest-lived server)" % (
        longest[1], longest[2], longest[0], 100.0 * (longest[2] - longest[1]) / max(1, longest[1]))
print("soak: %d runs in %.0f s (seed %d, kills %s): orphans %d, runs left running %d, unanswered %d, server kills %d, "
      "real profiles left to finish: %d finished, %d did not"
      % (runs, time.time() - t0, seed, "on" if sys.argv[7] != "0" else "off", stats["orphans"], running, stats["unanswered"], stats["server_kills"],
         stats["profiles_finished"], stats["profiles_not_finished"]))
print("soak: store statuses %s; run folders kept %d; server memory %s" % (json.dumps(statuses), dirs, growth))
sys.exit(1 if stats["orphans"] or running or stats["unanswered"] or stats["profiles_not_finished"] else 0)
PY
