"""Share sys.settrace / threading.settrace with the program (debuggers, coverage, its own tracers).

The probe's tracers (call discovery, the line strategy) need a global trace function; so may the
program. Contract, once install() has run:
  * The program's sys.settrace(fn) / threading.settrace(fn) / sys.gettrace() /
    threading.gettrace() behave as without the probe from the program's point of view: gettrace
    returns what the program set (None when it set nothing), and its fn sees every event it would
    see without the probe, with the local tracers it returns honoured.
  * The probe's tracer keeps running next to it: the interpreter holds one combined function per
    thread that calls the probe's tracer first, then the program's, each with its own local
    tracer per frame.
  * uninstall() (end of the run) leaves the program's own tracer in place on this thread.
A tracer that raises is the interpreter's business as usual: the program's exception propagates
(as without the probe); the probe's own tracer never raises into the program.
"""

import sys
import threading

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


def _global_for(user):
    if user is None:
        return _probe

    def combined(frame, event, arg):
        try:
            mine = _probe(frame, event, arg) if _probe is not None else None
        except Exception:
            mine = None
        return _combine(mine, user(frame, event, arg))
    combined._kernlens_user = user
    return combined


def _settrace(fn):
    if fn is _thread_start:  # threading's bootstrap of a new thread (threading._trace_hook)
        fn = _thread_user
    _tls.user = fn
    if _probe is None:
        _real_settrace(fn)
    else:
        _real_settrace(_global_for(fn))


def _gettrace():
    if _probe is None:
        return _real_gettrace()
    return getattr(_tls, "user", None)


def _thread_settrace(fn):
    global _thread_user
    _thread_user = fn
    _real_thread_settrace(_thread_start)


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
    first = _probe is None
    _probe = probe_tracer if first else _pair(_probe, probe_tracer)
    if first:
        current = _real_gettrace()
        _tls.user = getattr(current, "_kernlens_user", current) if current is not None else None
    _tls.user = getattr(_tls, "user", None)
    sys.settrace = _settrace
    sys.gettrace = _gettrace
    threading.settrace = _thread_settrace
    threading.gettrace = _thread_gettrace
    _real_thread_settrace(_thread_start)
    _real_settrace(_global_for(_tls.user))


def uninstall():
    """Stops the probe's tracer; the program's own tracers stay as it set them."""
    global _probe
    _probe = None
    _real_settrace(getattr(_tls, "user", None))
    _real_thread_settrace(_thread_user)
