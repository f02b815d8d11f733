"""NVTX for the instrumented code on every machine.

The instrumented code calls torch.cuda.nvtx.range(...) / range_push / range_pop (and may call
range_start / range_end / mark). Those functions call the module global `torch.cuda.nvtx._nvtx`
at call time, so replacing that object redirects them. Provider chain (first that works):

  1. "torch"   torch's own torch._C._nvtx (CUDA builds of PyTorch)
  2. "ctypes"  libnvToolsExt.so.1 through ctypes (Debian `libnvtoolsext1`; CPU builds of PyTorch,
               whose stub raises "NVTX functions not installed"); a real nsys records these ranges
  3. "noop"    nothing to call: ranges are not visible to an external profiler (warning once)

On top of the provider sits a Tee that also reports every call to listeners (the emulate backend
records ranges itself; the torch backend mirrors "kl:" ranges as record_function). Listeners run
after the provider on push/start/mark and before it on pop/end, so listener work nests inside the
real NVTX range. Env KERNLENS_PROBE_NVTX=torch|ctypes|noop forces a provider (tests).
"""

import ctypes
import itertools
import os
import sys
import threading

LIB_CANDIDATES = ("libnvToolsExt.so.1", "libnvToolsExt.so")


class CtypesNvtx:
    """torch.cuda.nvtx._nvtx-compatible object over libnvToolsExt (NVTX v3 C API)."""

    def __init__(self, lib, path):
        self.path = path
        self._lib = lib
        lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangePushA.restype = ctypes.c_int
        lib.nvtxRangePop.argtypes = []
        lib.nvtxRangePop.restype = ctypes.c_int
        lib.nvtxRangeStartA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangeStartA.restype = ctypes.c_uint64
        lib.nvtxRangeEnd.argtypes = [ctypes.c_uint64]
        lib.nvtxRangeEnd.restype = None
        lib.nvtxMarkA.argtypes = [ctypes.c_char_p]
        lib.nvtxMarkA.restype = None

    @staticmethod
    def _b(msg):
        return msg.encode("utf-8", "replace") if isinstance(msg, str) else bytes(msg)

    def rangePushA(self, msg):
        return self._lib.nvtxRangePushA(self._b(msg))

    def rangePop(self):
        return self._lib.nvtxRangePop()

    def rangeStartA(self, msg):
        return self._lib.nvtxRangeStartA(self._b(msg))

    def rangeEnd(self, range_id):
        self._lib.nvtxRangeEnd(int(range_id))

    def markA(self, msg):
        self._lib.nvtxMarkA(self._b(msg))


class NoopNvtx:
    def rangePushA(self, msg):
        return 0

    def rangePop(self):
        return 0

    def rangeStartA(self, msg):
        return 0

    def rangeEnd(self, range_id):
        pass

    def markA(self, msg):
        pass


class Tee:
    """Forwards to the provider and reports to listeners (objects with on_push(msg), on_pop(),
    on_start(msg, rid), on_end(rid), on_mark(msg); missing methods are skipped)."""

    def __init__(self, provider):
        self.provider = provider
        self.listeners = []
        self._ids = itertools.count(1)
        self._inner_ids = {}
        self._lock = threading.Lock()

    def _each(self, method, *args):
        for l in self.listeners:
            fn = getattr(l, method, None)
            if fn is not None:
                fn(*args)

    def rangePushA(self, msg):
        depth = self.provider.rangePushA(msg)
        self._each("on_push", str(msg))
        return depth

    def rangePop(self):
        self._each("on_pop")
        return self.provider.rangePop()

    def rangeStartA(self, msg):
        inner = self.provider.rangeStartA(msg)
        with self._lock:
            rid = next(self._ids)
            self._inner_ids[rid] = inner
        self._each("on_start", str(msg), rid)
        return rid

    def rangeEnd(self, range_id):
        with self._lock:
            inner = self._inner_ids.pop(range_id, None)
        self._each("on_end", range_id)
        if inner is not None:
            self.provider.rangeEnd(inner)

    def markA(self, msg):
        self.provider.markA(msg)
        self._each("on_mark", str(msg))


def load_ctypes():
    """CtypesNvtx or None. Env KERNLENS_NVTX_LIB names an explicit library path."""
    names = [os.environ["KERNLENS_NVTX_LIB"]] if os.environ.get("KERNLENS_NVTX_LIB") else list(LIB_CANDIDATES)
    for name in names:
        try:
            return CtypesNvtx(ctypes.CDLL(name), name)
        except (OSError, AttributeError):
            continue
    return None


def _torch_native(nvtx_module):
    obj = getattr(nvtx_module, "_nvtx", None)
    if obj is None or type(obj).__name__ == "_NVTXStub" or isinstance(obj, Tee):
        return None
    return obj if hasattr(obj, "rangePushA") and hasattr(obj, "rangePop") else None


def choose(nvtx_module, warn=True):
    """(provider object, description). description: "torch", "ctypes:<lib>" or "noop"."""
    forced = os.environ.get("KERNLENS_PROBE_NVTX", "")
    if forced not in ("", "torch", "ctypes", "noop"):
        raise ValueError("KERNLENS_PROBE_NVTX must be torch, ctypes or noop (got %r)" % forced)
    if forced in ("", "torch"):
        native = _torch_native(nvtx_module)
        if native is not None:
            return native, "torch"
    if forced in ("", "ctypes"):
        lib = load_ctypes()
        if lib is not None:
            return lib, "ctypes:" + lib.path
    if warn:
        sys.stderr.write("kernlens-probe: warning: torch has no NVTX (CPU build) and libnvToolsExt.so.1 "
                         "was not found (Debian package libnvtoolsext1); NVTX ranges are not visible "
                         "to an external profiler\n")
    return NoopNvtx(), "noop"


_tee = None
_description = None
_pending_listeners = []


def _install_into(nvtx_module, warn):
    global _tee, _description
    if isinstance(getattr(nvtx_module, "_nvtx", None), Tee):
        _tee = nvtx_module._nvtx
        return
    provider, _description = choose(nvtx_module, warn)
    _tee = Tee(provider)
    _tee.listeners.extend(_pending_listeners)
    _pending_listeners.clear()
    nvtx_module._nvtx = _tee


def install(warn_if_noop=True):
    """Patches torch.cuda.nvtx as soon as it is imported (now, if it already is)."""
    from . import post_import
    post_import.when_imported("torch.cuda.nvtx", lambda m: _install_into(m, warn_if_noop))


def add_listener(listener):
    if _tee is not None:
        _tee.listeners.append(listener)
    else:
        _pending_listeners.append(listener)


def description():
    """Provider in use ("torch", "ctypes:libnvToolsExt.so.1", "noop"), or None before torch import."""
    return _description
