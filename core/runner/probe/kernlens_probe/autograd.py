"""The emulator's model of CUDA PyTorch's autograd threading and of emit_nvtx's sequence ranges.

CUDA PyTorch runs the backward pass on its autograd device thread (`pt_autograd_0` for device 0)
while the thread that called backward() blocks; CPU PyTorch runs it on the calling thread. The
emulator reproduces the GPU case:

  * every op dispatched while the C++ engine runs a backward pass (Variable._execution_engine.
    run_backward: Tensor.backward, torch.autograd.backward/grad, reentrant checkpoints) is
    launched from a separate thread, AUTOGRAD_TID, named `pt_autograd_0`; code outside it
    (forward, optimizer, user code, the grad_tensors backward() makes) stays on its own thread;
  * the NVTX ranges torch.autograd.profiler.emit_nvtx() writes, with this run's real sequence
    numbers, in emit_nvtx's text ("<name>, seq = <N>", getNvtxStr without shapes; "<name>" for
    nodes without a number):
      - backward nodes: PyTorch's legacy CPU profiler records every node's RecordFunction with
        its sequence number; it runs only while backward runs (per thread), and its node
        records (names with "Backward", torch::autograd::*) become ranges on AUTOGRAD_TID;
      - forward ops: a TorchFunctionMode sees every torch-level call (F.linear, Tensor.__matmul__,
        ...) on its thread with its interval; the autograd nodes the call created (its outputs'
        grad_fn and their not yet seen inputs) are tagged, and pre/post hooks on them time
        their apply() in backward, which pairs each with its profiler record and so with its
        sequence number; one range "aten::<call>, seq = <N>" per created node is written over
        the call's interval. Custom autograd Functions (Function.apply: torch.utils.checkpoint's
        CheckpointFunction, user Functions) are calls of their own, named by their class as
        emit_nvtx names them ("CheckpointFunction, seq = N"); ops inside their forward run
        without grad and create no node. (Under a TorchDispatchMode the profiler cannot number forward ops
        itself: the Python key, not Autograd, is then the op's highest dispatch key.)
    Nodes that never run in backward get no number and no range (they link nothing).

The TorchFunctionMode runs on the main thread only: torch 1.13 trips an internal assert
(PyHandleCache) when a TorchFunctionMode is entered on further Python threads, so forward ops on
worker threads get no sequence range (their backward kernels stay on the line that called
backward()).

The profiler's clock is CLOCK_REALTIME in microseconds; it is mapped onto CLOCK_MONOTONIC ns (the
emulator's timeline) with an offset that must not depend on how busy the machine is:
  * measured when recording starts and when it stops as the best of several (monotonic, realtime,
    monotonic) reads, the one with the shortest bracket (a read pair split by a preemption, which
    on a busy machine lasts milliseconds, is discarded);
  * then checked against the pass's own hook windows: a node's pre hook runs before its record
    starts and its post hook after it ends, so every numbered record whose node has a window bounds
    the offset from both sides; an offset outside those bounds is moved to the nearest one.
A forward call's range takes its node's sequence number from the node itself (Node._sequence_nr),
never from the clocks; only where a PyTorch lacks it is a window paired with the record of the same
name whose start is nearest to its pre hook.
"""

import bisect
import threading
import time

AUTOGRAD_TID = 0xFFFFF0          # a 24-bit id no Linux thread has (pid_max <= 4194304)
AUTOGRAD_THREAD_NAME = "pt_autograd_0"
_TAG = "kernlens_forward_call"
_OFFSET_READS = 7                # clock read triples per offset measurement
_PAIR_SLACK_NS = 1000            # the profiler's times are doubles in us: a few hundred ns of rounding


def clock_offset(reads=_OFFSET_READS):
    """CLOCK_MONOTONIC - CLOCK_REALTIME in ns, with its uncertainty: of `reads` (monotonic,
    realtime, monotonic) triples, the one with the shortest bracket. Returns (offset, bracket)."""
    best = None
    for _ in range(reads):
        m0 = time.monotonic_ns()
        r = time.time_ns()
        m1 = time.monotonic_ns()
        if best is None or m1 - m0 < best[1]:
            best = ((m0 + m1) // 2 - r, m1 - m0)
    return best


def _sequence_nr(node):
    """The node's sequence number (PyTorch >= 2.0: Node._sequence_nr), or None."""
    try:
        return int(node._sequence_nr())
    except Exception:
        return None


def is_backward_node(name):
    return "Backward" in name or name.startswith("torch::autograd::")


def nvtx_text(name, seq):
    """emit_nvtx's range text (torch/csrc/profiler/util.cpp getNvtxStr, record_shapes=False)."""
    return "%s, seq = %d" % (name, seq) if seq >= 0 else name


def _call_name(func):
    packet = getattr(func, "overloadpacket", func)
    if hasattr(packet, "_qualified_op_name"):  # torch.ops.<ns>.<op>: the op's own name
        return packet._qualified_op_name
    name = getattr(func, "__name__", None) or str(func)
    return "aten::" + (name.strip("_") or name)


class AutogradModel:
    def __init__(self, seq_ranges=True):
        self.seq_ranges = seq_ranges
        self.tls = threading.local()
        self.lock = threading.Lock()
        self.backward_calls = 0
        self.errors = []
        self.calls = []          # forward calls that created nodes: (tid, t0, t1, name)
        self.windows = []        # node applies in backward: (call index, node name, seq or None, pass, pre ns, post ns)
        self.profiles = []       # per backward pass: (pass, offset ns, bracket ns, node records in realtime ns)
        self.passes = 0
        self._orig_engine = None
        self._apply_installed = False
        self._own_apply = None
        self._fmode_cls = None

    # ---- backward on the autograd thread ------------------------------------------------------
    def in_backward(self):
        return getattr(self.tls, "depth", 0) > 0

    def install(self):
        from torch.autograd.variable import Variable
        engine = Variable._execution_engine
        if getattr(engine, "_kernlens", False):
            return
        model = self

        class _Engine:
            """Forwards everything to the C++ engine; marks the thread as inside backward."""
            _kernlens = True

            def __getattr__(self, name):
                return getattr(engine, name)

            def run_backward(self, *a, **k):
                outer = not model.in_backward()
                token = model._start_profiler() if outer else None
                if outer:
                    with model.lock:
                        model.tls.pass_id = model.passes
                        model.passes += 1
                model.tls.depth = getattr(model.tls, "depth", 0) + 1
                # A TorchFunctionMode is off while its handler runs (Tensor.backward reaches the
                # engine from inside it): forward calls re-run in backward (checkpointing) are
                # seen only under a mode entered again here.
                mode = model.function_mode() if threading.current_thread() is threading.main_thread() else None
                try:
                    if mode is None:
                        return engine.run_backward(*a, **k)
                    with mode:
                        return engine.run_backward(*a, **k)
                finally:
                    model.tls.depth -= 1
                    if outer:
                        model._stop_profiler(token)
                    with model.lock:
                        model.backward_calls += 1

        self._orig_engine = engine
        Variable._execution_engine = _Engine()
        self._install_function_apply()

    def _install_function_apply(self):
        """Times Function.apply of custom autograd Functions and tags the nodes it creates."""
        if not self.seq_ranges:
            return
        import torch
        fn = torch.autograd.Function
        if fn.__dict__.get("_kernlens_wrapped"):
            return
        # PyTorch 2.x defines Function.apply itself (wrapping _FunctionBase.apply for functorch);
        # 1.x only has _FunctionBase.apply. Wrap whichever a Function subclass reaches.
        own = fn.__dict__.get("apply")
        raw = own if own is not None else torch._C._FunctionBase.__dict__.get("apply")
        if raw is None:  # another version's layout
            return
        model = self

        def apply(cls, *args, **kwargs):
            t0 = time.monotonic_ns()
            out = raw.__get__(None, cls)(*args, **kwargs)
            if torch.is_grad_enabled():
                try:
                    # A Function standing for an ATen op names its range as emit_nvtx names the op.
                    model._tag(out, getattr(cls, "_kernlens_call_name", cls.__name__), t0, time.monotonic_ns())
                except Exception as e:  # never break the program
                    model._error("tagging", e)
            return out
        self._own_apply = own
        fn.apply = classmethod(apply)
        fn._kernlens_wrapped = True
        self._apply_installed = True

    def uninstall(self):
        if self._apply_installed:
            import torch
            fn = torch.autograd.Function
            if self._own_apply is None:
                del fn.apply  # back to _FunctionBase.apply
            else:
                fn.apply = self._own_apply
            del fn._kernlens_wrapped
            self._apply_installed = False
        if self._orig_engine is not None:
            from torch.autograd.variable import Variable
            Variable._execution_engine = self._orig_engine
            self._orig_engine = None

    # ---- forward calls: which created which node ----------------------------------------------
    def function_mode(self):
        """A TorchFunctionMode instance for this thread (enter it like the dispatch mode)."""
        if not self.seq_ranges:
            return None
        if self._fmode_cls is None:
            import torch
            from torch.overrides import TorchFunctionMode
            model = self

            class _KernlensAutogradMode(TorchFunctionMode):
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    # The emulator's placement wrappers (Tensor.to, factories) reach here from
                    # inside themselves: run the raw op, not the wrapper a second time.
                    func = getattr(func, "_kernlens_raw", func)
                    t0 = time.monotonic_ns()
                    out = func(*args, **(kwargs or {}))
                    if torch.is_grad_enabled() and not getattr(model.tls, "untagged", 0):
                        try:
                            model._tag(out, _call_name(func), t0, time.monotonic_ns())
                        except Exception as e:  # never break the program
                            model._error("tagging", e)
                    return out
            self._fmode_cls = _KernlensAutogradMode
        return self._fmode_cls()

    def untagged(self, fn, *args, **kwargs):
        """fn(*args) without forward ranges for the nodes its torch calls create (an op the
        emulator models as one, whose CPU decomposition must not look like separate ops)."""
        self.tls.untagged = getattr(self.tls, "untagged", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            self.tls.untagged -= 1

    def _error(self, what, e):
        with self.lock:
            if len(self.errors) < 8:
                self.errors.append("%s: %s: %s" % (what, type(e).__name__, e))

    def _tag(self, out, name, t0, t1):
        import torch
        if isinstance(out, torch.Tensor):
            roots = [out.grad_fn]
        elif isinstance(out, (tuple, list)):
            roots = [t.grad_fn for t in out if isinstance(t, torch.Tensor)]
        else:
            return
        todo = [n for n in roots if n is not None]
        if not todo:
            return
        tid = AUTOGRAD_TID if self.in_backward() else threading.get_native_id()
        idx = None
        while todo:
            node = todo.pop()
            meta = node.metadata
            if _TAG in meta or node.name() == "torch::autograd::AccumulateGrad":
                continue
            if idx is None:
                with self.lock:
                    idx = len(self.calls)
                    self.calls.append((tid, t0, t1, name))
            meta[_TAG] = idx
            self._hook(node, idx)
            todo.extend(n for n, _ in node.next_functions if n is not None)

    def _hook(self, node, idx):
        model = self
        seq = _sequence_nr(node)

        def pre(*_a):
            stack = getattr(model.tls, "nodes", None)
            if stack is None:
                stack = model.tls.nodes = []
            stack.append(time.monotonic_ns())

        def post(*_a):
            t = time.monotonic_ns()
            stack = getattr(model.tls, "nodes", None)
            if not stack:
                return
            p = stack.pop()
            with model.lock:
                model.windows.append((idx, node_name, seq, getattr(model.tls, "pass_id", -1), p, t))

        node_name = node.name()
        node.register_prehook(pre)
        node.register_hook(post)

    # ---- backward node records (legacy CPU profiler, only while backward runs) ----------------
    def _start_profiler(self):
        if not self.seq_ranges:
            return None
        try:
            import torch.autograd as ta
            from torch.autograd import ProfilerConfig, ProfilerState
            try:
                from torch._C._profiler import _ExperimentalConfig
                cfg = ProfilerConfig(ProfilerState.CPU, False, False, False, False, False, _ExperimentalConfig())
            except (ImportError, TypeError):
                cfg = ProfilerConfig(ProfilerState.CPU, False, False, False, False, False)
            before = clock_offset()
            ta._enable_profiler_legacy(cfg)
            return min(before, clock_offset(), key=lambda o: o[1])
        except Exception as e:  # the program may run a profiler of its own: no ranges then
            self._error("sequence ranges off for one backward pass", e)
            return None

    def _stop_profiler(self, token):
        if token is None:
            return
        try:
            import torch.autograd as ta
            evs = ta._disable_profiler_legacy()
        except Exception as e:
            self._error("sequence ranges lost", e)
            return
        offset, bracket = min(token, clock_offset(), key=lambda o: o[1])
        # Keep only node records now (the event objects are big): (name, seq, start, end) in
        # realtime ns; ranges() maps them onto the monotonic timeline.
        nodes = []
        for per_thread in evs:
            open_ = {}
            # start_us() is a double of realtime us: ~0.25 us steps, enough to give a node and
            # its engine wrapper the same start. Times relative to the thread's first event keep
            # their ns order; one rounding of the anchor shifts them all alike.
            anchor = per_thread[0] if per_thread else None
            base = int(round(anchor.start_us() * 1000)) if anchor is not None else 0

            def at(e):
                try:
                    return base + int(round(anchor.cpu_elapsed_us(e) * 1000))
                except Exception:  # a PyTorch without cpu_elapsed_us
                    return int(round(e.start_us() * 1000))
            for e in per_thread:
                kind = e.kind()
                if kind == "push":
                    if is_backward_node(e.name()):
                        open_[e.handle()] = e
                elif kind == "pop":
                    p = open_.pop(e.handle(), None)
                    if p is not None:
                        nodes.append((p.name(), p.sequence_nr(), at(p), at(e)))
        with self.lock:
            self.profiles.append((getattr(self.tls, "pass_id", -1), offset, bracket, nodes))

    # ---- export --------------------------------------------------------------------------------
    def ranges(self, gtid):
        """NVTX push/pop rows (emulator dicts): backward nodes on AUTOGRAD_TID, and one
        "aten::<call>, seq = N" range per numbered node over the forward call that created it."""
        with self.lock:
            profiles = [(pid, off, br, list(nodes)) for pid, off, br, nodes in self.profiles]
            windows = sorted(self.windows, key=lambda w: (w[4], w[5], w[0]))
            calls = list(self.calls)
        rows = []
        placed = []  # (name, seq, start, end) on the monotonic timeline, every pass
        for pid, offset, _bracket, recs in profiles:
            offset = self._checked_offset(offset, recs, [w for w in windows if w[3] == pid])
            placed.extend((name, seq, start + offset, end + offset) for name, seq, start, end in recs)
        placed.sort(key=lambda n: (n[2], n[3], n[1], n[0]))
        for name, seq, start, end in placed:
            rows.append({"start": start, "end": max(start, end), "eventType": 59, "text": nvtx_text(name, seq),
                         "globalTid": gtid(AUTOGRAD_TID), "domainId": 0})
        # The node's own number where this PyTorch has it; else (older releases) the record of the
        # same name whose start is nearest to the pre hook (the hooks run just outside the node's
        # RecordFunction; records of one name are far further apart than the clocks disagree).
        ran = {(name, seq) for name, seq, _s, _e in placed}
        by_name = {}
        for name, seq, start, _end in placed:
            by_name.setdefault(name, []).append((start, seq))
        written = set()
        for idx, name, seq, _pid, pre, post in windows:
            if seq is None:
                recs = by_name.get(name)
                if not recs:
                    continue
                i = bisect.bisect_left(recs, (pre, -2))
                best = None
                for j in (i - 1, i):
                    if 0 <= j < len(recs) and pre - 5000 <= recs[j][0] <= post + 5000:
                        if best is None or abs(recs[j][0] - pre) < abs(best[0] - pre):
                            best = recs[j]
                seq = best[1] if best is not None else -1
            elif (name, seq) not in ran:
                seq = -1  # no record of it: the profiler was off for this pass
            if seq < 0 or (idx, seq) in written:
                continue
            written.add((idx, seq))
            tid, t0, t1, cname = calls[idx]
            rows.append({"start": t0, "end": t1, "eventType": 59, "text": nvtx_text(cname, seq),
                         "globalTid": gtid(tid), "domainId": 0})
        return rows

    @staticmethod
    def _checked_offset(offset, recs, windows):
        """The measured offset, moved into the bounds the pass's hook windows put on it: for a
        node with a window [pre, post] (monotonic) and its record [start, end] (realtime),
        pre <= start + offset and end + offset <= post. Bounds that contradict each other (a
        clock stepped during the pass) leave the measurement as it is."""
        at = {}
        for name, seq, start, end in recs:
            if seq >= 0:
                at.setdefault((name, seq), []).append((start, end))
        lo, hi = None, None
        for _idx, name, seq, _pid, pre, post in windows:
            got = at.get((name, seq)) if seq is not None else None
            if not got or len(got) != 1:  # unknown, or run twice in the pass: not one record
                continue
            start, end = got[0]
            lo = pre - start if lo is None else max(lo, pre - start)
            hi = post - end if hi is None else min(hi, post - end)
        if lo is None:
            return offset
        lo -= _PAIR_SLACK_NS
        hi += _PAIR_SLACK_NS
        if lo > hi:
            return offset
        return min(max(offset, lo), hi)
