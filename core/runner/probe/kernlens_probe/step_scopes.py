"""Ranges around the parts of a training step that are not the model's forward and backward.

kernlens labels the kernels launched inside them by kind (core/attribution/autograd_link.h
`stepKindOf` reads these texts; keep the two in step):

  Optimizer.step#<Class>.step            optimizer    PyTorch's own record_function scopes
  Optimizer.zero_grad#<Class>.zero_grad  zero_grad    (emit_nvtx and Kineto record them too)
  torch.nn.utils.clip_grad_norm_         grad-clip    the probe wraps these functions
  torch.nn.utils.clip_grad_value_        grad-clip
  GradScaler.<scale|unscale_|step|update> amp-scaler  the probe wraps these GradScaler methods

The probe pushes each as an NVTX range through torch.cuda.nvtx (nvtx_provider: a real NVTX range
under nsys, recorded by the emulator, mirrored as record_function by the torch backend, which
records PyTorch's Optimizer scopes itself). A few ranges per training step: always on.
"""

import functools

OPTIMIZER_SCOPES = ("Optimizer.step#", "Optimizer.zero_grad#")
CLIP_FUNCTIONS = ("clip_grad_norm_", "clip_grad_value_")
SCALER_METHODS = ("scale", "unscale_", "step", "update")


def is_native_scope(name):
    """PyTorch's own record_function scopes (Kineto records these without the probe)."""
    return isinstance(name, str) and name.startswith(OPTIMIZER_SCOPES)


def is_probe_scope(name):
    """The scopes only the probe writes (the torch backend mirrors them as record_function)."""
    return isinstance(name, str) and name.startswith(("torch.nn.utils.clip_grad_", "GradScaler."))


def _push(nvtx, text):
    """True when the range was pushed (NVTX may be unavailable: the program runs on)."""
    try:
        nvtx.range_push(text)
        return True
    except Exception:
        return False


def _pop(nvtx):
    try:
        nvtx.range_pop()
    except Exception:
        pass


def _ranged(fn, text, nvtx):
    if getattr(fn, "_kernlens_scope", False):
        return fn

    @functools.wraps(fn)
    def wrapped(*a, **k):
        pushed = _push(nvtx, text)
        try:
            return fn(*a, **k)
        finally:
            if pushed:
                _pop(nvtx)
    wrapped._kernlens_scope = True
    return wrapped


def install(torch):
    """Called once the program imports torch. Never raises."""
    nvtx = torch.cuda.nvtx
    try:
        rf = torch.autograd.profiler.record_function
        enter, exit_ = rf.__enter__, rf.__exit__
        if not getattr(enter, "_kernlens_scope", False):
            def __enter__(self):
                out = enter(self)
                if is_native_scope(getattr(self, "name", None)):
                    self._kernlens_scope = _push(nvtx, self.name)
                return out

            def __exit__(self, *exc):
                if getattr(self, "_kernlens_scope", False):
                    self._kernlens_scope = False
                    _pop(nvtx)
                return exit_(self, *exc)
            __enter__._kernlens_scope = True
            rf.__enter__, rf.__exit__ = __enter__, __exit__
    except Exception:
        pass
    try:
        import torch.nn.utils as nu
        import torch.nn.utils.clip_grad as cg
        for name in CLIP_FUNCTIONS:
            fn = getattr(cg, name, None)
            if fn is None:
                continue
            w = _ranged(fn, "torch.nn.utils." + name, nvtx)
            setattr(cg, name, w)
            if getattr(nu, name, None) is fn:
                setattr(nu, name, w)
    except Exception:
        pass
    classes = []
    for mod, attr in (("torch.cuda.amp", "GradScaler"), ("torch.amp", "GradScaler")):
        try:
            m = __import__(mod, fromlist=[attr])
            cls = getattr(m, attr, None)
            if cls is not None and cls not in classes:
                classes.append(cls)
        except Exception:
            continue
    for cls in classes:
        for name in SCALER_METHODS:
            fn = cls.__dict__.get(name)
            if fn is not None and callable(fn):
                setattr(cls, name, _ranged(fn, "GradScaler." + name, nvtx))
