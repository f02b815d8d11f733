#!/usr/bin/env python3
"""Checks the report of vscode_run_e2e.js (a profiling run of samples/transformer in code-server).
usage: check_run_report.py RUN-REPORT.json
 - a cancellable progress notification appeared;
 - hints appeared before the run ended, marked "(so far)", and the final ones are not marked;
 - the call line `_, loss = model(idx, targets)` shows its inclusive time ("... total");
 - "Show run" listed hottest lines (path:line), the first one mapped to a real line;
 - the hover on the hottest line shows >= 5 kernel rows over its tables (forward, backward: on
   PyTorch 2.x the transformer sample's hottest line, the MLP's up-projection, launches 5 kernels), each label different, fits 760 px, nothing
   clipped horizontally, no cell wrapped onto a second line, and says emulated.
Prints the measurements, one line per failure; exit 1 if any."""
import json
import re
import sys

rep = json.load(open(sys.argv[1]))
fails = []

prog = rep.get("progress") or {}
if not prog:
    fails.append("no progress notification")
elif not prog.get("cancel"):
    fails.append("progress notification has no cancel button: %r" % prog)

first, final = rep.get("first_hints") or [], rep.get("final_hints") or []
if not first:
    fails.append("no hint appeared")
elif rep.get("first_hints_ms", 0) >= rep.get("done_ms", 0):
    fails.append("first hints only at the end of the run (%s ms of %s ms)" % (rep.get("first_hints_ms"), rep.get("done_ms")))
elif not any("(so far)" in h["label"] for h in first):
    fails.append("first hints are not marked provisional: %s" % first)
if not final or any("(so far)" in h["label"] for h in final):
    fails.append("final hints missing or still provisional: %s" % final)
call = [h for h in final if "model(idx, targets)" in h["code"]]
if not call or not re.search(r"\d \S+ total$", call[0]["label"]):
    fails.append("call line has no inclusive time: %s" % call)

hot = (rep.get("run_view") or {}).get("hottest") or []
if len(hot) < 3 or not re.match(r"\S+\.py:\d+$", hot[0][2]):
    fails.append("run view lists no hottest lines: %s" % hot[:3])

hv = rep.get("hover") or {}
kernel_rows = [r for r in hv.get("rows", []) if r and not r[0].startswith("(")]
if len(kernel_rows) < 5:
    fails.append("hover shows %d kernel rows (< 5): %r" % (len(kernel_rows), hv.get("text", "")[:400]))
if hv.get("width", 9999) > 760 or hv.get("tableWidth", 0) > hv.get("width", 0):
    fails.append("hover %s px wide, table %s px (limit 760)" % (hv.get("width"), hv.get("tableWidth")))
labels = [r[0] for r in kernel_rows]
if len(set(labels)) != len(labels):
    fails.append("hover rows that cannot be told apart: %r" % labels)
if hv.get("wrapped"):
    fails.append("hover cells wrapped onto two lines: %r" % hv["wrapped"])
rs = hv.get("resized") or {}
if rs and rs.get("scrollHeight", 0) > rs.get("clientHeight", 0) + 1:
    fails.append("the hover, made taller, still scrolls: %r" % rs)
if hv.get("clipped"):
    fails.append("hover content clipped horizontally (scrollWidth %s > clientWidth %s)" % (hv.get("scrollWidth"), hv.get("clientWidth")))
if "emulated" not in hv.get("text", ""):
    fails.append("hover does not say emulated")

for f in fails:
    print("FAIL", f)
print("run: first hints after %s ms, ended after %s ms; call line: %s; run view: %d lines; hover on %s: %d kernel rows, %s px (table %s px)" % (
    rep.get("first_hints_ms"), rep.get("done_ms"), call[0]["label"] if call else None, len(hot),
    rep.get("hover_target"), len(kernel_rows), hv.get("width"), hv.get("tableWidth")))
sys.exit(1 if fails else 0)
