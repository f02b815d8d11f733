#!/usr/bin/env bash
# One line, one set of figures, everywhere a person reads it: `kernlens profile` (emulate backend,
# stored) on samples/mlp, then `kernlens lsp` on the same workspace. For every line of the focus
# function, the figures of the CLI text, the inlay hint, its tooltip, the hover, the code lens of
# the function, the run view (kernlens.runSummary) and the `kernlens/lines@1` document (`map
# --store`, what the MCP line tools answer) must be the same numbers in the same units; and each
# must equal the raw numbers of the stored run formatted by an independent formatter
# (tests/e2e/editor/expected_hints.py: fmt_duration, fmt_share), not kernlens's.
source "$(dirname "$0")/planner_run.inc"
WS="$T/mlp"
cp -r "$KL_SOURCE_DIR/samples/mlp" "$WS"
(cd "$WS" && "$KERNLENS" profile --root "$WS" --entry "python3 mlp.py --steps 2" --backend emulate \
    --focus mlp.py::MLP.forward --no-baseline > "$T/cli.txt")
"$KERNLENS" map --root "$WS" --store --format json > "$T/map.json"
$PY - "$KERNLENS" "$WS" "$T/cli.txt" "$T/map.json" "$KL_SOURCE_DIR/tests/e2e" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[5])
sys.path.insert(0, sys.argv[5] + "/editor")
from lsp_client import Client, Failure, check, hover_text, open_in_workspace, shutdown_and_exit
from expected_hints import fmt_duration, fmt_share, kernels_word, pass_time

kl, ws, cli_text, doc = sys.argv[1], sys.argv[2], open(sys.argv[3]).read(), json.load(open(sys.argv[4]))
FN = "MLP.forward"
lines = [l for l in doc["lines"] if l["file"] == "mlp.py" and l["function"] == FN and l["gpu_ns"] > 0]
fn_ns = sum(l["gpu_ns"] for l in lines)
fn_bwd = sum(l["backward_gpu_ns"] for l in lines)


def want(l):
    """The figures of a stored line, formatted independently."""
    return {"time": pass_time(l["gpu_ns"], l["backward_gpu_ns"]),
            "kernels": kernels_word(len({k["name"] for k in l["kernels"]})),
            "launches": "%d launch%s" % (l["launches"], "" if l["launches"] == 1 else "es"),
            "share": fmt_share(l["gpu_ns"] / fn_ns)}


# `kernlens profile`'s text: "  20 |     h = ...    # <time> · <n> launches · ..."
cli = {}
for row in cli_text.splitlines():
    m = re.match(r"^\s*(\d+) \| .*?    # (.*)$", row)
    if m:
        parts = m.group(2).split(" · ")
        cli[int(m.group(1))] = {"time": parts[0], "launches": parts[1]}

try:
    check("EMULATED" in cli_text, "the CLI text does not say the run is emulated")
    check(len(lines) >= 3, "want the 3 lines of %s in the stored run, got %s" % (FN, [l["line"] for l in lines]))
    check(any(l["backward_gpu_ns"] > 0 for l in lines), "no backward time on %s: the split is not exercised" % FN)
    for l in lines:
        w, shown = want(l), l["shown"]
        check(l["line"] in cli, "line %d is not annotated in the CLI text:\n%s" % (l["line"], cli_text))
        for key in ("time", "launches"):
            check(cli[l["line"]][key] == w[key], "CLI %s of line %d: %r, want %r" % (key, l["line"], cli[l["line"]][key], w[key]))
        for key in ("time", "kernels", "launches", "share"):
            check(shown[key] == w[key], "lines@1 shown.%s of line %d: %r, want %r" % (key, l["line"], shown[key], w[key]))
        check(shown["share_of"] == FN, "lines@1 share_of %r" % shown["share_of"])
except Failure as e:
    print("FAIL: %s" % e)
    sys.exit(1)

src = open(ws + "/mlp.py").read()
c = Client(kl)
try:
    uri = open_in_workspace(c, ws, "mlp.py", src)
    hovers = {}
    for l in lines:
        h = hover_text(c, uri, l["line"])
        check(h is not None, "no hover on line %d" % l["line"])
        hovers[l["line"]] = h
    r = c.response(c.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": len(src.splitlines()), "character": 0}}}))
    hints = {h["position"]["line"] + 1: h for h in r["result"]}
    r = c.response(c.request("textDocument/codeLens", {"textDocument": {"uri": uri}}))
    gpu_lens = [x for x in r["result"] if x["data"]["function"] == FN and x["data"]["kind"] == "gpu"]
    check(len(gpu_lens) == 1, "want one GPU lens on %s: %s" % (FN, r["result"]))
    lens = c.response(c.request("codeLens/resolve", gpu_lens[0]))["result"]["command"]["title"]
    run = c.response(c.request("workspace/executeCommand", {"command": "kernlens.runSummary", "arguments": []}))["result"]
    hot = {h["line"]: h for h in run["hottest"] if h["path"] == "mlp.py" and h["kind"] == "line"}

    for l in lines:
        n, w = l["line"], want(l)
        # hover: "**GPU <time>** · <k> kernels · <n> launches · <share> of `MLP.forward`"
        head = hovers[n].split("\n")[0]
        want_head = "**GPU %s** · %s · %s · %s of `%s`" % (w["time"], w["kernels"], w["launches"], w["share"], FN)
        check(head.startswith(want_head), "hover of line %d: %r, want it to start %r" % (n, head, want_head))
        check("emulated" in head, "hover of line %d does not say emulated: %r" % (n, head))
        # hint: "◷ <time> · <k> kernels"
        check(n in hints, "no hint on line %d: %s" % (n, sorted(hints)))
        want_hint = "◷ %s · %s" % (w["time"], w["kernels"])
        check(hints[n]["label"] == want_hint, "hint of line %d: %r, want %r" % (n, hints[n]["label"], want_hint))
        # tooltip: one row per kernel and pass, "— <launches>× <time>"
        tip = c.response(c.request("inlayHint/resolve", hints[n]))["result"]["tooltip"]["value"]
        for k in l["kernels"]:
            row = "— %d× %s" % (k["launches"], fmt_duration(k["gpu_ns"]))
            check(row in tip, "tooltip of line %d lacks %r: %r" % (n, row, tip))
        check("emulated" in tip, "tooltip of line %d does not say emulated" % n)
        # run view: the same time (and its share of the run, by the same share formatter)
        check(n in hot, "line %d is not in the run view: %s" % (n, sorted(hot)))
        check(hot[n]["time"] == w["time"], "run view time of line %d: %r, want %r" % (n, hot[n]["time"], w["time"]))
        run_share = fmt_share(l["gpu_ns"] / doc["total_gpu_ns"])
        check(hot[n]["share"] == run_share, "run view share of line %d: %r, want %r" % (n, hot[n]["share"], run_share))
    # lens: "GPU <function time> · <k> kernels · <share of the run>"
    want_lens = "GPU %s · " % pass_time(fn_ns, fn_bwd)
    check(lens.startswith(want_lens), "lens of %s: %r, want it to start %r" % (FN, lens, want_lens))
    check(lens.endswith(" · emulated"), "lens of %s does not say emulated: %r" % (FN, lens))
    shutdown_and_exit(c)
except Failure as e:
    c.kill()
    print("FAIL: %s" % e)
    sys.exit(1)
print("ok: CLI text, hint, tooltip, hover, lens, run view and lines@1 show the same figures for %d lines of %s"
      % (len(lines), FN))
PY
