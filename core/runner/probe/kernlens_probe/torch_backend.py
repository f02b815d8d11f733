"""The torch backend: torch.profiler around the entry, "kl:" ranges mirrored as record_function.

Output (OUT_PATH) is a Kineto trace JSON: {"schemaVersion": 1, "traceEvents": [...], ...} with the
managed ranges as events of cat "user_annotation", each on the native thread id that pushed it.

Contract: the trace carries every "kl:" range of every thread of the process, once.
  * PyTorch 2.x (Kineto): torch's own export_chrome_trace. The profiler's RecordFunction
    callbacks are thread-local (only the thread that started it is recorded), so the probe asks
    for `_ExperimentalConfig(profile_all_threads=True)` where this PyTorch has it. Where it does
    not, or where a thread's ranges are still missing from the trace, the probe adds the ranges it
    observed itself (its NVTX listener, CLOCK_MONOTONIC) shifted onto the trace's clock through an
    anchor range it records on the starting thread, and says so in the top-level "kernlens" object.
  * PyTorch without Kineto (a source build with USE_KINETO=0): the legacy autograd profiler
    records the thread that started it and writes a bare event list; the probe writes the
    Kineto-shaped document itself from the legacy events (cat "user_annotation" for
    record_function scopes, "cpu_op" for ATen ops) plus the "kl:" ranges of other threads.
Kineto's own log lines (STAGE/USDT/ERROR ... on stderr, not the program's) are silenced with
KINETO_LOG_LEVEL unless the user set it (session.py sets it before torch is imported).
"""

import json
import os
import sys
import threading
import time

from . import __version__, cuda_check, nvtx_provider, step_scopes

USER_SCOPE = 7  # at::RecordScope::USER_SCOPE (record_function)
ANCHOR = "kernlens:clock-anchor"  # fallback only: a range on the starting thread, both clocks
# Tests set this to False to exercise the fallback on a PyTorch that has profile_all_threads.
USE_ALL_THREADS = os.environ.get("KERNLENS_PROBE_TORCH_ALL_THREADS", "1") != "0"


class TorchBackend:
    def __init__(self):
        self.prof = None
        self.kineto = None
        self.t0_ns = None
        self.main_tid = threading.get_native_id()
        self.tls = threading.local()
        self.ranges = []     # (name, tid, start_ns, end_ns) of kl: ranges, all threads
        self.lock = threading.Lock()
        self.error = None
        self.all_threads = False  # the profiler itself records every thread
        self.anchor = None        # (start_ns, end_ns) of ANCHOR on CLOCK_MONOTONIC

    # nvtx_provider listener
    def on_push(self, msg):
        stack = self._stack()
        rf = None
        if (msg.startswith("kl:") or step_scopes.is_probe_scope(msg)) and self.prof is not None:
            import torch.autograd.profiler as tap
            try:
                rf = tap.record_function(msg)
                rf.__enter__()
            except Exception:
                rf = None
        stack.append((msg, time.monotonic_ns(), rf))

    def on_pop(self):
        stack = self._stack()
        if not stack:
            return
        msg, start, rf = stack.pop()
        if rf is not None:
            try:
                rf.__exit__(None, None, None)
            except Exception:
                pass
        if msg.startswith("kl:"):
            with self.lock:
                self.ranges.append((msg, threading.get_native_id(), start, time.monotonic_ns()))

    def _stack(self):
        s = getattr(self.tls, "stack", None)
        if s is None:
            s = self.tls.stack = []
        return s

    def start(self, torch):
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU]
        if cuda_check.cuda_devices_present(torch):  # not torch.cuda.is_available(): see cuda_check
            acts.append(ProfilerActivity.CUDA)
        self.kineto = bool(torch.autograd.kineto_available())
        self.t0_ns = time.monotonic_ns()
        self.main_tid = threading.get_native_id()
        kwargs = {}
        if self.kineto and USE_ALL_THREADS:
            try:
                from torch.profiler import _ExperimentalConfig
                kwargs["experimental_config"] = _ExperimentalConfig(profile_all_threads=True)
                self.all_threads = True
            except (ImportError, TypeError):  # older 2.x: thread-local only, see finish()
                kwargs = {}
        self.prof = profile(activities=acts, record_shapes=True, **kwargs)
        self.prof.__enter__()
        if self.kineto and not self.all_threads:
            import torch.autograd.profiler as tap
            s = time.monotonic_ns()
            with tap.record_function(ANCHOR):
                pass
            self.anchor = (s, time.monotonic_ns())
        nvtx_provider.add_listener(self)

    def finish(self, path):
        """Stops the profiler and writes the Kineto JSON to `path` (atomically)."""
        tmp = path + ".tmp-%d" % os.getpid()
        try:
            if self.prof is None:
                doc = self._document([], "torch was never imported by the program")
                _dump(doc, tmp)
            else:
                self.prof.__exit__(None, None, None)
                if self.kineto:
                    self.prof.export_chrome_trace(tmp)
                    self._complete_kineto(tmp)
                else:
                    _dump(self._from_legacy(), tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _complete_kineto(self, path):
        """Adds the kl: ranges of threads the Kineto trace lacks (see the module's contract)."""
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        events = doc.get("traceEvents") or []
        pid = os.getpid()
        have = {}
        for e in events:
            if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("kl:"):
                have[e.get("tid")] = have.get(e.get("tid"), 0) + 1
        with self.lock:
            ranges = list(self.ranges)
        seen = {}
        for _, tid, _, _ in ranges:
            seen[tid] = seen.get(tid, 0) + 1
        missing = sorted(t for t, n in seen.items() if have.get(t, 0) < n)
        source = "kineto (profile_all_threads)" if self.all_threads else "kineto"
        if missing:
            offset_us = self._anchor_offset_us(events)
            if offset_us is None:
                source += "; kl: ranges of threads %s missing and not added (no clock anchor)" % missing
            else:
                for name, tid, s, e in ranges:
                    if tid in missing:
                        events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": pid,
                                       "tid": tid, "ts": s / 1000.0 + offset_us, "dur": (e - s) / 1000.0,
                                       "args": {"kernlens_source": "probe NVTX observation"}})
                source += "; kl: ranges of threads %s from the probe's NVTX observation" % missing
        doc["traceEvents"] = events
        doc["kernlens"] = {"backend": "torch", "probe_version": __version__, "source": source,
                           "torch_version": getattr(sys.modules.get("torch"), "__version__", "")}
        _dump(doc, path)

    def _anchor_offset_us(self, events):
        """trace ts - CLOCK_MONOTONIC us, from the anchor range (midpoints), or None."""
        if self.anchor is None:
            return None
        for e in events:
            if e.get("name") == ANCHOR and "ts" in e:
                mid_trace = e["ts"] + e.get("dur", 0) / 2.0
                mid_mono = (self.anchor[0] + self.anchor[1]) / 2000.0
                return mid_trace - mid_mono
        return None

    def _document(self, events, source):
        return {"schemaVersion": 1, "displayTimeUnit": "ms", "deviceProperties": [],
                "traceEvents": events,
                "kernlens": {"backend": "torch", "probe_version": __version__, "source": source,
                             "torch_version": getattr(sys.modules.get("torch"), "__version__", "")}}

    def _from_legacy(self):
        pid = os.getpid()
        base_us = self.t0_ns / 1000.0
        events = []
        legacy_threads = set()
        for i, e in enumerate(self.prof.profiler.function_events):
            legacy_threads.add(e.thread)
            start = e.time_range.start
            events.append({"ph": "X", "cat": "user_annotation" if int(getattr(e, "scope", 0)) == USER_SCOPE else "cpu_op",
                           "name": e.name, "pid": pid, "tid": e.thread, "ts": base_us + start,
                           "dur": e.time_range.end - start,
                           "args": {"External id": e.id, "Input Dims": list(e.input_shapes or [])}})
        # The legacy profiler records only the thread that enabled it: name it by its native tid.
        if len(legacy_threads) == 1:
            only = next(iter(legacy_threads))
            for ev in events:
                ev["tid"] = self.main_tid if ev["tid"] == only else ev["tid"]
            covered = {self.main_tid}
        else:
            covered = set()
        with self.lock:
            for name, tid, s, e in self.ranges:
                if tid in covered:
                    continue
                events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": pid, "tid": tid,
                               "ts": s / 1000.0, "dur": (e - s) / 1000.0,
                               "args": {"kernlens_source": "probe NVTX observation"}})
        threads = {ev["tid"] for ev in events} | {self.main_tid}
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": os.path.basename(sys.executable or "python3")}})
        for tid in sorted(threads):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": "main" if tid == self.main_tid else "thread %d" % tid}})
        events.sort(key=lambda ev: (ev.get("ts", 0), -ev.get("dur", 0)))
        return self._document(events, "legacy autograd profiler (this PyTorch has no Kineto); "
                                      "kl: ranges of other threads from the probe's NVTX observation")


def _dump(doc, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
