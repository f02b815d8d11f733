#!/usr/bin/env python3
"""Compares an editor test report (JSON from nvim_check.lua or vscode_e2e.js) with the oracle
(expected_hints.py). usage: check_report.py ORACLE.json REPORT.json [--shift N]
Checks: hints on exactly the oracle's shown lines with its labels (before the edit, and N lines
lower after inserting N lines at the top), hovers list every kernel of their line, a lens with
the oracle's title on every function's def line. Prints one line per failure; exit 1 if any."""
import json
import sys

oracle = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
shift = int(sys.argv[sys.argv.index("--shift") + 1]) if "--shift" in sys.argv else 2
fails = []

want = sorted((l["line"], l["label"]) for l in oracle["lines"] if l["shown"])
if not want:
    fails.append("oracle: no line to show (bad profile?)")
for key, off in (("hints_before", 0), ("hints_after", shift)):
    if key not in rep:
        continue
    got = sorted((h["line"], h["label"]) for h in rep[key])
    exp = [(l + off, lab) for l, lab in want]
    if got != exp:
        fails.append("%s: expected %s, got %s" % (key, exp, got))

by_line = {str(l["line"]): l for l in oracle["lines"]}
for line, text in (rep.get("hovers") or {}).items():
    text = text.replace("\u00a0", " ")  # table cells keep their spaces from breaking (a space to a reader)
    l = by_line.get(str(line))
    if not l:
        fails.append("hover on line %s: not an oracle line" % line)
        continue
    # Hovers shorten long kernel names to what tells them apart (kernel_label.h): the first 12
    # characters are always kept.
    for k in l["kernels"]:
        if k[:12] not in text:
            fails.append("hover on line %s lacks kernel %s: %r" % (line, k, text[:300]))
    if "emulated" not in text:
        fails.append("hover on line %s does not say emulated" % line)

for key, off in (("lenses_before", 0), ("lenses_after", shift)):
    if key not in rep:
        continue
    lenses = rep[key]
    for f in oracle["functions"]:
        at = [x["title"] for x in lenses if x["line"] == f["def_line"] + off]
        if not any(t.startswith(f["title"]) for t in at):
            fails.append("%s: no lens %r on line %d (lenses there: %s)" % (key, f["title"], f["def_line"] + off, at))
        if not any(t == "▶ Profile" for t in at):
            fails.append("%s: no ▶ Profile lens on line %d" % (key, f["def_line"] + off))

for key in ("lens_titles_before", "lens_titles_after"):
    if key not in rep:
        continue
    for f in oracle["functions"]:
        if not any(t.startswith(f["title"]) for t in rep[key]):
            fails.append("%s: no lens %r (lenses: %s)" % (key, f["title"], rep[key]))
    if "▶ Profile" not in rep[key]:
        fails.append("%s: no ▶ Profile lens" % key)

for f in fails:
    print("FAIL", f)
if not fails:
    print("report matches the oracle: %d hints, %d hovers, %d function lenses" %
          (len(want), len(rep.get("hovers") or {}), len(oracle["functions"])))
sys.exit(1 if fails else 0)
