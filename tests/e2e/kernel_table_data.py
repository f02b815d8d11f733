"""The emulator's kernel names (core/runner/probe/kernlens_probe/kernel_table.json) against the real
traces under tests/data, read here directly (gzip + json / sqlite3; no kernlens code):

  * every entry's templates are well formed (each %(name)x placeholder declared in `params`);
  * an entry marked seen names a kernel that is in the trace it claims, and that name fits the
    entry as its `match` says ("demangled": the full name fits the demangled template; "name":
    the kernel's function name fits the short-name template; "grammar": the trace's name and the
    entry's `example` both fit `grammar`, and the example fits the short-name template);
  * an entry marked not yet seen (seen: null) fits no kernel of any trace - when a new trace has
    one, this test names it, so the data gets the trace it was seen in;
  * docs/probe.md's generated kernel table is what scripts/kernel-table-docs.py renders now.

Run: python3 tests/e2e/kernel_table_data.py (stdlib only; tests/e2e/kernel_table_data.sh for ctest).
"""

import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("KL_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(SRC, "tests", "data")
TABLE = os.path.join(SRC, "core", "runner", "probe", "kernlens_probe", "kernel_table.json")
PLACEHOLDER = re.compile(r"%\((\w+)\)([sd])")
# What a parameter kind may stand for in a real name (a C type may be any template argument).
KIND_RE = {"int": r"-?\d+", "ctype": r"[\w:<>, ]+?"}


def function_name(name):
    """The kernel function of a (demangled) kernel name: no return type, namespaces, template
    arguments or parameters ("void at::native::(anonymous namespace)::f<float>(int)" -> "f")."""
    s = name.replace("(anonymous namespace)", "anon").replace("<unnamed>", "anon")
    if s.startswith("void "):
        s = s[5:]
    cut = len(s)
    for ch in "<(":
        i = s.find(ch)
        if i >= 0:
            cut = min(cut, i)
    return s[:cut].split("::")[-1].strip()


def trace_files():
    """Every real trace under tests/data/real (recorded by others on real GPUs; origin and licence
    in its README): Kineto/Chrome .json(.gz) with traceEvents and nsys .sqlite(.gz) exports with
    a kernel table. An emulated export (kernlens's own, META_DATA_CAPTURE KERNLENS_EMULATED) is
    never evidence and is skipped."""
    out = []
    for root, _, files in os.walk(os.path.join(DATA, "real")):
        for f in sorted(files):
            if f.endswith((".json", ".json.gz", ".sqlite", ".sqlite.gz")):
                out.append(os.path.relpath(os.path.join(root, f), DATA).replace(os.sep, "/"))
    return sorted(out)


def _open(path, mode):
    return gzip.open(path, mode) if path.endswith(".gz") else open(path, mode)


def read_kernels(rel):
    """(full names, function names) of the GPU kernels in one trace, or None when the file is
    not a real trace with kernels."""
    path = os.path.join(DATA, rel)
    full = set()
    if ".json" in rel:
        try:
            with _open(path, "rt") as f:
                doc = json.load(f)
        except (ValueError, UnicodeDecodeError, OSError):
            return None
        events = doc.get("traceEvents") if isinstance(doc, dict) else None
        if not isinstance(events, list):
            return None
        full = {e["name"] for e in events if isinstance(e, dict) and e.get("cat") in ("kernel", "Kernel")
                and isinstance(e.get("name"), str)}
        shorts = set()
    else:
        with tempfile.NamedTemporaryFile(suffix=".sqlite") as tmp:
            with _open(path, "rb") as f:
                tmp.write(f.read())
            tmp.flush()
            db = sqlite3.connect(tmp.name)
            try:
                tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
                    return None
                if "META_DATA_CAPTURE" in tables:
                    meta = " ".join(str(r) for r in db.execute("SELECT * FROM META_DATA_CAPTURE"))
                    if "emulated" in meta.lower():
                        return None
                full = {r[0] for r in db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                                  "JOIN StringIds s ON s.id = k.demangledName")}
                shorts = {r[0] for r in db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                                    "JOIN StringIds s ON s.id = k.shortName")}
            finally:
                db.close()
    return full | shorts, shorts | {function_name(n) for n in full}


def template_regex(template, params):
    """A regex for every name `template` can give: each placeholder becomes its declared
    values (a list), a number ("int"), a C type ("ctype"), or any text."""
    out, pos = [], 0
    for m in PLACEHOLDER.finditer(template):
        out.append(re.escape(template[pos:m.start()]))
        decl = params.get(m.group(1))
        if isinstance(decl, list):
            out.append("(?:%s)" % "|".join(re.escape(str(v)) for v in decl))
        else:
            out.append("(?:%s)" % KIND_RE.get(decl, r".+?"))
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out), re.S)


class KernelTableData(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(TABLE, encoding="utf-8") as f:
            cls.doc = json.load(f)
        cls.kernels = cls.doc["kernels"]
        cls.traces = {}
        for rel in trace_files():
            got = read_kernels(rel)
            if got is not None:
                cls.traces[rel] = got

    def test_traces_were_read(self):
        # The sweep means something only if it saw the real traces (nsys and Kineto alike).
        self.assertGreaterEqual(len(self.traces), 10, sorted(self.traces))
        self.assertTrue(any(r.endswith(".sqlite.gz") for r in self.traces))
        self.assertTrue(any(r.endswith(".json.gz") for r in self.traces))
        self.assertGreater(sum(len(full) for full, _ in self.traces.values()), 500)

    def test_templates_well_formed(self):
        ids = [e["id"] for e in self.kernels]
        self.assertEqual(len(ids), len(set(ids)), "duplicate ids")
        for e in self.kernels:
            with self.subTest(e["id"]):
                params = e.get("params", {})
                used = set()
                for key in ("name", "demangled"):
                    t = e.get(key)
                    if t is None:
                        continue
                    names = {m.group(1) for m in PLACEHOLDER.finditer(t)}
                    used |= names
                    self.assertEqual(PLACEHOLDER.sub("", t).count("%"), 0, "a % that is not %(name)s/d: " + t)
                    self.assertLessEqual(names, set(params), "undeclared parameters in " + key)
                self.assertEqual(set(params), used, "declared parameters no template uses")
                if e["seen"] is None:
                    self.assertTrue(e.get("unseen"), "a not-yet-seen entry needs its reason")
                else:
                    self.assertIn(e["seen"]["match"], ("name", "demangled", "grammar"))

    def test_seen_names_are_in_their_traces(self):
        for e in self.kernels:
            seen = e["seen"]
            if seen is None:
                continue
            with self.subTest(e["id"]):
                rel = seen["trace"]
                self.assertIn(rel, self.traces, "the trace it claims is not under tests/data (or has no kernels)")
                full, _ = self.traces[rel]
                name = seen["name"]
                self.assertIn(name, full, "that exact name is not in " + rel)
                params = e.get("params", {})
                if seen["match"] == "demangled":
                    self.assertRegex(name, template_regex(e["demangled"], params).pattern + r"\Z")
                elif seen["match"] == "name":
                    fn = function_name(name)
                    self.assertTrue(template_regex(e["name"], params).fullmatch(fn),
                                    "%r does not fit %r" % (fn, e["name"]))
                else:
                    grammar = re.compile(e["grammar"])
                    self.assertTrue(grammar.fullmatch(name), "%r does not fit the grammar" % name)
                    self.assertTrue(grammar.fullmatch(e["example"]), "the example does not fit the grammar")
                    self.assertTrue(template_regex(e["name"], params).fullmatch(e["example"]),
                                    "the example is not a name the template gives")

    def test_unseen_names_are_in_no_trace(self):
        for e in self.kernels:
            if e["seen"] is not None:
                continue
            params = e.get("params", {})
            short = template_regex(e["name"], params)
            dem = template_regex(e["demangled"], params) if "demangled" in e else None
            with self.subTest(e["id"]):
                for rel, (full, fnames) in sorted(self.traces.items()):
                    hits = sorted(n for n in fnames if short.fullmatch(n))
                    if dem is not None:
                        hits += sorted(n for n in full if dem.fullmatch(n))
                    self.assertFalse(hits, "%s is marked not yet seen, but %s has %r: record it in kernel_table.json"
                                     % (e["id"], rel, hits[:3]))

    def test_docs_table_is_current(self):
        script = os.path.join(SRC, "scripts", "kernel-table-docs.py")
        r = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
