#!/usr/bin/env python3
"""Renders the emulator's kernel table (core/runner/probe/kernlens_probe/kernel_table.json) as the
markdown table between the markers in docs/probe.md.

  python3 scripts/kernel-table-docs.py           rewrite the table in docs/probe.md
  python3 scripts/kernel-table-docs.py --check   exit 1 (and say so) when docs/probe.md is not
                                                 what the data renders (tests/e2e/kernel_table_data.py)
Stdlib only.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "core", "runner", "probe", "kernlens_probe", "kernel_table.json")
DOC = os.path.join(ROOT, "docs", "probe.md")
BEGIN = "<!-- kernel-table: begin (generated from kernel_table.json by scripts/kernel-table-docs.py; do not edit) -->"
END = "<!-- kernel-table: end -->"


def readable(template):
    """`%(tm)d` -> `{tm}`: the template as the docs show it."""
    return re.sub(r"%\((\w+)\)[sd]", r"{\1}", template)


def cell(text):
    return text.replace("|", "\\|")


def render(doc):
    rows = ["| family | ops | kernel (short name; `{…}` a parameter) | block | seen in a real trace (`tests/data/…`) |",
            "|---|---|---|---|---|"]
    for e in doc["kernels"]:
        block = "×".join(str(b) for b in e["block"]) if "block" in e else "computed"
        seen = e["seen"]
        if seen is None:
            where = "not yet: " + e["unseen"]
        else:
            how = {"demangled": "full demangled name", "name": "kernel name",
                   "grammar": "naming grammar only, e.g. `%s`" % seen["name"]}[seen["match"]]
            where = "`%s` (%s)" % (seen["trace"], how)
        rows.append("| %s | %s | `%s` | %s | %s |" % (e["family"], cell(e["ops"]), cell(readable(e["name"])), block,
                                                      cell(where)))
    return "\n".join(rows) + "\n"


def main(argv):
    check = "--check" in argv[1:]
    with open(TABLE, encoding="utf-8") as f:
        doc = json.load(f)
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.stderr.write("kernel-table-docs: docs/probe.md needs one pair of markers:\n%s\n%s\n" % (BEGIN, END))
        return 2
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    new = head + BEGIN + "\n" + render(doc) + END + tail
    if new == text:
        return 0
    if check:
        sys.stderr.write("kernel-table-docs: docs/probe.md's kernel table is out of date with kernel_table.json: "
                         "run python3 scripts/kernel-table-docs.py\n")
        return 1
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
