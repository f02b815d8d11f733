"""The emulate backend: real PyTorch on CPU, an emulated GPU timeline, an nsys-schema export.

Every ATen op the program runs is observed by a TorchDispatchMode on the thread that runs it
(the mode is entered on the main thread and on every thread started through `threading`).
kernel_table turns the op into the launches a CUDA build would issue; each launch gets
  * a CUPTI_ACTIVITY_KIND_RUNTIME row (cudaLaunchKernel_v7000 / cudaMemcpyAsync_v3020) on the
    CALLING thread, inside the real CPU interval of the op (so NVTX ranges open around the op
    contain it), with a per-process correlationId;
  * a CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY row on stream 7 of device 0 whose duration comes from
    roofline.kernel_ns and whose start is max(launch end + queue latency, previous end on the
    stream) - a single in-order stream, like PyTorch's default stream.
NVTX push/pop (eventType 59), start/end (60) and marks (34) come from the instrumented code through
nvtx_provider's Tee, with real CPU timestamps (CLOCK_MONOTONIC, ns), on the calling thread.

Tensors that a GPU program would keep on the host are tracked and launch nothing: outputs of
torch.tensor(...) (aten::lift_fresh) and of ops whose tensor inputs are all such host tensors
(e.g. the optimizer's step counters and their .item()). Ops run by torch's own profiler
bookkeeping (record_function) are ignored.
"""

import collections
import datetime
import os
import sys
import threading
import time
import weakref

from . import EMULATED_PRODUCT_VERSION, __version__
from . import autograd, kernel_table, nsys_writer, nvtx_provider, roofline

# torch.* factories: without device= they make host tensors in a GPU program.
FACTORIES = ("empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange",
             "linspace", "logspace", "eye", "empty_strided", "tensor", "as_tensor", "scalar_tensor",
             "normal", "bernoulli")

STREAM_ID = kernel_table.STREAM_ID  # the one in-order stream every launch is on (kernel_table.json "stream")
DEVICE_ID = 0
CONTEXT_ID = 1
API_KERNEL = "cudaLaunchKernel_v7000"
API_MEMCPY = "cudaMemcpyAsync_v3020"


def _os_thread_name(tid):
    try:
        with open("/proc/self/task/%d/comm" % tid) as f:
            return f.read().strip()
    except OSError:
        return None


class HostSet:
    """Identity set of tensors a GPU program would keep on the host (weak; never calls __eq__)."""

    def __init__(self):
        self._refs = {}

    def add(self, t):
        key = id(t)
        try:
            self._refs[key] = weakref.ref(t, lambda _r, key=key: self._refs.pop(key, None))
        except TypeError:
            pass

    def discard(self, t):
        ref = self._refs.get(id(t))
        if ref is not None and ref() is t:
            del self._refs[id(t)]

    def __contains__(self, t):
        ref = self._refs.get(id(t))
        return ref is not None and ref() is t


class Emulator:
    def __init__(self, spec, argv=(), role="main", seq_ranges=True):
        self.spec = spec
        self.autograd = autograd.AutogradModel(seq_ranges)
        self._fmode = None
        self.argv = list(argv)
        self.role = role
        self.pid = os.getpid()
        self.gpid = nsys_writer.global_pid(self.pid)
        self.t_start = time.monotonic_ns()
        self.utc_start = time.time_ns()
        self.lock = threading.Lock()
        self.strings = {}
        self.threads = {}
        self.stacks = collections.defaultdict(list)
        self.nvtx = []
        self.open_ranges = {}
        self.runtime = []
        self.kernels = []
        self.memcpys = []
        self.corr = 0
        self.grid_id = 0
        self.stream_free = 0
        self.unmodelled = collections.Counter()
        self.families = collections.Counter()
        self.errors = collections.Counter()
        self.host = HostSet()
        self.lowp = HostSet()  # outputs of ops a GPU's autocast ran in 16 bits (their GPU dtype)
        self.tls = threading.local()
        self.main_tid = threading.get_native_id() if threading.current_thread() is threading.main_thread() else None
        self.status = "complete"
        self._mode_cls = None
        self._main_mode = None
        self._orig_bootstrap = None

    # ---- ids and strings ----------------------------------------------------------------------
    def sid(self, value):
        sid = self.strings.get(value)
        if sid is None:
            sid = len(self.strings) + 1
            self.strings[value] = sid
        return sid

    def _thread(self):
        tid = threading.get_native_id()
        if tid not in self.threads:
            cur = threading.current_thread()
            name = _os_thread_name(tid) if cur is threading.main_thread() else None
            self.threads[tid] = name or cur.name or "thread-%d" % tid
        return tid

    def gtid(self, tid):
        return nsys_writer.global_tid(self.pid, tid)

    # ---- NVTX listener (nvtx_provider.Tee) -----------------------------------------------------
    def _range_thread(self):
        """The thread a range call is recorded on: the autograd thread while this thread runs a
        backward pass (code re-run there, e.g. an activation-checkpointed forward, pushes its
        ranges on pt_autograd_0 in CUDA PyTorch), else the calling thread (lock held)."""
        if self.autograd.in_backward():
            self.threads.setdefault(autograd.AUTOGRAD_TID, autograd.AUTOGRAD_THREAD_NAME)
            return autograd.AUTOGRAD_TID
        return self._thread()

    def on_push(self, msg):
        t = time.monotonic_ns()
        with self.lock:
            tid = self._range_thread()
            self.stacks[tid].append((msg, t))

    def on_pop(self):
        t = time.monotonic_ns()
        with self.lock:
            tid = self._range_thread()
            stack = self.stacks[tid]
            if not stack:  # pop without push: NVTX ignores it, so do we
                return
            msg, start = stack.pop()
            self.nvtx.append({"start": start, "end": t, "eventType": 59, "text": msg,
                              "globalTid": self.gtid(tid), "domainId": 0})

    def on_start(self, msg, rid):
        t = time.monotonic_ns()
        with self.lock:
            self.open_ranges[rid] = (msg, t, self._range_thread())

    def on_end(self, rid):
        t = time.monotonic_ns()
        with self.lock:
            tid = self._range_thread()
            opened = self.open_ranges.pop(rid, None)
            if opened is None:
                return
            msg, start, start_tid = opened
            self.nvtx.append({"start": start, "end": t, "eventType": 60, "rangeId": rid, "text": msg,
                              "globalTid": self.gtid(start_tid),
                              "endGlobalTid": self.gtid(tid) if tid != start_tid else None, "domainId": 0})

    def on_mark(self, msg):
        t = time.monotonic_ns()
        with self.lock:
            tid = self._range_thread()
            self.nvtx.append({"start": t, "eventType": 34, "text": msg, "globalTid": self.gtid(tid),
                              "domainId": 0})

    # ---- ops -----------------------------------------------------------------------------------
    def on_op(self, func, args, kwargs, out, t0, t1):
        if getattr(self.tls, "suppress", 0):
            return
        op = kernel_table.Op(func, args, kwargs, out, self.spec, _allow_tf32())
        region = self.cuda_autocast() if op.name in kernel_table.AUTOCAST_LOWER else None
        casts = []
        if region is not None and not self.autograd.in_backward():
            dtype, cache = region
            op.autocast_dtype = dtype
            casts = kernel_table.autocast_casts(op, dtype, cache, already=self.lowp)
            for t in op.outputs:
                self.lowp.add(t)
        if (op.name in ("lift_fresh", "lift", "lift_fresh_copy")
                or (getattr(self.tls, "host_factory", 0) and not op.inputs)):
            for t in op.outputs:
                self.host.add(t)
            return
        if op.inputs and all(t in self.host for t in op.inputs):
            for t in op.outputs:
                self.host.add(t)
            return
        if op.name == "copy_" and len(op.inputs) >= 2:
            dst, src = op.args[0], op.args[1]
            if src in self.host and dst not in self.host:
                op.copy_direction = "HtoD"
            elif dst in self.host and src not in self.host:
                op.copy_direction = "DtoH"
        launches, modelled = kernel_table.launches_for(op)
        launches = casts + launches
        key = "%s::%s" % (op.namespace, op.name)
        with self.lock:
            if not modelled:
                self.unmodelled[key] += 1
            if launches:
                self.families[kernel_table.family(op.name) or "unmodelled"] += 1
                self._emit(launches, t0, t1)

    def transfer(self, tensor, direction):
        """A host<->device copy the program would do here (Tensor.to/.cuda/.cpu, torch.tensor)."""
        nb = tensor.numel() * tensor.element_size()
        la = (kernel_table.memcpy(nb, kernel_table.HTOD, kernel_table.PAGEABLE, kernel_table.DEVICE)
              if direction == "HtoD" else
              kernel_table.memcpy(nb, kernel_table.DTOH, kernel_table.DEVICE, kernel_table.PAGEABLE))
        t = time.monotonic_ns()
        with self.lock:
            self.families["copy"] += 1
            self._emit([la], t - roofline.LAUNCH_CALL_NS, t)

    def _emit(self, launches, t0, t1):
        """Launch rows on the calling thread (the autograd thread during a backward pass) inside
        [t0, t1], GPU rows on the stream (lock held)."""
        tid = self._range_thread()
        gtid = self.gtid(tid)
        n = len(launches)
        step = max(1, min(roofline.LAUNCH_CALL_NS, (t1 - t0) // n))
        for i, la in enumerate(launches):
            start = t1 - (n - i) * step
            end = start + step
            self.corr += 1
            corr = self.corr
            self.runtime.append({"start": start, "end": end, "eventClass": 0, "globalTid": gtid,
                                 "correlationId": corr,
                                 "nameId": self.sid(API_MEMCPY if la.kind == "memcpy" else API_KERNEL),
                                 "returnValue": 0})
            dur = roofline.kernel_ns(self.spec, la)
            gstart = max(end + roofline.QUEUE_LATENCY_NS, self.stream_free)
            gend = gstart + dur
            self.stream_free = gend
            common = {"start": gstart, "end": gend, "deviceId": DEVICE_ID, "contextId": CONTEXT_ID,
                      "streamId": STREAM_ID, "correlationId": corr, "globalPid": self.gpid}
            if la.kind == "memcpy":
                common.update({"bytes": int(la.bytes), "copyKind": la.copy_kind, "srcKind": la.src_kind,
                               "dstKind": la.dst_kind, "srcDeviceId": DEVICE_ID, "dstDeviceId": DEVICE_ID,
                               "srcContextId": CONTEXT_ID, "dstContextId": CONTEXT_ID, "copyCount": 1})
                self.memcpys.append(common)
                continue
            self.grid_id += 1
            common.update({"demangledName": self.sid(la.demangled), "shortName": self.sid(la.short),
                           "launchType": 0, "cacheConfig": 0, "registersPerThread": la.regs,
                           "gridX": la.grid[0], "gridY": la.grid[1], "gridZ": la.grid[2],
                           "blockX": la.block[0], "blockY": la.block[1], "blockZ": la.block[2],
                           "staticSharedMemory": la.smem_static, "dynamicSharedMemory": la.smem_dynamic,
                           "localMemoryPerThread": 0, "localMemoryTotal": 0, "gridId": self.grid_id,
                           "sharedMemoryExecuted": la.smem_static + la.smem_dynamic,
                           "sharedMemoryLimitConfig": 0, "tensorSizeMinusOneElements": "[]"})
            self.kernels.append(common)

    def internal_error(self, err):
        with self.lock:
            first = not self.errors
            self.errors["%s: %s" % (type(err).__name__, err)] += 1
        if first:
            sys.stderr.write("kernlens-probe: warning: emulator could not model an op (%s: %s); "
                             "continuing\n" % (type(err).__name__, err))

    # ---- activation ----------------------------------------------------------------------------
    def activate(self):
        """Enter the dispatch mode on this thread and on every thread started from now on."""
        from torch.utils._python_dispatch import TorchDispatchMode
        import torch.autograd.profiler as tap
        emu = self

        class _KernlensEmulateMode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                t0 = time.monotonic_ns()
                fallback = CPU_FALLBACKS.get(func.overloadpacket.__name__)
                out = fallback(*args, **kwargs) if fallback is not None else func(*args, **kwargs)
                t1 = time.monotonic_ns()
                try:
                    emu.on_op(func, args, kwargs, out, t0, t1)
                except Exception as e:  # never break the user's program
                    emu.internal_error(e)
                return out

        self._mode_cls = _KernlensEmulateMode
        nvtx_provider.add_listener(self)
        self._main_mode = _KernlensEmulateMode()
        self._main_mode.__enter__()
        if self.main_tid is None:
            self.main_tid = threading.get_native_id()

        orig = threading.Thread._bootstrap_inner
        self._orig_bootstrap = orig

        def _bootstrap_inner(thread):
            mode = None
            try:
                mode = emu._mode_cls()
                mode.__enter__()
            except Exception:
                mode = None
            try:
                orig(thread)
            finally:
                if mode is not None:
                    try:
                        mode.__exit__(None, None, None)
                    except Exception:
                        pass

        threading.Thread._bootstrap_inner = _bootstrap_inner

        self._patch_placement()
        self._patch_optimizer_defaults()
        self._patch_cuda_autocast()
        self._patch_rnn()
        self._patch_rnn_cells()
        self.autograd.install()
        self._fmode = self.autograd.function_mode()
        if self._fmode is not None:
            self._fmode.__enter__()
            self._patch_fast_paths()

        # torch's own profiler bookkeeping (record_function handles) is host work, not GPU work.
        rf = tap.record_function
        for name in ("__init__", "__enter__", "__exit__"):
            orig_m = getattr(rf, name, None)
            if orig_m is None or getattr(orig_m, "_kernlens", False):
                continue

            def wrapped(self_, *a, _orig=orig_m, **k):
                emu.tls.suppress = getattr(emu.tls, "suppress", 0) + 1
                try:
                    return _orig(self_, *a, **k)
                finally:
                    emu.tls.suppress -= 1
            wrapped._kernlens = True
            setattr(rf, name, wrapped)

    def _patch_placement(self):
        """Where a GPU program would keep tensors: factory calls without device= make host
        tensors; Tensor.to(<device>)/.cuda() of a host tensor is an HtoD copy (the tensor becomes a
        device tensor); .cpu() of a device tensor is a DtoH copy. Under emulation the configured
        device is usually "cpu", so any explicit device means "the GPU" except .cpu()."""
        import torch
        emu = self

        torch_dir = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep

        def library_host(device):
            """True for a factory call made by torch's own Python code with the literal device
            "cpu" (a string): that tensor stays on the host in a GPU run too, e.g. the
            optimizers' step counters (`torch.tensor(0.0, device="cpu")`) and the foreach step
            increment (`torch.tensor(1.0, device="cpu")`). A device taken from a tensor
            (`device=p.device`) is a torch.device, and the program's own calls name its configured
            device, which under emulation is usually "cpu" and means the GPU."""
            if not (isinstance(device, str) and device.split(":")[0] == "cpu"):
                return False
            f = sys._getframe(2)
            return os.path.realpath(f.f_code.co_filename).startswith(torch_dir)

        def factory(orig, copies_data):
            def wrapped(*a, **k):
                if any(isinstance(x, torch.Tensor) for x in a):  # e.g. torch.normal(mean_tensor)
                    return orig(*a, **k)
                if k.get("device") is not None and not library_host(k.get("device")):
                    out = orig(*a, **k)
                    if copies_data and isinstance(out, torch.Tensor):
                        emu.transfer(out, "HtoD")
                    return out
                emu.tls.host_factory = getattr(emu.tls, "host_factory", 0) + 1
                try:
                    out = orig(*a, **k)
                finally:
                    emu.tls.host_factory -= 1
                if isinstance(out, torch.Tensor):
                    emu.host.add(out)
                return out
            wrapped._kernlens = True
            wrapped._kernlens_raw = orig
            wrapped.__name__ = getattr(orig, "__name__", "factory")
            wrapped.__doc__ = getattr(orig, "__doc__", None)
            return wrapped

        for name in FACTORIES:
            orig = getattr(torch, name, None)
            if orig is not None and not getattr(orig, "_kernlens", False):
                setattr(torch, name, factory(orig, name in ("tensor", "as_tensor")))

        def moved(self_, out, to_host):
            if not isinstance(out, torch.Tensor):
                return out
            if to_host:
                if self_ not in emu.host:
                    emu.transfer(self_, "DtoH")
                emu.host.add(out)
            elif self_ in emu.host or (out is not self_ and out in emu.host):
                emu.transfer(self_, "HtoD")
                emu.host.discard(self_)
                emu.host.discard(out)
            return out

        # nn.Parameter(t) is a new Python object over t's data, created outside the dispatcher.
        param_new = torch.nn.Parameter.__new__
        if not getattr(param_new, "_kernlens", False):
            def parameter_new(cls, data=None, requires_grad=True):
                p = param_new(cls, data, requires_grad)
                if data is not None and data in emu.host:
                    emu.host.add(p)
                return p
            parameter_new._kernlens = True
            torch.nn.Parameter.__new__ = staticmethod(parameter_new)

        orig_to, orig_cpu = torch.Tensor.to, torch.Tensor.cpu

        def to(self_, *a, **k):
            out = orig_to(self_, *a, **k)
            dev = k.get("device")
            for x in a:
                if isinstance(x, (str, torch.device)):
                    dev = x
                elif isinstance(x, torch.Tensor):
                    dev = x.device
            if dev is None:
                return out
            return moved(self_, out, to_host=False)

        def cuda(self_, *a, **k):
            return moved(self_, self_, to_host=False)  # CPU builds cannot run .cuda(): stay put

        def cpu(self_, *a, **k):
            return moved(self_, orig_cpu(self_, *a, **k), to_host=True)

        if not getattr(torch.Tensor.to, "_kernlens", False):
            for fn in (to, cuda, cpu):
                fn._kernlens = True
            # What a __torch_function__ handler must call instead (the wrapper already ran).
            to._kernlens_raw, cpu._kernlens_raw = orig_to, orig_cpu
            cuda._kernlens_raw = lambda self_, *a, **k: self_
            torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu = to, cuda, cpu

    def _patch_optimizer_defaults(self):
        """torch.optim picks its implementation from the parameters' device
        (optimizer._default_to_fused_or_foreach): on CUDA the foreach (multi-tensor) one by default,
        on CPU the per-tensor loop. Under emulation the parameters are device tensors on the CPU, so
        the choice is made as CUDA PyTorch makes it: fused when asked for (fused=True) and every
        parameter is a floating-point tensor of a supported type, else foreach when every parameter
        has a supported type. Host parameters and differentiable/scripted runs keep torch's own
        answer. Applied to every torch.optim module that imported the function."""
        import torch
        import torch.optim.optimizer as optimizer_mod
        emu = self
        orig = getattr(optimizer_mod, "_default_to_fused_or_foreach", None)
        if orig is None or getattr(orig, "_kernlens", False):
            return
        supported = getattr(optimizer_mod, "_foreach_supported_types", (torch.Tensor, torch.nn.Parameter))

        def default_to_fused_or_foreach(params, differentiable, use_fused=False):
            fused, foreach = orig(params, differentiable, use_fused)
            if fused or foreach or differentiable or torch.jit.is_scripting():
                return fused, foreach
            present = [p for p in params if p is not None]
            if any(p.device.type != "cpu" or p in emu.host for p in present):
                return fused, foreach
            if not all(type(p) in supported for p in present):
                return fused, foreach
            fused = bool(use_fused) and all(torch.is_floating_point(p) for p in present)
            return fused, not fused
        default_to_fused_or_foreach._kernlens = True
        default_to_fused_or_foreach._kernlens_raw = orig
        self._optim_patched = {}
        for name, mod in list(sys.modules.items()):
            if (name == "torch.optim" or name.startswith("torch.optim.")) and \
                    getattr(mod, "_default_to_fused_or_foreach", None) is orig:
                self._optim_patched[name] = orig
                setattr(mod, "_default_to_fused_or_foreach", default_to_fused_or_foreach)

    # ---- autocast ------------------------------------------------------------------------------
    def _patch_cuda_autocast(self):
        """torch.autocast("cuda", dtype) on a machine without CUDA disables itself (with torch's
        own warning, shown on the user's line by warn_location), so the program computes in its own dtypes, as it does without kernlens. A
        GPU would run the autocast-listed ops (GEMMs, convolutions, attention) in `dtype` after
        casting their fp32 inputs: the emulator names and times those launches in `dtype` and
        emits the casts (weights cast once per autocast region, autocast's cache), while the
        program's numbers stay its own. Nested regions, enabled=False and the decorator form
        follow the context manager's enter/exit on each thread."""
        import torch
        cls = getattr(getattr(torch, "amp", None), "autocast_mode", None)
        cls = getattr(cls, "autocast", None)
        if cls is None or getattr(cls.__init__, "_kernlens", False):
            return
        emu = self
        orig_init, orig_enter, orig_exit = cls.__init__, cls.__enter__, cls.__exit__

        def __init__(self_, device_type, dtype=None, enabled=True, cache_enabled=None):
            # torch's "CUDA is not available. Disabling" names this wrapper (stacklevel=2);
            # warn_location moves it to the user's line, as a plain run shows it.
            orig_init(self_, device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
            want = None
            if device_type == "cuda" and enabled and not torch.cuda.is_available():
                want = dtype if dtype is not None else torch.float16  # CUDA autocast's default
            self_._kernlens_cuda_dtype = want

        def __enter__(self_):
            stack = emu.tls.__dict__.setdefault("autocast", [])
            want = getattr(self_, "_kernlens_cuda_dtype", None)
            if getattr(self_, "device", None) == "cuda":
                stack.append((want, {}))  # (dtype or None: a disabled region, weight-cast cache)
            return orig_enter(self_)

        def __exit__(self_, *exc):
            try:
                return orig_exit(self_, *exc)
            finally:
                stack = emu.tls.__dict__.get("autocast")
                if getattr(self_, "device", None) == "cuda" and stack:
                    stack.pop()
        for f in (__init__, __enter__, __exit__):
            f._kernlens = True
        self._autocast_patched = (cls, orig_init, orig_enter, orig_exit)
        cls.__init__, cls.__enter__, cls.__exit__ = __init__, __enter__, __exit__

    def cuda_autocast(self):
        """(dtype, weight cache) of the innermost emulated CUDA autocast region on this thread, or
        None outside one (or inside autocast(enabled=False))."""
        stack = self.tls.__dict__.get("autocast")
        if not stack or stack[-1][0] is None:
            return None
        return stack[-1]

    # ---- cuDNN RNNs ------------------------------------------------------------------------------
    def _patch_rnn(self):
        """nn.LSTM/GRU/RNN call torch._VF.<lstm|gru|rnn_tanh|rnn_relu>: CUDA PyTorch runs that as
        one cuDNN op (aten::_cudnn_rnn; aten::_cudnn_rnn_backward in backward), CPU PyTorch as
        many small ops. The call runs for real on CPU with its small ops silenced, and the cuDNN
        launches (kernel_table.RnnCall) are emitted over its interval; with autograd, through a
        Function whose backward runs the real CPU gradient (silenced too) and emits the cuDNN
        backward launches in its node's apply, so they link to the forward call like any op's."""
        import torch
        from torch import _VF
        emu = self
        self._rnn_patched = getattr(self, "_rnn_patched", {})

        class CudnnRnn(torch.autograd.Function):
            _kernlens_call_name = "aten::_cudnn_rnn"  # the op CUDA PyTorch's autograd node belongs to

            @staticmethod
            def forward(ctx, job, *tensors):
                inner = [t.detach().requires_grad_() if t.requires_grad else t for t in tensors]
                t0 = time.monotonic_ns()
                # The silenced small ops create autograd nodes of their own that must not get
                # emit_nvtx forward ranges (only this node has one).
                with torch.enable_grad():
                    outs = emu._silenced(emu.autograd.untagged, job["orig"], *job["rebuild"](inner))
                emu._emit_rnn(lambda: emu._rnn_forward_launches(job["call"]), t0)
                ctx.job, ctx.inner, ctx.outs = job, inner, outs
                ctx.need = [i for i, t in enumerate(tensors) if t.requires_grad]
                ctx.count = len(tensors)
                return tuple(o.detach() for o in outs)

            @staticmethod
            def backward(ctx, *grads):
                t0 = time.monotonic_ns()
                need = [ctx.inner[i] for i in ctx.need]
                got = emu._silenced(torch.autograd.grad, ctx.outs, need, grads, allow_unused=True)
                emu._emit_rnn(ctx.job["call"].backward_launches, t0)
                ctx.inner = ctx.outs = None
                res = [None] * ctx.count
                for i, g in zip(ctx.need, got):
                    res[i] = g
                return (None,) + tuple(res)

        def wrap(name, orig):
            def wrapped(*args, **kwargs):
                call = None
                if not kwargs and not getattr(emu.tls, "suppress", 0):
                    try:
                        call = kernel_table.rnn_call(name, args, emu.spec, _allow_tf32())
                    except Exception as e:  # never break the program
                        emu.internal_error(e)
                if call is None or call.x in emu.host:
                    return orig(*args, **kwargs)
                # The tensors of the call, flat, and how to put them back into its arguments.
                slots = []
                for i, a in enumerate(args):
                    if isinstance(a, torch.Tensor):
                        slots.append((i, None))
                    elif isinstance(a, (list, tuple)):
                        slots.extend((i, j) for j in range(len(a)))
                tensors = [args[i] if j is None else args[i][j] for i, j in slots]

                def rebuild(flat):
                    out = [list(a) if isinstance(a, (list, tuple)) else a for a in args]
                    for (i, j), t in zip(slots, flat):
                        if j is None:
                            out[i] = t
                        else:
                            out[i][j] = t
                    return out
                with emu.lock:
                    emu.families["rnn"] += 1
                if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
                    t0 = time.monotonic_ns()
                    out = emu._silenced(orig, *args)
                    emu._emit_rnn(lambda: emu._rnn_forward_launches(call), t0)
                    return out
                t0 = time.monotonic_ns()
                job = {"orig": orig, "rebuild": rebuild, "call": call}
                out = CudnnRnn.apply(job, *tensors)
                try:  # emit_nvtx's forward range for the node this call created
                    emu.autograd._tag(out, CudnnRnn._kernlens_call_name, t0, time.monotonic_ns())
                except Exception as e:
                    emu.internal_error(e)
                return out
            wrapped._kernlens = True
            wrapped.__name__ = name
            return wrapped

        for name in kernel_table.RNN_MODES:
            orig = getattr(_VF, name, None)
            if orig is None or getattr(orig, "_kernlens", False):
                continue
            self._rnn_patched[name] = orig
            setattr(_VF, name, wrap(name, orig))

    # ---- nn.LSTMCell / nn.GRUCell --------------------------------------------------------------
    def _patch_rnn_cells(self):
        """torch._VF.lstm_cell / gru_cell (nn.LSTMCell, nn.GRUCell) run the ATen ops CUDA PyTorch
        runs for them (RNN.cpp, the cell's GPU branch): igates = matmul(input, w_ih.t()),
        hgates = matmul(hx, w_hh.t()), then aten::_thnn_fused_lstm_cell / _thnn_fused_gru_cell
        with the biases. Autograd records the real nodes (MmBackward0, ThnnFusedLstmCellBackward0),
        and backward calls _thnn_fused_lstm_cell_backward_impl / _thnn_fused_gru_cell_backward
        (or, with create_graph, the differentiable composite). CPU PyTorch has no kernels for the
        fused ops: the dispatch mode computes them (CPU_FALLBACKS) and kernel_table models their
        launches like any op's."""
        import torch
        from torch import _VF
        self._cell_patched = getattr(self, "_cell_patched", {})
        emu = self
        aten = torch.ops.aten

        def usable(x, *tensors):
            return (not getattr(emu.tls, "suppress", 0) and isinstance(x, torch.Tensor) and x.dim() == 2
                    and x.is_floating_point() and x not in emu.host
                    and all(t is None or isinstance(t, torch.Tensor) for t in tensors))

        def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
            if not (isinstance(hx, (list, tuple)) and len(hx) == 2 and usable(input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)):
                return emu._cell_patched["lstm_cell"](input, hx, w_ih, w_hh, b_ih, b_hh)
            igates = torch.matmul(input, w_ih.t())
            hgates = torch.matmul(hx[0], w_hh.t())
            hy, cy, _ = aten._thnn_fused_lstm_cell(igates, hgates, hx[1], b_ih, b_hh)
            return hy, cy

        def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
            if not usable(input, hx, w_ih, w_hh, b_ih, b_hh):
                return emu._cell_patched["gru_cell"](input, hx, w_ih, w_hh, b_ih, b_hh)
            igates = torch.matmul(input, w_ih.t())
            hgates = torch.matmul(hx, w_hh.t())
            return aten._thnn_fused_gru_cell(igates, hgates, hx, b_ih, b_hh)[0]

        for name, fn in (("lstm_cell", lstm_cell), ("gru_cell", gru_cell)):
            orig = getattr(_VF, name, None)
            if orig is None or getattr(orig, "_kernlens", False):
                continue
            fn._kernlens = True
            self._cell_patched[name] = orig
            setattr(_VF, name, fn)

    def _patch_fast_paths(self):
        """nn.MultiheadAttention and nn.TransformerEncoder(Layer) take their fused inference fast
        paths (aten::_native_multi_head_attention, aten::_transformer_encoder_layer_fwd) only when
        torch.overrides.has_torch_function(args) is False, and any TorchFunctionMode (the
        emulator's autograd mode) makes it True. A GPU run has no such mode: answer as if ours were
        not there; tensor subclasses with a __torch_function__ of their own, and the program's
        own modes, still count."""
        import torch
        import torch.overrides as overrides
        orig = overrides.has_torch_function
        if getattr(orig, "_kernlens", False):
            return
        disabled = torch._C._disabled_torch_function_impl
        plain = (torch.Tensor, torch.nn.Parameter)

        def has_torch_function(args):
            if not orig(args):
                return False
            if torch._C._len_torch_function_stack() != 1 or not torch._C._is_torch_function_mode_enabled():
                return True  # the program's own mode (or none: a subclass made it True)
            for a in args:
                tf = getattr(type(a), "__torch_function__", None)
                if tf is None or type(a) in plain:
                    continue
                if getattr(tf, "__func__", tf) is not getattr(disabled, "__func__", disabled):
                    return True
            return False
        has_torch_function._kernlens = True
        self._orig_has_torch_function = orig
        overrides.has_torch_function = has_torch_function

    def _silenced(self, fn, *args, **kwargs):
        """fn(*args) with the dispatch mode emitting nothing for its ops."""
        self.tls.suppress = getattr(self.tls, "suppress", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            self.tls.suppress -= 1

    def _rnn_forward_launches(self, call):
        """The cuDNN launches of one RNN call's forward; the process's first call training with
        dropout also initialises the dropout state (PyTorch caches it per device)."""
        with self.lock:
            first = call.dropout_active and not getattr(self, "_dropout_state", False)
            if first:
                self._dropout_state = True
        return call.forward_launches(init_dropout_state=first)

    def _emit_rnn(self, build, t0):
        """Emits the launches `build()` makes for an RNN call that ran from t0 to now; a failure to
        model them is an internal error (reported, the call's launches missing), never the
        program's."""
        try:
            launches = build()
        except Exception as e:
            self.internal_error(e)
            return
        t1 = time.monotonic_ns()
        with self.lock:
            self._emit(launches, t0, max(t1, t0 + len(launches)))

    def deactivate(self):
        if getattr(self, "_orig_has_torch_function", None) is not None:
            import torch.overrides as overrides
            overrides.has_torch_function = self._orig_has_torch_function
            self._orig_has_torch_function = None
        for name in list(getattr(self, "_rnn_patched", {})):
            try:
                from torch import _VF
                delattr(_VF, name)
            except Exception:
                pass
        self._rnn_patched = {}
        for name in list(getattr(self, "_cell_patched", {})):
            try:
                from torch import _VF
                delattr(_VF, name)  # back to the module's __getattr__
            except Exception:
                pass
        self._cell_patched = {}
        for name, orig in getattr(self, "_optim_patched", {}).items():
            mod = sys.modules.get(name)
            if mod is not None:
                mod._default_to_fused_or_foreach = orig
        self._optim_patched = {}
        patched = getattr(self, "_autocast_patched", None)
        if patched is not None:
            cls, orig_init, orig_enter, orig_exit = patched
            cls.__init__, cls.__enter__, cls.__exit__ = orig_init, orig_enter, orig_exit
            self._autocast_patched = None
        if self._fmode is not None:
            try:
                self._fmode.__exit__(None, None, None)
            except Exception:
                pass
            self._fmode = None
        self.autograd.uninstall()
        if self._orig_bootstrap is not None:
            threading.Thread._bootstrap_inner = self._orig_bootstrap
            self._orig_bootstrap = None
        if self._main_mode is not None:
            try:
                self._main_mode.__exit__(None, None, None)
            except Exception:
                pass
            self._main_mode = None

    # ---- export --------------------------------------------------------------------------------
    def rows(self):
        with self.lock:
            stop = max([time.monotonic_ns(), self.stream_free] + [k["end"] for k in self.memcpys])
            nvtx = list(self.nvtx) + self.autograd.ranges(self.gtid)
            # Ranges never closed (exception inside `with torch.cuda.nvtx.range`, which does not
            # pop on error in torch <= 2.x): closed at capture end, as nsys 2022.4 does.
            for tid, stack in self.stacks.items():
                for msg, start in stack:
                    nvtx.append({"start": start, "end": stop, "eventType": 59, "text": msg,
                                 "globalTid": self.gtid(tid), "domainId": 0})
            for rid, (msg, start, tid) in self.open_ranges.items():
                nvtx.append({"start": start, "end": stop, "eventType": 60, "rangeId": rid, "text": msg,
                             "globalTid": self.gtid(tid), "domainId": 0})
            nvtx.sort(key=lambda r: (r["start"], -(r.get("end") or 0)))
            for tid in list(self.threads):
                self.sid(self.threads[tid])
            threads = [{"nameId": self.strings[name], "priority": 0, "globalTid": self.gtid(tid)}
                       for tid, name in sorted(self.threads.items())]
            if self.main_tid is not None and self.main_tid not in self.threads:
                name = _os_thread_name(self.main_tid) or "python3"
                threads.insert(0, {"nameId": self.sid(name), "priority": 0,
                                   "globalTid": self.gtid(self.main_tid)})
            spec = self.spec
            utc = datetime.datetime.fromtimestamp(self.utc_start / 1e9, datetime.timezone.utc)
            local = datetime.datetime.fromtimestamp(self.utc_start / 1e9)
            meta_export = [
                ("EXPORT_PRODUCT_VERSION", EMULATED_PRODUCT_VERSION),
                ("EXPORT_SCHEMA_VERSION", nsys_writer.SCHEMA_VERSION),
                ("EXPORT_SCHEMA_VERSION_MAJOR", "3"), ("EXPORT_SCHEMA_VERSION_MINOR", "25"),
                ("EXPORT_SCHEMA_VERSION_MICRO", "0"),
                ("EXPORT_PLATFORM", "kernlens-emulate"),
                ("EXPORT_TIME", datetime.datetime.now(datetime.timezone.utc).isoformat()),
                ("KERNLENS_EMULATED", "1"),
            ]
            capture = [
                ("KERNLENS_BACKEND", "emulate"), ("KERNLENS_EMULATED", "1"),
                ("KERNLENS_PROBE_VERSION", __version__), ("KERNLENS_GPU_MODEL", spec.key),
                ("KERNLENS_TORCH_VERSION", _torch_version()),
                ("KERNLENS_STATUS", self.status),
                ("KERNLENS_ROOFLINE", "eff_gemm=%g eff_simt=%g eff_memory=%g kernel_overhead_ns=%d "
                 "kernel_floor_ns=%d queue_latency_ns=%d launch_call_ns=%d" % (
                     roofline.EFF_GEMM, roofline.EFF_SIMT, roofline.EFF_MEMORY,
                     roofline.KERNEL_OVERHEAD_NS, roofline.KERNEL_FLOOR_NS,
                     roofline.QUEUE_LATENCY_NS, roofline.LAUNCH_CALL_NS)),
                ("KERNLENS_UNMODELLED_OPS", ";".join("%s=%d" % kv for kv in sorted(self.unmodelled.items()))),
                ("KERNLENS_EMULATOR_ERRORS", ";".join("%s x%d" % kv for kv in sorted(self.errors.items()))),
                ("KERNLENS_AUTOGRAD", "backward_thread=%s backward_calls=%d sequence_ranges=%s" % (
                    autograd.AUTOGRAD_THREAD_NAME, self.autograd.backward_calls,
                    "; ".join(self.autograd.errors) or ("on" if self.autograd.seq_ranges else "off"))),
                ("CAPTURE_EVENT_TYPE", "NvtxEvents"), ("CAPTURE_EVENT_TYPE", "Cuda"),
            ]
            for i, a in enumerate(self.argv):
                capture.append(("PROCESS_0:COMMAND" if i == 0 else "PROCESS_0:ARGUMENT_%d" % (i - 1), a))
            proc_name = os.path.basename(sys.executable or "python3")
            gpu = {"vmId": nsys_writer.VM_ID, "id": DEVICE_ID, "name": spec.name + " (emulated)",
                   "busLocation": "0000:00:00.0", "isDiscrete": 1, "l2CacheSize": spec.l2_bytes,
                   "totalMemory": spec.memory_bytes, "memoryBandwidth": int(spec.bandwidth),
                   "clockRate": spec.clock_hz, "smCount": spec.sm_count,
                   "uuid": "GPU-00000000-0000-0000-0000-kernlens%s" % spec.key, "chipName": spec.chip,
                   "cuDevice": 0, "threadsPerWarp": 32, "maxThreadsPerBlock": 1024, "maxBlockDimX": 1024,
                   "maxBlockDimY": 1024, "maxBlockDimZ": 64, "maxGridDimX": 2147483647,
                   "maxGridDimY": 65535, "maxGridDimZ": 65535, "maxRegistersPerBlock": 65536,
                   "maxRegistersPerSm": 65536, "maxShmemPerBlock": 49152,
                   "maxShmemPerBlockOptin": 232448 if spec.compute[0] >= 9 else 166912,
                   "maxShmemPerSm": 233472 if spec.compute[0] >= 9 else 167936, "maxWarpsPerSm": 64,
                   "maxBlocksPerSm": 32, "asyncEngines": 3, "constantMemory": 65536,
                   "computeMajor": spec.compute[0], "computeMinor": spec.compute[1],
                   "smMajor": spec.compute[0], "smMinor": spec.compute[1]}
            return {
                "META_DATA_EXPORT": [{"name": k, "value": v} for k, v in meta_export],
                "META_DATA_CAPTURE": [{"name": k, "value": v} for k, v in capture],
                "TARGET_INFO_SESSION_START_TIME": [{
                    "utcEpochNs": self.utc_start, "utcTime": utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                    "localTime": local.strftime("%Y-%m-%dT%H:%M:%S.%f"), "systemClockNs": self.t_start}],
                "ANALYSIS_DETAILS": [{"globalVid": nsys_writer.VM_ID, "duration": stop - self.t_start,
                                      "startTime": self.t_start, "stopTime": stop}],
                "PROCESSES": [{"globalPid": self.gpid, "pid": self.pid, "name": proc_name}],
                "ThreadNames": threads,
                "TARGET_INFO_GPU": [gpu],
                "TARGET_INFO_CUDA_DEVICE": [{"gpuId": DEVICE_ID, "cudaId": 0, "pid": self.pid,
                                             "uuid": gpu["uuid"], "numMultiprocessors": spec.sm_count}],
                "TARGET_INFO_CUDA_STREAM": [{"streamId": STREAM_ID, "hwId": 0, "vmId": 0,
                                             "processId": self.pid, "contextId": CONTEXT_ID,
                                             "priority": 0, "flag": 3}],
                "NVTX_EVENTS": nvtx,
                "CUPTI_ACTIVITY_KIND_RUNTIME": list(self.runtime),
                "CUPTI_ACTIVITY_KIND_KERNEL": list(self.kernels),
                "CUPTI_ACTIVITY_KIND_MEMCPY": list(self.memcpys),
                "StringIds": [{"id": i, "value": v} for v, i in sorted(self.strings.items(), key=lambda kv: kv[1])],
            }

    def write(self, path):
        nsys_writer.write(path, self.rows())

    def summary(self):
        return {"kernels": len(self.kernels), "memcpys": len(self.memcpys), "nvtx_ranges": len(self.nvtx),
                "threads": len(self.threads), "unmodelled_ops": dict(self.unmodelled),
                "backward_calls": self.autograd.backward_calls,
                "sequence_ranges": self.autograd.seq_ranges and not self.autograd.errors,
                "emulator_errors": sum(self.errors.values())}


def _allow_tf32():
    try:
        import torch
        return bool(torch.backends.cuda.matmul.allow_tf32)
    except Exception:
        return False


def _torch_version():
    mod = sys.modules.get("torch")
    return getattr(mod, "__version__", "") if mod is not None else ""



# ---- CPU versions of CUDA-only ops the emulator dispatches ----------------------------------------
# The fused RNN cell ops (RNN.cu) have no CPU kernel. These compute what the CUDA kernels compute
# (kernel::lstm_cell_forward/backward, gru_cell_forward/backward, the bias sums), returning the
# op's schema outputs; the dispatch mode calls them instead of the op (below autograd, so the
# program's autograd graph has the real nodes).

def _lstm_cell(igates, hgates, cx, input_bias=None, hidden_bias=None):
    import torch
    gates = igates + hgates
    if input_bias is not None:
        gates = gates + input_bias + hidden_bias
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat((i, f, g, o), 1)


def _lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    import torch
    if grad_hy is None and grad_cy is None:
        return None, None, None
    i, f, g, o = workspace.chunk(4, 1)
    tcy = cy.tanh()
    ghy = grad_hy if grad_hy is not None else torch.zeros_like(cy)
    gcx = ghy * o * (1 - tcy * tcy) + (grad_cy if grad_cy is not None else 0)
    gates = torch.cat((gcx * g * (1 - i) * i, gcx * cx * (1 - f) * f, gcx * i * (1 - g * g),
                       ghy * tcy * (1 - o) * o), 1)
    return gates, gcx * f, gates.sum(0) if has_bias else None


def _lstm_cell_backward_full(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    gates, gcx, gb = _lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias)
    return gates, gates, gcx, gb, gb


def _gru_cell(igates, hgates, hx, input_bias=None, hidden_bias=None):
    import torch
    ir, ii, inn = igates.chunk(3, 1)
    hr, hi, hn = hgates.chunk(3, 1)
    if input_bias is not None:
        b1r, b1i, b1n = input_bias.chunk(3)
        b2r, b2i, b2n = hidden_bias.chunk(3)
        ir, ii, inn, hr, hi, hn = ir + b1r, ii + b1i, inn + b1n, hr + b2r, hi + b2i, hn + b2n
    rg = (ir + hr).sigmoid()
    ig = (ii + hi).sigmoid()
    ng = (inn + rg * hn).tanh()
    return ng + ig * (hx - ng), torch.cat((rg, ig, ng, hx, hn), 1)


def _gru_cell_backward(grad_hy, workspace, has_bias):
    import torch
    rg, ig, ng, hx, hn = workspace.chunk(5, 1)
    gig = grad_hy * (hx - ng) * (1 - ig) * ig
    gin = grad_hy * (1 - ig) * (1 - ng * ng)
    grg = gin * hn * (1 - rg) * rg
    gi = torch.cat((grg, gig, gin), 1)
    gh = torch.cat((grg, gig, gin * rg), 1)
    return gi, gh, grad_hy * ig, gi.sum(0) if has_bias else None, gh.sum(0) if has_bias else None


CPU_FALLBACKS = {
    "_thnn_fused_lstm_cell": _lstm_cell,
    "_thnn_fused_lstm_cell_backward_impl": _lstm_cell_backward,
    "_thnn_fused_lstm_cell_backward": _lstm_cell_backward_full,
    "_thnn_fused_gru_cell": _gru_cell,
    "_thnn_fused_gru_cell_backward": _gru_cell_backward,
}
