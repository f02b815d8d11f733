"""Warnings keep the location they have without the probe.

Python attributes a warning raised from C (a PyTorch op's TORCH_WARN, CUDA initialisation) to the
innermost Python frame. Under the probe that frame can be one of the probe's interposers (the
emulator's TorchDispatchMode, the autograd TorchFunctionMode, the wrapper of the autograd engine's
run_backward, the placement wrappers) or torch code they call (torch/_ops.py), so the program's
stderr would name `kernlens_probe/autograd.py:108` where the plain run names the user's line.

Contract: `warnings._showwarnmsg` is wrapped once per process. When the message's location is an
interposer, a torch mode helper or torch/_ops.py (the frame at that location is found on the
stack, so a stacklevel pointing at a probe wrapper counts too) and the stack holds an interposer frame, the message's filename/lineno become those of the frame that called the
outermost interposer (skipping torch's mode dispatch helpers, which exist only because a mode is
on) and its source line is read again from there; otherwise the message is untouched. The text,
category and order are never changed. Limits: the warning filters and the once-per-location
registry already ran with the interposer's location (a `module=` filter naming the user's module,
or two user lines with the same message under the "default" action, can differ from a plain run).
"""

import os
import sys
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Probe modules whose frames stand between the program and the op that warned.
_INTERPOSERS = {_HERE + n for n in ("emulate.py", "autograd.py", "nvtx_provider.py", "step_scopes.py",
                                    "kernel_table.py", "roofline.py", "torch_backend.py")}
# torch frames that are on the stack only because a mode is active.
_MODE_HELPERS = (os.path.join("torch", "overrides.py"), os.path.join("torch", "utils", "_python_dispatch.py"),
                 os.path.join("torch", "_dynamo", "eval_frame.py"), os.path.join("torch", "_compile.py"))
_OPS = os.path.join("torch", "_ops.py")
_installed = False


def _dropped(f):
    """True for a frame a plain run would not have: a probe interposer, a torch mode helper, or
    torch/_ops.py's OpOverload.__call__ run by an interposer (a mode re-dispatching the op)."""
    name = f.f_code.co_filename
    if name in _INTERPOSERS or name.endswith(_MODE_HELPERS):
        return True
    return name.endswith(_OPS) and f.f_back is not None and f.f_back.f_code.co_filename in _INTERPOSERS


def user_frame(frame):
    """The frame a plain run would attribute a warning raised at `frame` to: the innermost frame
    once the probe's own frames and those that exist only because of them are taken out; None
    when no interposer is on the stack (nothing to correct)."""
    seen = False
    f = frame
    while f is not None:
        if f.f_code.co_filename in _INTERPOSERS:
            seen = True
            break
        f = f.f_back
    if not seen:
        return None
    f = frame
    while f is not None and _dropped(f):
        f = f.f_back
    return f


def _located(frame, filename, lineno):
    """The innermost frame from `frame` outward that is at the message's location (a Python
    warning's stacklevel can name a frame further out than the one that warned, e.g. a probe
    wrapper around torch code that warns at its caller); `frame` when none is."""
    f = frame
    while f is not None:
        if f.f_lineno == lineno and os.path.abspath(f.f_code.co_filename) == filename:
            return f
        f = f.f_back
    return frame


def install():
    global _installed
    if _installed:
        return
    _installed = True
    orig = warnings._showwarnmsg

    def _showwarnmsg(msg):
        try:
            # Only a location a plain run cannot have is moved: a Python warning whose stacklevel
            # already names the user's (or torch's own) line stays where it is.
            name = os.path.abspath(msg.filename or "")
            f = user_frame(_located(sys._getframe(1), name, msg.lineno)) if (
                name in _INTERPOSERS or name.endswith(_MODE_HELPERS) or name.endswith(_OPS)) else None
            if f is not None:
                msg.filename = f.f_code.co_filename
                msg.lineno = f.f_lineno
                msg.line = None
        except Exception:
            pass
        return orig(msg)
    warnings._showwarnmsg = _showwarnmsg
