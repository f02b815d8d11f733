#!/usr/bin/env bash
# kernlens report: the HTML page renders in headless Chromium (Debian package `chromium`,
# installed by scripts/test-deps.sh, group "browser"). Checks the DOM after the page's script
# ran (timeline SVG with GPU and range lanes, tables with rows) and keeps a PNG screenshot in
# $KL_BINARY_DIR/test-artifacts/. No Chromium = FAIL (never a silent skip).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
artifacts="${KL_BINARY_DIR:-$PWD}/test-artifacts"
mkdir -p "$artifacts"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$chrome" ]]; then
  echo "FAIL: chromium not installed; run scripts/test-deps.sh (group 'browser')" >&2
  exit 1
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run_chrome() {  # run_chrome PROFILE_DIR ARGS...
  local prof=$1; shift
  timeout 180 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$prof" "$@" 2>>"$tmp/chrome.log"
}

for f in nsys/mfu_2gpu_before.sqlite.gz hta_a100_alexnet_small.json.gz; do
  base=$(basename "$f" | sed 's/\..*//')
  html="$tmp/$base.html"
  "$KERNLENS" report "$KL_SOURCE_DIR/tests/data/real/$f" -o "$html" 2>/dev/null
  # Self-contained: no external resources at all.
  if grep -Eo '(src|href)="[a-z]+:' "$html" | grep -v 'data:' | head -1 | grep -q .; then fail "$f: external resource"; fi
  grep -q '<link' "$html" && fail "$f: <link> element"
  run_chrome "$tmp/prof-dom-$base" --virtual-time-budget=10000 --dump-dom "file://$html" > "$tmp/$base.dom" \
    || { tail -5 "$tmp/chrome.log" >&2; fail "$f: chromium --dump-dom failed"; }
  python3 - "$tmp/$base.dom" "$f" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
name = sys.argv[2]
assert 'data-rendered="1"' in dom, name + ": page script did not finish"
assert '<svg id="timeline"' in dom, name + ": no timeline svg"
gpu = len(re.findall(r'class="lane lane-gpu"', dom))
rng = len(re.findall(r'class="lane lane-range"', dom))
items = len(re.findall(r'class="item"', dom))
assert gpu >= 1 and items >= 10, (name, gpu, items)
m = re.search(r'<div id="top-kernels">(.*?)</div>', dom, re.S)
rows = m.group(1).count("<tr>") if m else 0
assert rows >= 2, (name, "top kernels table rows", rows)
print(f"{name}: {gpu} GPU lanes, {rng} range lanes, {items} timeline rects, {rows - 1} top-kernel rows")
PY
  png="$artifacts/report_$base.png"
  rm -f "$png"
  run_chrome "$tmp/prof-shot-$base" --virtual-time-budget=10000 --hide-scrollbars --window-size=1500,2400 \
    --screenshot="$png" "file://$html" >/dev/null || fail "$f: screenshot failed"
  [[ -s "$png" ]] || fail "$f: no screenshot"
  head -c 8 "$png" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a' || fail "$f: screenshot is not a PNG"
  echo "screenshot: $png"
done
# Nsight Compute roofline section (--ncu): an inline SVG with one point per launch that has the
# metrics, counted independently of kernlens from the CSVs' roofline-chart rows.
ncu_dir="$KL_SOURCE_DIR/tests/data/ncu/dsocr_v2"
html="$tmp/roofline.html"
"$KERNLENS" report "$KL_SOURCE_DIR/tests/data/real/hta_a100_alexnet_small.json.gz" \
  --ncu "$ncu_dir/kernel_0001.section_SpeedOfLight_RooflineChart.csv" \
  --ncu "$ncu_dir/kernel_0003.section_SpeedOfLight_RooflineChart.csv" -o "$html" 2>/dev/null \
  || fail "report --ncu failed"
run_chrome "$tmp/prof-roof" --virtual-time-budget=10000 --dump-dom "file://$html" > "$tmp/roof.dom" \
  || fail "chromium --dump-dom failed on the roofline report"
python3 - "$tmp/roof.dom" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
assert 'data-rendered="1"' in dom, "page script did not finish"
m = re.search(r'<section class="extra"><h2>Roofline \(Nsight Compute\)</h2>(.*?)</section>', dom, re.S)
assert m, "no roofline section"
sec = m.group(1)
assert "<svg" in sec, "no roofline svg"
pts = len(re.findall(r"<circle", sec))
assert pts == 2, ("roofline points", pts)
assert "2 of 2 Nsight Compute launches plotted" in sec, sec[-300:]
print(f"roofline: {pts} points")
PY
echo "PASS report_render"
