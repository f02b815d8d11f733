#!/usr/bin/env bash
# ctest-labels: lsp slow
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
import json, os, sys, time
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
            elif v["kind"] == "report":
                seen["reports"] += 1
                seen.setdefault("report_messages", []).append(v.get("message", ""))
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
                                   "capabilities": {"window": {"workDoneProgress": True},
                                                    "workspace": {"applyEdit": True}},
                                   "initializationOptions": {"kernlens": settings, "resultsNotification": True}})
    check("result" in c.response(rid), "initialize failed")
    c.notify("initialized", {})

def answer(c, rid, on_request):
    """The reply to `rid`; server requests on the way go to on_request(msg) -> result."""
    deadline = time.time() + 120
    while time.time() < deadline:
        m = c.receive()
        if "method" in m and "id" in m:
            c.send({"id": m["id"], "result": on_request(m)})
        elif m.get("id") == rid:
            return m
    raise Failure("no answer within 120 s")

def apply_edits(text, edits):
    """TextEdits (line/character; ASCII text) applied from the end."""
    lines = text.split("\n")
    offset = lambda p: sum(len(l) + 1 for l in lines[:p["line"]]) + p["character"]
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text

def keep_annotations(c):
    """kernlens.keepAnnotations after the run: one workspace/applyEdit whose result is the file with
    exactly the kl: ranges of the run's last round that the store holds for it (SQL), valid Python."""
    import ast, re, sqlite3
    edits = []
    def on_request(m):
        check(m["method"] == "workspace/applyEdit", "unexpected server request %r" % m["method"])
        edits.append(m["params"])
        return {"applied": True}
    r = answer(c, c.request("workspace/executeCommand", {"command": "kernlens.keepAnnotations", "arguments": []}), on_request)
    check("result" in r and len(edits) == 1, "keepAnnotations: %r, applyEdit requests %d" % (r, len(edits)))
    changes = edits[0]["edit"]["documentChanges"]
    check(len(changes) == 1 and changes[0]["textDocument"] == {"uri": uri, "version": 1}, "documentChanges: %r" % changes)
    kept = apply_edits(open(ws + "/mlp.py").read(), changes[0]["edits"])
    ast.parse(kept)
    names = re.findall(r'nvtx\.range\("(kl:[^"]*)"\)', kept)
    db = sqlite3.connect(ws + "/.kernlens/kernlens.db")
    want = {n for (n,) in db.execute(
        "SELECT DISTINCT g.name FROM ranges g WHERE g.path = 'mlp.py' AND g.round_id = "
        "(SELECT max(d.id) FROM rounds d JOIN runs u ON u.id = d.run_id JOIN ranges x ON x.round_id = d.id "
        " WHERE u.status = 'ok' AND x.path = 'mlp.py')")}
    check(want and set(names) == want and len(names) == len(want), "kept ranges %r, the store's %r" % (sorted(names), sorted(want)))
    res = r["result"]
    check(res["applied"] is True and res["files"] == 1 and res["ranges"] == len(want) and res["refused"] == [],
          "keepAnnotations answer: %r" % res)
    print("runner_lsp: keepAnnotations ok: %d ranges kept in mlp.py" % len(want))

def export_run(c):
    """kernlens.exportRun: the HTML report and the Perfetto trace of the run's profile, written
    next to it; the trace holds one slice per kernel the profile has (SQL)."""
    import sqlite3
    for fmt in ("html", "perfetto"):
        r = answer(c, c.request("workspace/executeCommand", {"command": "kernlens.exportRun", "arguments": [{"format": fmt}]}),
                   lambda m: None)
        check("result" in r, "exportRun %s: %r" % (fmt, r))
        path = r["result"]["path"]
        check(path.startswith(ws + "/.kernlens/runs/") and os.path.getsize(path) > 0, "exportRun %s wrote %r" % (fmt, path))
        profile = [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".sqlite")]
        check(len(profile) == 1, "no profile next to %s: %r" % (path, os.listdir(os.path.dirname(path))))
        db = sqlite3.connect(os.path.join(os.path.dirname(path), profile[0]))
        kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        if fmt == "html":
            text = open(path).read()
            check(text.lstrip().lower().startswith("<!doctype html") and "</html>" in text, "not an HTML report: %r" % text[:80])
            check("EMULATED" in text.upper(), "the report does not say emulated")
        else:
            ev = json.load(open(path))["traceEvents"]
            got = sum(1 for e in ev if e.get("cat") == "kernel" and e.get("ph") in ("X", "i"))
            check(got == kernels, "trace has %d kernel slices, the profile %d kernels" % (got, kernels))
        print("runner_lsp: exportRun %s ok: %s (%d kernels in the profile)" % (fmt, path, kernels))

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
    import re
    check(any(re.match(r"(round \d+/\d+|baseline|discovery) · running \(\d+ s\)", m) for m in s["report_messages"]),
          "no phase report names its stage: %r" % s["report_messages"][:12])
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
    keep_annotations(c)
    export_run(c)
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
