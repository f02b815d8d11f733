"""Share sys.settrace / sys.setprofile (and threading's) with the program (debuggers, coverage,
its own tracers and profilers), and keep the probe's own frames out of the program's view.

The probe's tracers (call discovery, the line strategy) need a global trace function; so may the
program. Contract, once install() has run:
  * The program's sys.settrace(fn) / threading.settrace(fn) / sys.gettrace() /
    threading.gettrace() behave as without the probe from the program's point of view: gettrace
    returns what the program set (None when it set nothing), and its fn sees every event it would
    see without the probe, with the local tracers it returns honoured.
  * The probe's tracer keeps running next to it: the interpreter holds one combined function per
    thread that calls the probe's tracer first, then the program's, each with its own local
    tracer per frame.
  * The program's tracer and profiler are not called for the probe's own frames (its dispatch
    modes, NVTX listeners, wrappers) nor for the frames those call directly (torch's OpOverload a
    mode re-dispatches, ...): frames a plain run does not have. This also keeps a program tracer
    that itself pushes NVTX ranges from re-entering the probe while it holds its locks.
  * sys.setprofile / threading.setprofile / getprofile: the same, for profile functions.
  * uninstall() (end of the run) leaves the program's own tracer in place on this thread.
A tracer that raises is the interpreter's business as usual: the program's exception propagates
(as without the probe); the probe's own tracer never raises into the program.
"""

import os
import sys
import threading

_PROBE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

_real_settrace = sys.settrace
_real_gettrace = sys.gettrace
_real_thread_settrace = threading.settrace
_probe = None                 # the probe's global trace function (None: not installed)
_tls = threading.local()      # .user: the program's global tracer on this thread
_thread_user = None           # the program's threading.settrace function


def _combine(mine, theirs):
    """A local tracer that runs both (either may be None)."""
    if mine is None:
        return theirs
    if theirs is None:
        return mine

    def both(frame, event, arg):
        a = mine(frame, event, arg)
        b = theirs(frame, event, arg)
        return _combine(a, b)
    return both


def _pair(one, two):
    def pair(frame, event, arg):
        return _combine(one(frame, event, arg), two(frame, event, arg))
    return pair


# The probe's runner frames (the entry's caller): frames they call are the program's own.
_RUNNER = {_PROBE_DIR + n for n in ("entry.py", "__main__.py", "session.py")}


def probe_frame(frame):
    """True for a frame of the probe, or one its interposers (anything but the runner) called,
    up to two levels down."""
    if frame.f_code.co_filename.startswith(_PROBE_DIR):
        return True
    f = frame.f_back
    for _ in range(2):
        if f is None:
            return False
        name = f.f_code.co_filename
        if name.startswith(_PROBE_DIR):
            return name not in _RUNNER
        f = f.f_back
    return False


def _global_for(user):
    if user is None:
        return _probe

    def combined(frame, event, arg):
        try:
            mine = _probe(frame, event, arg) if _probe is not None else None
        except Exception:
            mine = None
        if probe_frame(frame):
            return mine
        return _combine(mine, user(frame, event, arg))
    combined._kernlens_user = user
    return combined


def _settrace(fn):
    if fn is _thread_start:  # threading's bootstrap of a new thread (threading._trace_hook)
        fn = _thread_user
    _tls.user = fn
    _real_settrace(_global_for(fn))


def _gettrace():
    return getattr(_tls, "user", None)


_real_setprofile = sys.setprofile
_real_thread_setprofile = threading.setprofile
_thread_profile = None


def _profile_for(user):
    if user is None:
        return None

    def filtered(frame, event, arg):
        if not probe_frame(frame):
            user(frame, event, arg)
    filtered._kernlens_user = user
    return filtered


def _setprofile(fn):
    if fn is _profile_start:
        fn = _thread_profile
    _tls.profile = fn
    _real_setprofile(_profile_for(fn))


def _getprofile():
    return getattr(_tls, "profile", None)


def _thread_setprofile(fn):
    global _thread_profile
    _thread_profile = fn
    _real_thread_setprofile(_profile_start if fn is not None else None)


def _thread_getprofile():
    return _thread_profile


def _profile_start(frame, event, arg):
    """threading._profile_hook: see _thread_start."""
    _setprofile(_thread_profile)


_wrapped = False


def wrap_program_hooks():
    """Routes the program's settrace/setprofile calls through this module (idempotent). Every
    backend does this at start; install() adds a probe tracer."""
    global _wrapped
    if _wrapped:
        return
    _wrapped = True
    current = _real_gettrace()
    _tls.user = getattr(current, "_kernlens_user", current) if current is not None else None
    sys.settrace = _settrace
    sys.gettrace = _gettrace
    threading.settrace = _thread_settrace
    threading.gettrace = _thread_gettrace
    sys.setprofile = _setprofile
    sys.getprofile = _getprofile
    threading.setprofile = _thread_setprofile
    threading.getprofile = _thread_getprofile


def _thread_settrace(fn):
    global _thread_user
    _thread_user = fn
    _real_thread_settrace(_thread_start if (fn is not None or _probe is not None) else None)


def _thread_gettrace():
    return _thread_user


def _thread_start(frame, event, arg):
    """threading._trace_hook: a new thread calls sys.settrace(_thread_start), which _settrace turns
    into the combination; called as a tracer only if something bypassed that."""
    _settrace(_thread_user)
    g = _real_gettrace()
    return g(frame, event, arg) if g is not None else None


def install(probe_tracer):
    """Starts `probe_tracer` on this thread and on threads started later, chained with the
    program's tracers (see the module's contract) and with a probe tracer installed before."""
    global _probe
    wrap_program_hooks()
    _probe = probe_tracer if _probe is None else _pair(_probe, probe_tracer)
    _tls.user = getattr(_tls, "user", None)
    _real_thread_settrace(_thread_start)
    _real_settrace(_global_for(_tls.user))


def uninstall():
    """Stops the probe's tracer; the program's own tracers stay as it set them."""
    global _probe
    _probe = None
    _real_settrace(_global_for(getattr(_tls, "user", None)))
    _real_thread_settrace(_thread_start if _thread_user is not None else None)
