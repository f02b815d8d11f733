#!/usr/bin/env bash
# The screenshots of docs/editors/, from real editor runs on samples/transformer (emulate backend):
#  - VS Code: code-server in headless Chromium, as tests/e2e/editor_vscode.sh leaves them in
#    BUILD/editor-e2e/vscode/ (run `ctest -R e2e_editor_vscode` first): the first hints after
#    round 1 (marked "so far"), the final hints with the call line's total, "kernlens: Show run",
#    the hover on the hottest line.
#  - Neovim (Debian's 0.7.2) in a 132×36 tmux terminal with the documented helper config
#    (docs/editors/neovim.md, the "tested: nvim-0.7" block): :KernlensProfileFunction on
#    train_step, the per-line times as virtual text, the plain-text hover, :KernlensRun. Each
#    screen is `tmux capture-pane -e` (text + colours), made an HTML page (screenshots/ansi_html.py)
#    and a PNG (screenshots/render_html.js, headless Chromium with DejaVu Sans Mono).
# usage: scripts/editor-screenshots.sh BUILD_DIR [OUT_DIR (default docs/editors)]
# Needs: nvim, tmux, chromium, node, and playwright-core in $KL_EDITOR_TOOLS (the VS Code test
# installs it).
set -euo pipefail
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:?usage: editor-screenshots.sh BUILD_DIR [OUT_DIR]}" && pwd)
OUT=${2:-$S/docs/editors}
TOOLS=${KL_EDITOR_TOOLS:-$HOME/.cache/kernlens/editor-tools}
PW=$TOOLS/playwright-core-1.65.1/node_modules
[[ -d $PW/playwright-core ]] || { echo "editor-screenshots: no playwright-core in $PW (run ctest -R e2e_editor_vscode first)" >&2; exit 1; }
V=$B/editor-e2e/vscode
for f in run-2-first-hints run-3-hints run-4-run-view run-5-hover; do
  [[ -f $V/$f.png ]] || { echo "editor-screenshots: $V/$f.png is missing (run ctest -R e2e_editor_vscode first)" >&2; exit 1; }
done
mkdir -p "$OUT"
cp "$V/run-2-first-hints.png" "$OUT/vscode-first-hints.png"
cp "$V/run-3-hints.png" "$OUT/vscode-hints.png"
cp "$V/run-4-run-view.png" "$OUT/vscode-run-view.png"
cp "$V/run-5-hover.png" "$OUT/vscode-hover.png"

# Neovim: the transformer sample in a fresh folder, kernlens on PATH, the documented config.
T=$(mktemp -d)
SOCK=kl-shot-$$
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
cp -r "$S/samples/transformer" "$T/ws"; rm -rf "$T/ws/.kernlens"; touch "$T/ws/pyproject.toml"
mkdir -p "$T/bin"; ln -s "$B/kernlens" "$T/bin/kernlens"
/usr/bin/python3 - "$S/docs/editors/neovim.md" "$S" > "$T/init.lua" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
m = re.search(r"<!-- tested: nvim-0.7 -->\s*```lua\n(.*?)```", doc, re.S)
if not m: sys.exit("docs/editors/neovim.md: no block marked 'tested: nvim-0.7'")
print(m.group(1).replace("/path/to/kernlens", sys.argv[2]))
PY
tmux -L "$SOCK" -f /dev/null new-session -d -s kl -x 132 -y 36 \
  "cd '$T/ws' && env PATH='$T/bin':\"\$PATH\" TERM=tmux-256color nvim -u '$T/init.lua' train.py"
keys() { tmux -L "$SOCK" send-keys -t kl "$@"; }
screen() { tmux -L "$SOCK" capture-pane -t kl -p "$@"; }
# wait_for REGEX [SECONDS]: until the plain screen matches.
wait_for() {
  local end=$((SECONDS + ${2:-60}))
  until screen | grep -Eq "$1"; do
    ((SECONDS < end)) || { echo "editor-screenshots: timed out waiting for /$1/ on the Neovim screen:" >&2; screen >&2; exit 1; }
    sleep 0.3
  done
}
shot() { screen -e > "$T/$1.ansi"; /usr/bin/python3 "$S/scripts/screenshots/ansi_html.py" "$T/$1.ansi" "$1" > "$T/$1.html"; }
wait_for 'def train_step' 20
sleep 2                                # the helper attaches, lenses come
keys 13G; keys ':KernlensProfileFunction' Enter
wait_for '◷ .*\(so far\)' 120          # the first round's times, provisional
shot neovim-first-hints
wait_for 'converged|round_budget' 120  # the run's end message
sleep 1; keys ':echo ""' Enter
wait_for '◷ ' 10
sleep 1; shot neovim-hints
keys 16G; keys ':lua vim.lsp.buf.hover()' Enter
wait_for 'kernel +launches' 20
sleep 0.5; shot neovim-hover
keys Escape; keys ':KernlensRun' Enter
wait_for 'kernlens: ' 20; wait_for '\|\| |train.py\|' 20
sleep 0.5; shot neovim-run
NODE_PATH=$PW node "$S/scripts/screenshots/render_html.js" \
  "$T/neovim-first-hints.html" "$OUT/neovim-first-hints.png" "$T/neovim-hints.html" "$OUT/neovim-hints.png" \
  "$T/neovim-hover.html" "$OUT/neovim-hover.png" "$T/neovim-run.html" "$OUT/neovim-run.png"
ls -la "$OUT"/*.png
