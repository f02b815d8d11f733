#!/usr/bin/env bash
# ctest-labels: lsp
# `exit` without `shutdown`, and end of input, while a profiling run goes (the real binary over
# stdio, a program that would sleep 300 s): the server cancels the run, kills its process group
# and exits with 1 within seconds; no process of the run is left behind.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws"
# A unique name: the orphan check below must not see other tests' programs.
prog="hang_exit_$$.py"
printf 'import time\n\ndef f():\n    time.sleep(300)\n\nf()\n' > "$T/ws/$prog"
/usr/bin/python3 - "$KL" "$T/ws" "$SRC/tests/e2e" "$prog" <<'PY'
import os, subprocess, sys, time
sys.path.insert(0, sys.argv[3])
from lsp_client import Client, Failure, check
kl, ws, prog = sys.argv[1], sys.argv[2], sys.argv[4]

def running():
    out = subprocess.run(["pgrep", "-f", prog], capture_output=True, text=True).stdout.split()
    return [p for p in out if int(p) != os.getpid()]  # this script has the name in its argv

for how in ("exit", "end of input"):
    c = Client(kl, "--threads", "2")
    try:
        rid = c.request("initialize", {"processId": None, "rootUri": "file://" + ws,
                                       "capabilities": {"window": {"workDoneProgress": True}},
                                       "initializationOptions": {"kernlens": {"entry": "python " + prog,
                                                                              "backend": "emulate"}}})
        check("result" in c.response(rid), "initialize failed")
        c.notify("initialized", {})
        rid = c.request("workspace/executeCommand", {"command": "kernlens.profileFunction",
                        "arguments": [{"uri": "file://" + ws + "/" + prog, "function": "f"}]})
        # Wait until the program runs (two progress reports: the round has started it).
        reports, deadline = 0, time.time() + 60
        while reports < 2 and time.time() < deadline:
            m = c.receive()
            if m.get("method") == "window/workDoneProgress/create":
                c.send({"id": m["id"], "result": None})
            elif m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "report":
                reports += 1
        check(reports >= 2, "the run did not start")
        deadline = time.time() + 30
        while not running() and time.time() < deadline:
            time.sleep(0.1)
        check(running(), "the program of the run is not running")
        start = time.time()
        if how == "exit":
            c.notify("exit")
        else:
            c.proc.stdin.close()
        code = c.wait_exit()
        took = time.time() - start
        check(code == 1, "%s without shutdown: exit code %d" % (how, code))
        check(took < 20, "%s took %.1f s: the run was not cancelled" % (how, took))
        deadline = time.time() + 5
        while running() and time.time() < deadline:
            time.sleep(0.1)
        check(not running(), "%s left the run's program behind: %s" % (how, running()))
        print("lsp_exit_cancels_run: %s: server gone in %.2f s, no orphan" % (how, took))
    finally:
        c.kill()
PY
