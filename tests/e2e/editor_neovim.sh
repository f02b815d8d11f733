#!/bin/bash
# ctest-labels: editor
# Headless Neovim (Debian's 0.7.2) attached to the real `kernlens lsp` on the emulated MLP profile:
# loadProfile, inlay hints (raw requests: 0.7 has no hint UI), hovers through vim.lsp.buf.hover(),
# code lenses through vim.lsp.codelens, then two lines inserted at the top: hints and lenses must
# move with their code. Expected values come from an independent SQL + ast oracle.
# env: KERNLENS, KL_SOURCE_DIR, KL_BINARY_DIR (ctest sets them).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
"$KL_SOURCE_DIR/scripts/install-deps.sh" editor
D=$KL_SOURCE_DIR/tests/data/editor
W=$KL_BINARY_DIR/editor-e2e/neovim
rm -rf "$W"; mkdir -p "$W/ws"
cp "$D/ws/mlp.py" "$W/ws/"
/usr/bin/python3 "$KL_SOURCE_DIR/tests/e2e/editor/expected_hints.py" "$D/mlp_emulated.sqlite" "$W/ws" > "$W/oracle.json"
HOVER=$(/usr/bin/python3 -c 'import json,sys; print(",".join(str(l["line"]) for l in json.load(open(sys.argv[1]))["lines"]))' "$W/oracle.json")
cd "$W/ws"
KERNLENS=$KERNLENS PROFILE=$D/mlp_emulated.sqlite OUT=$W/report.json HOVER_LINES=$HOVER \
  timeout 120 nvim --headless --clean -c "luafile $KL_SOURCE_DIR/tests/e2e/editor/nvim_check.lua" "$W/ws/mlp.py" \
  > "$W/nvim.log" 2>&1 || { echo "nvim failed (exit $?):"; cat "$W/nvim.log"; cat "$W/report.json" 2>/dev/null; exit 1; }
/usr/bin/python3 "$KL_SOURCE_DIR/tests/e2e/editor/check_report.py" "$W/oracle.json" "$W/report.json" --shift 2

# The documented helper config (docs/editors/neovim.md, "tested: nvim-0.7"), as a user would
# load it: the kernlens binary on PATH, the helper's directory on the runtimepath.
W2=$KL_BINARY_DIR/editor-e2e/neovim-helper
rm -rf "$W2"; mkdir -p "$W2/ws" "$W2/bin"
cp "$D/ws/mlp.py" "$W2/ws/"; ln -s "$KERNLENS" "$W2/bin/kernlens"
cp "$D/mlp_emulated.sqlite" "$W2/"  # :KernlensReport / :KernlensTrace write next to the profile
touch "$W2/ws/pyproject.toml"  # the workspace root (the helper looks for root markers upwards)
/usr/bin/python3 - "$KL_SOURCE_DIR/docs/editors/neovim.md" "$KL_SOURCE_DIR" > "$W2/init.lua" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
m = re.search(r"<!-- tested: nvim-0.7 -->\s*```lua\n(.*?)```", doc, re.S)
if not m: sys.exit("docs/editors/neovim.md: no block marked 'tested: nvim-0.7'")
print(m.group(1).replace("/path/to/kernlens", sys.argv[2]))
PY
cd "$W2/ws"
PATH=$W2/bin:$PATH CONFIG=$W2/init.lua PROFILE=$W2/mlp_emulated.sqlite OUT=$W2/report.json \
  timeout 120 nvim --headless --clean -c "luafile $KL_SOURCE_DIR/tests/e2e/editor/nvim_helper_check.lua" "$W2/ws/mlp.py" \
  > "$W2/nvim.log" 2>&1 || { echo "nvim (helper config) failed (exit $?):"; cat "$W2/nvim.log"; cat "$W2/report.json" 2>/dev/null; exit 1; }
/usr/bin/python3 - "$W/oracle.json" "$W2/report.json" <<'PY'
import json, sys
oracle, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fails = []
if rep.get("config_error"): fails.append("config: " + rep["config_error"])
want = sorted((l["line"], l["label"]) for l in oracle["lines"] if l["shown"])
got = sorted((h["line"], h["label"]) for h in rep.get("hints", []))
if got != want: fails.append("per-line times (virtual text): expected %s, got %s" % (want, got))
hover = rep.get("hover", "")
if "|---" in hover or "| kernel |" in hover: fails.append("hover is a Markdown table on %s: %r" % (rep["nvim"], hover[:200]))
if "emulated" not in hover or "kernel" not in hover: fails.append("hover lacks the kernel columns / emulated: %r" % hover[:300])
if len(max(hover.splitlines() or [""], key=len)) > 80: fails.append("hover wider than 80 columns: %r" % hover[:400])
titles = {l["title"] for l in rep.get("lenses", [])}
if "▶ Profile" not in titles or not any(t.startswith("GPU ") for t in titles): fails.append("lenses: %s" % sorted(titles))
qf = rep.get("quickfix", [])
hottest = max((l for l in oracle["lines"]), key=lambda l: l["ns"])
if not qf or not qf[0]["file"].endswith("mlp.py") or qf[0]["lnum"] != hottest["line"]:
    fails.append("KernlensRun: first quickfix item should be mlp.py:%d, got %s" % (hottest["line"], qf[:2]))
ex = rep.get("exports") or {}
for cmd in ("KernlensReport", "KernlensTrace"):
    if not ex.get(cmd): fails.append(":%s wrote nothing next to the profile (messages: %s)" % (cmd, rep.get("messages", "")[-300:]))
if ex.get("KernlensReport") and "</html>" not in open(ex["KernlensReport"]).read(): fails.append(":KernlensReport: not an HTML report")
if ex.get("KernlensTrace") and not json.load(open(ex["KernlensTrace"])).get("traceEvents"): fails.append(":KernlensTrace: no trace events")
if "Error" in rep.get("messages", "") or "E5108" in rep.get("messages", ""): fails.append("messages: " + rep["messages"])
for f in fails: print("FAIL", f)
if fails: sys.exit(1)
print("helper config on Neovim %(major)s.%(minor)s.%(patch)s: %%d per-line times, plain-text hover, %%d quickfix items" % rep["nvim"] % (len(got), len(qf)))
PY
