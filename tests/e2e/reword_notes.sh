#!/usr/bin/env bash
# No behaviour depends on a message's wording. The loop (`kernlens profile`, emulate backend) and an
# editor session (`kernlens lsp`: kernlens.profileFunction, then what the editor is shown) run
# twice on the same workspace: plainly, and with the test-only KERNLENS_TEST_REWORD_NOTES=1, under
# which every note and message core renders comes out reworded (its words reversed after a
# "~reworded~" mark). Everything structural must be identical: the line -> kernel map, rounds,
# stop reason, the notes (the same notes in the same order: each reworded note is its plain twin
# reworded), and in the editor the diagnostics, inlay hints, lenses and code actions, the stop
# reason and rounds, and the warnings shown (a focus that launched nothing is found by its kind).
# The hook must have reworded something, or the comparison would prove nothing.
source "$(dirname "$0")/planner_run.inc"
mkdir -p "$T/src"
cp "$KL_SOURCE_DIR/samples/mlp/mlp.py" "$T/src/"
cat > "$T/src/idle.py" <<'PYEOF'
import torch


def quiet(n):
    return n + 1  # plain Python: launches nothing


def busy(t):
    return torch.relu(t) * 2


if __name__ == "__main__":
    t = torch.ones(8)
    for _ in range(2):
        quiet(3)
        busy(t)
PYEOF

profile() {  # profile OUT ENTRY FOCUS  (a fresh copy of the workspace each time)
  local out=$1 entry=$2 focus=$3 ws="$T/ws-$(basename "$1" .json)"
  rm -rf "$ws"; cp -r "$T/src" "$ws"
  (cd "$ws" && "$KERNLENS" profile --root "$ws" --entry "$entry" --backend emulate --format json --no-store \
      --focus "$focus" --no-baseline > "$out")
}
for mode in plain reworded; do
  if [ $mode = reworded ]; then export KERNLENS_TEST_REWORD_NOTES=1; else unset KERNLENS_TEST_REWORD_NOTES; fi
  profile "$T/mlp-$mode.json" "python3 mlp.py --steps 2" mlp.py::MLP.forward
  profile "$T/idle-$mode.json" "python3 idle.py" idle.py::quiet
done
unset KERNLENS_TEST_REWORD_NOTES

$PY - "$KERNLENS" "$T" "$KL_SOURCE_DIR/tests/e2e" <<'PY'
import json, os, shutil, sys, time
sys.path.insert(0, sys.argv[3])
from lsp_client import Client, Failure, check, shutdown_and_exit
kl, T = sys.argv[1], sys.argv[2]
MARK = "~reworded~"

def reworded(text):
    return " ".join([MARK] + list(reversed(text.split())))

def same_notes(plain, rew, what):
    check(len(plain) == len(rew), "%s: %d notes plainly, %d reworded:\n%r\n%r" % (what, len(plain), len(rew), plain, rew))
    for p, r in zip(plain, rew):
        check(r == reworded(p), "%s: note %r reworded as %r" % (what, p, r))

def structure(doc):
    """What the loop decided, without its prose."""
    lines = [(l["file"], l["line"], l["end_line"], l["atomic"], l.get("atomic_reason"), l.get("no_matching_kernel"),
              sorted(k["name"] for k in l["kernels"])) for l in doc["lines"]]
    return {"lines": lines, "rounds": doc["rounds"], "stop_reason": doc["stop_reason"], "converged": doc["converged"],
            "unmapped": [(u["name"], u["launches"], u["reason"]) for u in doc["unmapped"]],
            "round_log": [(r["round"], r["ranges"], r["pushes"], r["launches"], len(r["notes"])) for r in doc["round_log"]]}

cli_notes = 0
for case in ("mlp", "idle"):
    plain, rew = (json.load(open("%s/%s-%s.json" % (T, case, m))) for m in ("plain", "reworded"))
    check(structure(plain) == structure(rew), "%s: the loop decided differently when its notes were reworded:\n%r\n%r"
          % (case, structure(plain), structure(rew)))
    same_notes(plain["notes"], rew["notes"], case + " notes")
    for a, b in zip(plain["round_log"], rew["round_log"]):
        same_notes(a["notes"], b["notes"], "%s round %d notes" % (case, a["round"]))
    cli_notes += len(plain["notes"]) + sum(len(r["notes"]) for r in plain["round_log"])
    print("reword_notes: kernlens profile %s: same %d lines, %d rounds, %s; %d notes reworded one for one"
          % (case, len(plain["lines"]), plain["rounds"], plain["stop_reason"], len(plain["notes"])))
idle = json.load(open(T + "/idle-plain.json"))
check(any("launched nothing" in n for n in idle["notes"]), "idle.py::quiet: no note that the focus launched nothing: %r"
      % idle["notes"])
check(cli_notes > 1, "the loop made %d notes: the comparison shows nothing" % cli_notes)


def session(reword):
    """One editor session on a fresh workspace: profile idle.py::quiet (launches nothing), then
    mlp.py::MLP.forward; what the editor is shown, structurally, and the warning texts."""
    ws = "%s/lsp-%s" % (T, "reworded" if reword else "plain")
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(T + "/src", ws)
    env = dict(os.environ)
    env.pop("KERNLENS_TEST_REWORD_NOTES", None)
    if reword:
        os.environ["KERNLENS_TEST_REWORD_NOTES"] = "1"
    try:
        c = Client(kl, "--threads", "2")
    finally:
        os.environ.clear(); os.environ.update(env)
    got = {"warnings": [], "diagnostics": {}}
    texts = []
    try:
        settings = {"entry": "python3 idle.py", "backend": "emulate", "rounds": 8}
        rid = c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                                       "capabilities": {"window": {"workDoneProgress": True},
                                                        "textDocument": {"publishDiagnostics": {}}},
                                       "initializationOptions": {"kernlens": settings}})
        check("result" in c.response(rid), "initialize failed")
        c.notify("initialized", {})

        def handle(m):
            """Records what the editor is shown; answers the server's requests."""
            meth = m.get("method")
            if meth == "window/showMessage":
                got["warnings"].append(m["params"]["type"])
                texts.append(m["params"]["message"])
            elif meth == "textDocument/publishDiagnostics":  # the last list per file counts
                got["diagnostics"][m["params"]["uri"].rsplit("/", 1)[1]] = len(m["params"]["diagnostics"])
            elif meth is not None and "id" in m:
                c.send({"id": m["id"], "result": None})

        def reply(rid):
            while True:
                m = c.receive()
                if m.get("id") == rid and "method" not in m:
                    return m
                handle(m)

        def run_to_end():
            deadline = time.time() + 240
            while time.time() < deadline:
                m = c.receive()
                if m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end":
                    return m["params"]["value"]
                handle(m)
            raise Failure("the run did not end within 240 s")

        def settle(seconds=2.0):
            """What the server sends once the run's results are installed (diagnostics)."""
            deadline = time.time() + seconds
            while time.time() < deadline:
                try:
                    m = c.messages.get(timeout=max(0.01, deadline - time.time()))
                except Exception:
                    break
                handle(m)

        def command_of(x):
            cmd = x.get("command")
            return cmd.get("command") if isinstance(cmd, dict) else cmd

        def profile(path, function):
            uri = "file://%s/%s" % (ws, path)
            c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": open(ws + "/" + path).read()}})
            r = reply(c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                                                             "arguments": [{"uri": uri, "function": function}]}))
            check("result" in r, "profileFunction %s::%s: %r" % (path, function, r))
            end = run_to_end()
            settle()
            s = reply(c.request("workspace/executeCommand", {"command": "kernlens.runSummary", "arguments": []}))
            s = s.get("result") or {}
            n = len(open(ws + "/" + path).read().splitlines())
            whole = {"start": {"line": 0, "character": 0}, "end": {"line": n, "character": 0}}
            hints = reply(c.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole}))
            lenses = reply(c.request("textDocument/codeLens", {"textDocument": {"uri": uri}}))
            hint_lines = sorted(h["position"]["line"] for h in hints.get("result") or [])
            actions = []
            for line in range(n):
                a = reply(c.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "context": {"diagnostics": []},
                    "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}}))
                offered = sorted((x.get("kind") or "", command_of(x) or "") for x in a.get("result") or [])
                if offered:
                    actions.append((line, offered))
            settle(0.5)
            return {"end": end.get("message", "").split(":")[0], "stopReason": s.get("stopReason"),
                    "rounds": s.get("rounds"), "hint_lines": hint_lines,
                    "lenses": sorted((l["range"]["start"]["line"], command_of(l) or "") for l in lenses.get("result") or []),
                    "actions": actions}

        got["idle"] = profile("idle.py", "quiet")
        c.notify("workspace/didChangeConfiguration",
                 {"settings": {"kernlens": dict(settings, entry="python3 mlp.py --steps 2")}})
        got["mlp"] = profile("mlp.py", "MLP.forward")
        shutdown_and_exit(c)
    except Exception:
        c.proc.kill()
        raise
    return got, texts

plain, plain_texts = session(False)
rew, rew_texts = session(True)
check(plain == rew, "the editor saw something else when the messages were reworded:\n%r\n%r" % (plain, rew))
check(plain["warnings"].count(2) >= 1, "no warning that idle.py::quiet launched nothing: %r" % plain_texts)
check(plain["mlp"]["hint_lines"], "no inlay hints on mlp.py after the run: %r" % plain)
check(any(MARK in t for t in rew_texts), "the hook reworded no message the editor was shown: %r" % rew_texts)
check(not any(MARK in t for t in plain_texts), "a message was reworded without the hook: %r" % plain_texts)
print("reword_notes: editor session identical with reworded messages: %d warnings, %d hinted lines, %d lenses, "
      "%d code-action lines" % (plain["warnings"].count(2), len(plain["mlp"]["hint_lines"]), len(plain["mlp"]["lenses"]),
                                len(plain["mlp"]["actions"])))
PY
echo "PASS: reword_notes"
