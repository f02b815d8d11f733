"""kernlens probe hook for Python child processes (found first on PYTHONPATH).

Activates only in processes started below a running probe (env KERNLENS_PROBE_ROOT_PID set to
another pid), then runs the sitecustomize this file shadows (e.g. Debian's), if any.
"""

import os
import sys


def _kernlens_activate():
    root = os.environ.get("KERNLENS_PROBE_ROOT_PID")
    if not root or root == str(os.getpid()):
        return
    try:
        from kernlens_probe import session
        session.activate_child()
    except Exception as e:  # never break the child
        sys.stderr.write("kernlens-probe: warning: child hook failed: %s\n" % e)


def _kernlens_chain():
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.realpath(spec.origin) == os.path.realpath(__file__):
        return
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # same policy as site.py: report and continue
        sys.stderr.write("Error in sitecustomize (%s); set PYTHONVERBOSE for traceback:\n%s: %s\n"
                         % (spec.origin, type(e).__name__, e))


_kernlens_activate()
_kernlens_chain()
