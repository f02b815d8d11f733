"""The program under the probe is the program: line numbers of overlaid code, the program's own
tracers beside discovery, the torch backend's fallback for PyTorch builds without
profile_all_threads. (Whole programs with and without the probe: tests/e2e/probe_unchanged.sh.)"""

import ast
import json
import os
import unittest

from probe_support import DATA, make_workspace, run_probe, tmpdir

from kernlens_probe import overlay_hook


class LineMapTest(unittest.TestCase):
    def test_instrumented_sample_maps_to_original_lines(self):
        with open(os.path.join(DATA, "threads_ws", "threads_sample.py")) as f:
            original = f.read()
        with open(os.path.join(DATA, "threads_overlay", "threads_sample.py")) as f:
            text = f.read()
        m = overlay_hook.line_map(text, original)
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            o, shift = m[n]
            if "nvtx.range(" in line:  # inserted: the statement it wraps, same indentation
                self.assertEqual(original.splitlines()[o - 1].strip(), lines[n].strip())
                self.assertEqual(shift, 0)
            else:
                self.assertEqual(original.splitlines()[o - 1].strip(), line.strip(), n)
        tree = ast.parse(text)
        overlay_hook.remap_lines(tree, text, original)
        code = compile(tree, "threads_sample.py", "exec")
        worker = next(c for c in code.co_consts if hasattr(c, "co_name") and c.co_name == "worker")
        self.assertEqual(worker.co_firstlineno, 7)
        self.assertEqual(sorted({ln for _, _, ln in worker.co_lines() if ln}), [7, 8, 9, 10, 11])


class ProgramTracerTest(unittest.TestCase):
    def test_discovery_chains_with_the_programs_settrace(self):
        tmp = tmpdir(self)
        ws = os.path.join(tmp, "ws")
        os.makedirs(ws)
        with open(os.path.join(ws, "prog.py"), "w") as f:
            f.write("import sys\n"
                    "seen = []\n"
                    "def mine(frame, event, arg):\n"
                    "    if event == 'call' and frame.f_code.co_name == 'work':\n"
                    "        seen.append(frame.f_lineno)\n"
                    "def work():\n"
                    "    return 1\n"
                    "sys.settrace(mine)\n"
                    "print('mine', sys.gettrace() is mine)\n"
                    "for _ in range(3):\n"
                    "    work()\n"
                    "sys.settrace(None)\n"
                    "work()\n"
                    "print('seen', seen, sys.gettrace())\n")
        calls = os.path.join(tmp, "calls.tsv")
        r = run_probe(["--backend", "nsys", "--workspace", ws, "--discover-calls", calls], ["python", "prog.py"], ws)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "mine True\nseen [6, 6, 6] None\n")
        with open(calls) as f:
            rows = [l.rstrip("\n").split("\t") for l in f]
        work = [row for row in rows if row[0] == "code" and row[4] == "work"]
        self.assertEqual(len(work), 1, rows)
        self.assertEqual(work[0][5], "4")  # discovery saw all 4 calls, with and without the program's tracer


class TorchBackendFallbackTest(unittest.TestCase):
    def test_threads_without_profile_all_threads(self):
        tmp = tmpdir(self)
        ws, ov = make_workspace(tmp, "threads")
        out = os.path.join(tmp, "trace.json")
        r = run_probe(["--backend", "torch", "--overlay", ov, "--out", out], ["python", "threads_sample.py"], ws,
                      env={"KERNLENS_PROBE_TORCH_ALL_THREADS": "0"})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertIn("from the probe's NVTX observation", doc["kernlens"]["source"])
        ev = doc["traceEvents"]
        ann = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("kl:")]
        self.assertEqual(sorted(e["name"] for e in ann),
                         ["kl:threads_sample.py:10-10"] * 3 + ["kl:threads_sample.py:19-19"] * 2)
        # The added ranges are on the trace's clock: inside the span of the events torch recorded.
        recorded = [e for e in ev if e.get("ph") == "X" and "kernlens_source" not in e.get("args", {})]
        lo = min(e["ts"] for e in recorded)
        hi = max(e["ts"] + e["dur"] for e in recorded)
        for e in ann:
            self.assertTrue(lo - 1e5 <= e["ts"] <= hi + 1e5, (e, lo, hi))


if __name__ == "__main__":
    unittest.main()
