"""Overlay import hook: instrumented text served, originals untouched, original paths in code."""

import json
import os
import unittest

from probe_support import make_workspace, run_probe, tmpdir, write_manifest


def snapshot(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            st = os.stat(p)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = (f.read(), st.st_mtime_ns)
    return out


class OverlayTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tmpdir(self)
        self.ws = os.path.join(self.tmp, "ws")
        self.ov = os.path.join(self.tmp, "ov")
        os.makedirs(os.path.join(self.ws, "pkg"))
        os.makedirs(os.path.join(self.ov, "files", "pkg"))
        self.files = {
            # The overlays are what instrumentation does: lines inserted (a wrapper around a
            # statement, which is re-indented), plus a changed line so the tests see which text ran.
            "main.py": ("import sys\nimport pkg.mod\nprint('MAIN original', pkg.mod.value())\n"
                        "if '--crash' in sys.argv:\n    pkg.mod.crash()\n",
                        "import sys\nimport pkg.mod\nprint('MAIN overlay', pkg.mod.value())\n"
                        "if '--crash' in sys.argv:\n    if True:  # inserted\n        pkg.mod.crash()\n"),
            "pkg/__init__.py": ("", ""),
            "pkg/mod.py": ("def value():\n    return 'mod original'\n\n\ndef crash():\n"
                           "    raise RuntimeError('overlay crash')  # original line 6\n",
                           "def value():\n    if True:  # inserted\n        return 'mod overlay'\n\n\n"
                           "def crash():\n    if True:  # inserted\n"
                           "        raise RuntimeError('overlay crash')  # overlay line 8\n"),
            "child.py": ("import pkg.mod\nprint('CHILD', pkg.mod.value())\n", None),
            "spawn.py": ("import subprocess, sys\nimport pkg.mod\nprint('PARENT', pkg.mod.value(), flush=True)\n"
                         "rc = subprocess.call([sys.executable, 'child.py'])\n"
                         "rc += subprocess.call([sys.executable, '-u', 'main.py'])\n"
                         "sys.exit(subprocess.call([sys.executable, 'main.py', '--crash']) * 100 + rc)\n", None),
        }
        manifest = {}
        for rel, (orig, inst) in self.files.items():
            with open(os.path.join(self.ws, rel), "w") as f:
                f.write(orig)
            if inst is not None:
                with open(os.path.join(self.ov, "files", rel), "w") as f:
                    f.write(inst)
                manifest[rel] = "files/" + rel
        write_manifest(self.ov, self.ws, manifest)
        self.before = snapshot(self.ws)

    def probe(self, entry, extra=(), env=None):
        return run_probe(["--backend", "nsys", "--overlay", self.ov] + list(extra), entry, self.ws,
                         env=env)

    def assertUntouched(self):
        after = snapshot(self.ws)
        for rel, (data, mtime) in self.before.items():
            self.assertEqual(after[rel], (data, mtime), rel)
        # No bytecode of an overlaid module may be written (or read later by a plain run).
        cache = [p for p in after if "__pycache__" in p]
        self.assertFalse([p for p in cache if os.path.basename(p).startswith("mod.")], cache)

    def test_entry_script_and_module_are_served_from_overlay(self):
        r = self.probe(["python", "main.py"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("MAIN overlay mod overlay", r.stdout)
        self.assertUntouched()

    def test_python_dash_m_entry(self):
        r = self.probe(["python3", "-m", "pkg.mod"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.probe(["python3", "-c", "import pkg.mod; print(pkg.mod.__file__, pkg.mod.value())"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.join(self.ws, "pkg", "mod.py") + " mod overlay", r.stdout)
        self.assertUntouched()

    def test_traceback_shows_original_path(self):
        r = self.probe(["python", "main.py", "--crash"])
        self.assertEqual(r.returncode, 1)
        self.assertIn('File "%s", line 6, in crash' % os.path.join(self.ws, "pkg", "mod.py"), r.stderr)
        self.assertIn('File "%s", line 5, in <module>' % os.path.join(self.ws, "main.py"), r.stderr)
        # The user's own line numbers and text (the file on disk), not the instrumented text's.
        self.assertIn("raise RuntimeError('overlay crash')  # original line 6", r.stderr)
        self.assertNotIn("overlay line 8", r.stderr)
        self.assertNotIn("inserted", r.stderr)
        self.assertIn("RuntimeError: overlay crash", r.stderr)
        self.assertNotIn("kernlens_probe", r.stderr)  # probe frames are trimmed
        self.assertUntouched()

    def test_child_process_inherits_hook(self):
        r = self.probe(["python", "spawn.py"])
        self.assertEqual(r.returncode, 100, r.stderr)  # the crashing child exits 1, the others 0
        self.assertIn("PARENT mod overlay", r.stdout)
        self.assertIn("CHILD mod overlay", r.stdout)   # module imported by a child
        self.assertIn("MAIN overlay mod overlay", r.stdout)  # a child's overlaid main script
        self.assertIn('File "%s", line 6, in crash' % os.path.join(self.ws, "pkg", "mod.py"), r.stderr)
        self.assertUntouched()

    def test_without_probe_originals_run(self):
        import subprocess
        from probe_support import PYTHON
        r = subprocess.run([PYTHON, "main.py"], cwd=self.ws, capture_output=True, text=True)
        self.assertIn("MAIN original mod original", r.stdout)

    def test_exit_code_and_bad_inputs(self):
        with open(os.path.join(self.ws, "exit3.py"), "w") as f:
            f.write("import sys\nsys.exit(3)\n")
        self.assertEqual(self.probe(["python", "exit3.py"]).returncode, 3)
        r = run_probe(["--backend", "nsys", "--overlay", os.path.join(self.tmp, "nope")], ["python", "main.py"], self.ws)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("kernlens-probe: error: overlay manifest not found", r.stderr)
        with open(os.path.join(self.ov, "overlay.json"), "w") as f:
            f.write("{not json")
        r = self.probe(["python", "main.py"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read overlay manifest", r.stderr)
        r = run_probe(["--backend", "nsys"], ["python", "missing.py"], self.ws)
        self.assertEqual(r.returncode, 2)
        self.assertIn("can't open file", r.stderr)
        r = run_probe(["--backend", "emulate"], ["python", "main.py"], self.ws)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--out is required", r.stderr)
        r = run_probe(["--backend", "emulate", "--gpu", "v100", "--out", os.path.join(self.tmp, "o.sqlite")],
                      ["python", "main.py"], self.ws)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown --gpu 'v100'", r.stderr)

    def test_status_file(self):
        status = os.path.join(self.tmp, "status.json")
        r = self.probe(["python", "main.py"], ["--status", status])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(status) as f:
            doc = json.load(f)
        self.assertEqual(doc["exit_code"], 0)
        self.assertEqual(doc["backend"], "nsys")
        self.assertIsNone(doc["probe_error"])


if __name__ == "__main__":
    unittest.main()
