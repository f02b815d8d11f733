#!/usr/bin/env bash
# kernlens.profileFunction in the real server over stdio (emulate backend on samples/mlp):
# work-done progress create/begin/report/end, the program's output as window/logMessage, requests
# answered while the run goes, results in the store; kernlens.refineHere on a line range;
# kernlens.cancel stops a hanging run; a
# failing run ends in a window/showMessage with the reason and the log path.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
printf 'import time\n\ndef f():\n    time.sleep(300)\n\nf()\n' > "$T/ws/hang.py"
/usr/bin/python3 - "$KL" "$T/ws" "$SRC/tests/e2e" <<'PY'
import json, sys, time
sys.path.insert(0, sys.argv[3])
from lsp_client import Client, Failure, check
kl, ws = sys.argv[1], sys.argv[2]
uri = "file://" + ws + "/mlp.py"

def run(c, rid, until_end=True, on_message=None):
    """Answers server requests (progress create), collects notifications until the progress ends."""
    seen = {"reply": None, "create": 0, "begin": None, "reports": 0, "end": None, "log": [], "show": [], "results": []}
    deadline = time.time() + 240
    while time.time() < deadline:
        m = c.receive()
        if m.get("method") == "window/workDoneProgress/create":
            seen["create"] += 1
            c.send({"id": m["id"], "result": None})
        elif m.get("method") == "$/progress":
            v = m["params"]["value"]
            if v["kind"] == "begin": seen["begin"] = v
            elif v["kind"] == "report": seen["reports"] += 1
            else:
                seen["end"] = v
                if until_end: return seen
        elif m.get("method") == "window/logMessage": seen["log"].append(m["params"])
        elif m.get("method") == "window/showMessage": seen["show"].append(m["params"])
        elif m.get("method") == "kernlens/results": seen["results"].append(m["params"])
        elif m.get("id") == rid and "method" not in m: seen["reply"] = m
        if on_message: on_message(m, seen)
    raise Failure("the run did not end within 240 s")

def start(c, settings):
    rid = c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                                   "capabilities": {"window": {"workDoneProgress": True}},
                                   "initializationOptions": {"kernlens": settings, "resultsNotification": True}})
    check("result" in c.response(rid), "initialize failed")
    c.notify("initialized", {})

c = Client(kl, "--threads", "2")
try:
    start(c, {"entry": "python mlp.py --steps 1", "backend": "emulate"})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": open(ws + "/mlp.py").read()}})
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                                                 "arguments": [{"uri": uri, "position": {"line": 27, "character": 8}}]})
    answered = {}
    def probe(m, seen):  # while the run goes: another request must be answered
        if seen["begin"] and "hover" not in answered:
            answered["hover"] = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                                          "arguments": [{"uri": uri, "function": "main"}]})
        if m.get("id") == answered.get("hover") and "method" not in m:
            answered["busy"] = (m, seen["end"] is None)
    s = run(c, rid, on_message=probe)
    check(s["reply"] and s["reply"]["result"]["function"] == "train_step", "reply: %r" % s["reply"])
    check(s["create"] == 1 and s["begin"] and s["begin"].get("cancellable") is True, "progress begin: %r" % s["begin"])
    check(s["reports"] >= 1, "no progress reports")
    check("busy" in answered and answered["busy"][1], "no request answered while the run was going: %r" % answered)
    check("already going" in answered["busy"][0]["error"]["message"], "second run: %r" % answered["busy"][0])
    check("EMULATED" in s["end"].get("message", ""), "end: %r %r" % (s["end"], s["show"]))
    check(any("final loss" in l["message"] for l in s["log"]), "program output not logged")
    # Streaming: the first round's results are published (provisional) before the run ends — the
    # baseline run still follows it — and the run ends with the same run's results, final.
    first = next((r for r in s["results"] if r.get("runId")), None)
    check(first and first["provisional"] and first["lines"] > 0, "no provisional results before the end: %r" % s["results"])
    check(not s["results"][-1]["provisional"] and s["results"][-1]["runId"] == first["runId"],
          "the run did not end with final results: %r" % s["results"])
    print("runner_lsp: run ok:", s["end"]["message"][:100], "; results published:",
          [("provisional" if r["provisional"] else "final", r.get("lines")) for r in s["results"]])
    # kernlens.refineHere (the ⟳ Refine lens / a selection): the loop focused on lines 24-30.
    rid = c.request("workspace/executeCommand", {"command": "kernlens.refineHere",
                    "arguments": [{"uri": uri, "range": {"start": {"line": 23, "character": 0},
                                                         "end": {"line": 30, "character": 0}},
                                   "function": "train_step"}]})
    s = run(c, rid)
    check(s["reply"] and s["reply"]["result"]["lines"] == "24-30", "refineHere reply: %r" % s["reply"])
    check("EMULATED" in s["end"].get("message", ""), "refineHere end: %r %r" % (s["end"], s["show"]))
    bad = c.request("workspace/executeCommand", {"command": "kernlens.refineHere", "arguments": [{"uri": uri}]})
    check(c.response(bad).get("error", {}).get("code") == -32602, "refineHere without a range must be -32602")
    print("runner_lsp: refineHere ok:", s["end"]["message"][:100])
    # Cancel a hanging run via kernlens.cancel.
    c.notify("workspace/didChangeConfiguration", {"settings": {"kernlens": {"entry": "python hang.py", "backend": "emulate"}}})
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                                                 "arguments": [{"uri": "file://" + ws + "/hang.py", "function": "f"}]})
    def canceller(m, seen):
        if seen["reports"] >= 2 and "cancel" not in answered:
            answered["cancel"] = c.request("workspace/executeCommand", {"command": "kernlens.cancel", "arguments": []})
    s = run(c, rid, on_message=canceller)
    check(s["end"].get("message") == "cancelled", "cancel end: %r" % s["end"])
    # A failing program: showMessage with the reason and the log path.
    c.notify("workspace/didChangeConfiguration", {"settings": {"kernlens": {"entry": "python mlp.py --steps x", "backend": "emulate"}}})
    rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction", "arguments": [{"uri": uri, "function": "train_step"}]})
    s = run(c, rid)
    check(s["show"] and s["show"][0]["type"] == 1, "no error showMessage: %r" % s["show"])
    msg = s["show"][0]["message"]
    check("failed" in msg and "exit code 2" in msg and "(log: " in msg and "stderr.log" in msg, "showMessage: %r" % msg)
    rid = c.request("shutdown")
    c.response(rid)
    c.notify("exit")
    check(c.wait_exit() == 0, "exit code")
finally:
    c.kill()
import sqlite3
db = sqlite3.connect(ws + "/.kernlens/kernlens.db")
st = [r[0] for r in db.execute("SELECT status FROM runs ORDER BY id")]
check(st == ["ok", "ok", "cancelled", "failed"], "store statuses %r" % st)
print("runner_lsp: ok")
PY
