"""NVTX provider chain, and the torch backend's Kineto trace."""

import json
import os
import types
import unittest

from probe_support import make_workspace, run_probe, tmpdir

from kernlens_probe import nvtx_provider


class Recorder:
    def __init__(self):
        self.calls = []

    def rangePushA(self, msg):
        self.calls.append(("push", msg))
        return 0

    def rangePop(self):
        self.calls.append(("pop",))
        return 0

    def rangeStartA(self, msg):
        self.calls.append(("start", msg))
        return 77

    def rangeEnd(self, rid):
        self.calls.append(("end", rid))

    def markA(self, msg):
        self.calls.append(("mark", msg))


class Stub:
    pass


Stub.__name__ = "_NVTXStub"


class ProviderChainTest(unittest.TestCase):
    def setUp(self):
        self.env = dict(os.environ)
        self.addCleanup(os.environ.clear)
        self.addCleanup(os.environ.update, self.env)
        for k in ("KERNLENS_PROBE_NVTX", "KERNLENS_NVTX_LIB"):
            os.environ.pop(k, None)

    def test_torch_native_first(self):
        native = Recorder()
        provider, desc = nvtx_provider.choose(types.SimpleNamespace(_nvtx=native), warn=False)
        self.assertIs(provider, native)
        self.assertEqual(desc, "torch")

    def test_ctypes_when_torch_is_a_stub(self):
        provider, desc = nvtx_provider.choose(types.SimpleNamespace(_nvtx=type("_NVTXStub", (), {})()), warn=False)
        self.assertEqual(desc, "ctypes:libnvToolsExt.so.1")
        self.assertIsInstance(provider, nvtx_provider.CtypesNvtx)
        # Without a tool attached every call is a cheap no-op that returns normally.
        provider.rangePushA("kl:x.py:1-1")
        provider.rangePop()
        provider.rangeEnd(provider.rangeStartA("s"))
        provider.markA("m")

    def test_noop_when_library_missing(self):
        os.environ["KERNLENS_NVTX_LIB"] = "/nonexistent/libnvToolsExt.so.1"
        provider, desc = nvtx_provider.choose(types.SimpleNamespace(_nvtx=type("_NVTXStub", (), {})()), warn=False)
        self.assertEqual(desc, "noop")
        self.assertIsInstance(provider, nvtx_provider.NoopNvtx)

    def test_forced_provider(self):
        os.environ["KERNLENS_PROBE_NVTX"] = "noop"
        _, desc = nvtx_provider.choose(types.SimpleNamespace(_nvtx=Recorder()), warn=False)
        self.assertEqual(desc, "noop")
        os.environ["KERNLENS_PROBE_NVTX"] = "bogus"
        with self.assertRaises(ValueError):
            nvtx_provider.choose(types.SimpleNamespace(_nvtx=Recorder()), warn=False)

    def test_tee_forwards_and_orders_listeners(self):
        inner = Recorder()
        tee = nvtx_provider.Tee(inner)
        seen = []

        class L:
            def on_push(self, msg):
                seen.append(("push", msg, len(inner.calls)))

            def on_pop(self):
                seen.append(("pop", len(inner.calls)))

            def on_start(self, msg, rid):
                seen.append(("start", msg, rid))

            def on_end(self, rid):
                seen.append(("end", rid))

        tee.listeners.append(L())
        tee.rangePushA("kl:a.py:1-2")
        tee.rangePop()
        rid = tee.rangeStartA("se")
        tee.rangeEnd(rid)
        # listener after the provider's push, before the provider's pop
        self.assertEqual(seen[0], ("push", "kl:a.py:1-2", 1))
        self.assertEqual(seen[1], ("pop", 1))
        self.assertEqual(seen[2], ("start", "se", rid))
        self.assertEqual(inner.calls[-1], ("end", 77))  # the provider's own id is passed back

    def test_provider_in_a_real_run(self):
        tmp = tmpdir(self)
        ws, ov = make_workspace(tmp, "threads")
        status = os.path.join(tmp, "s.json")
        r = run_probe(["--backend", "nsys", "--overlay", ov, "--status", status], ["python", "threads_sample.py"], ws)
        self.assertEqual(r.returncode, 0, r.stderr)
        # PyPI's PyTorch 2.x wheels have torch's own NVTX (torch._C._nvtx); CPU-only builds do not.
        import subprocess
        from probe_support import PYTHON
        native = subprocess.run([PYTHON, "-c", "import torch; print(hasattr(torch._C, '_nvtx'))"],
                                capture_output=True, text=True).stdout.strip() == "True"
        with open(status) as f:
            self.assertEqual(json.load(f)["nvtx_provider"], "torch" if native else "ctypes:libnvToolsExt.so.1")
        if native:
            return  # torch's own NVTX comes first; the no-op fallback: test_noop_when_library_missing
        r = run_probe(["--backend", "nsys", "--overlay", ov, "--status", status], ["python", "threads_sample.py"], ws,
                      env={"KERNLENS_NVTX_LIB": "/nonexistent/lib.so"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kernlens-probe: warning: torch has no NVTX", r.stderr)
        with open(status) as f:
            self.assertEqual(json.load(f)["nvtx_provider"], "noop")


class TorchBackendTest(unittest.TestCase):
    def test_kineto_trace_carries_kl_ranges_as_user_annotations(self):
        tmp = tmpdir(self)
        ws, ov = make_workspace(tmp, "threads")
        out = os.path.join(tmp, "trace.json")
        r = run_probe(["--backend", "torch", "--overlay", ov, "--out", out], ["python", "threads_sample.py"], ws)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertIsInstance(doc, dict)
        events = doc["traceEvents"]
        ann = [e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("kl:")]
        by_name = {}
        for e in ann:
            by_name.setdefault(e["name"], set()).add(e["tid"])
            self.assertEqual(e["ph"], "X")
            self.assertGreaterEqual(e["dur"], 0)
        self.assertEqual(sorted(e["name"] for e in ann),
                         ["kl:threads_sample.py:10-10"] * 3 + ["kl:threads_sample.py:19-19"] * 2)
        self.assertEqual(len(by_name["kl:threads_sample.py:10-10"]), 1)
        self.assertNotEqual(by_name["kl:threads_sample.py:10-10"], by_name["kl:threads_sample.py:19-19"])
        # Main-thread ranges contain their ATen ops.
        main_ranges = [e for e in ann if e["name"] == "kl:threads_sample.py:19-19"]
        ops = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"]
        for rng in main_ranges:
            self.assertTrue(any(rng["ts"] <= o["ts"] and o["ts"] + o["dur"] <= rng["ts"] + rng["dur"]
                                and o["tid"] == rng["tid"] for o in ops), rng)


if __name__ == "__main__":
    unittest.main()
