"""Runtime call discovery: which WORKSPACE functions ran, called from which workspace line.

Activated by `--discover-calls OUT` (planner-owned: the loop asks for it in a dedicated discovery
pass whose timings are never reported). Mechanism (Python 3.11 has no sys.monitoring):
sys.settrace + threading.settrace with a global trace function that is called once per new Python
frame. It classifies each code object once (cached by identity): code whose realpath(co_filename)
lies under the workspace root is recorded, anything else (the standard library, torch, the probe)
gets no local tracer, so library code pays one C->Python call per frame and nothing per line.

For every call of a workspace function C the innermost enclosing workspace frame P is found by
walking f_back (library frames in between, e.g. nn.Module.__call__, functools.partial, decorators
defined outside the workspace, are skipped): the edge (P, P.f_lineno, C) is counted. Comprehension
and generator-expression frames are transparent (their lines belong to the enclosing function).
The tracer is chained with the program's own (trace_chain.py): a program that calls sys.settrace
(a debugger, coverage) keeps its tracer and discovery keeps recording.
Workspace frames also get a local tracer counting 'line' events, so the planner knows how often
each line ran (the NVTX push cost of wrapping it) and which lines never ran.

OUT (tab-separated, one record per line, paths workspace-relative, read by
core/planner/observed_calls.h):
  kernlens-calls<TAB>1
  code<TAB>ID<TAB>PATH<TAB>FIRST_LINE<TAB>QUALNAME<TAB>CALLS
  line<TAB>ID<TAB>LINE<TAB>HITS
  edge<TAB>CALLER_ID<TAB>CALLER_LINE<TAB>CALLEE_ID<TAB>COUNT
  root<TAB>CALLEE_ID<TAB>COUNT          (no workspace frame above: the entry's module code, threads)
  backward<TAB>COUNT                    autograd backward passes run (torch.autograd.backward / grad
                                        calls, Tensor.backward included): the loop writes emit_nvtx's
                                        sequence ranges only when the program runs one
"""

import os
import sys
import threading

from . import trace_chain

_TRANSPARENT = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")
_SKIP = object()          # not a workspace code object
_BACKWARD = object()      # torch.autograd.backward / torch.autograd.grad
_AUTOGRAD_ENTRY = os.path.join("torch", "autograd", "__init__.py")
_state = None


class Discovery:
    def __init__(self, workspace, out_path):
        self.root = os.path.realpath(workspace) + os.sep
        self.out_path = out_path
        here = os.path.dirname(os.path.realpath(__file__)) + os.sep
        self.excluded = (here, self.root + ".kernlens" + os.sep)
        self.by_code = {}     # code -> id | -1 (transparent) | _SKIP
        self.by_file = {}     # co_filename -> relative path | None
        self.codes = []       # id -> [rel, first_line, qualname, calls]
        self.lines = {}       # (id, line) -> hits
        self.edges = {}       # (caller id, line, callee id) -> count
        self.roots = {}       # callee id -> count
        self.backward_calls = 0
        self.lock = threading.Lock()

    def _relative(self, filename):
        rel = self.by_file.get(filename, 0)
        if rel != 0:
            return rel
        rel = None
        if filename and not filename.startswith("<"):
            real = os.path.realpath(filename)
            if real.startswith(self.root) and not real.startswith(self.excluded):
                rel = real[len(self.root):]
                if "\t" in rel or "\n" in rel:
                    rel = None
        self.by_file[filename] = rel
        return rel

    def _classify(self, code):
        rel = self._relative(code.co_filename)
        if rel is None:
            kind = _BACKWARD if code.co_name in ("backward", "grad") and code.co_filename.endswith(_AUTOGRAD_ENTRY) \
                else _SKIP
        elif code.co_name in _TRANSPARENT:
            kind = -1
        else:
            kind = len(self.codes)
            qual = getattr(code, "co_qualname", code.co_name)
            self.codes.append([rel, code.co_firstlineno, qual, 0])
        self.by_code[code] = kind
        return kind

    def _local(self, cid):
        lines = self.lines

        def local(frame, event, arg):
            if event == "line":
                key = (cid, frame.f_lineno)
                lines[key] = lines.get(key, 0) + 1
            return local
        return local

    def trace(self, frame, event, arg):
        if event != "call":
            return None
        code = frame.f_code
        cid = self.by_code.get(code)
        if cid is None:
            with self.lock:
                cid = self.by_code.get(code)
                if cid is None:
                    cid = self._classify(code)
        if cid is _SKIP or cid == -1:
            return None
        if cid is _BACKWARD:
            with self.lock:
                self.backward_calls += 1
            return None
        with self.lock:
            self.codes[cid][3] += 1
            f = frame.f_back
            while f is not None:
                pid = self.by_code.get(f.f_code)
                if pid is None:
                    pid = self._classify(f.f_code)
                if pid is not _SKIP and pid is not _BACKWARD and pid != -1:
                    key = (pid, f.f_lineno, cid)
                    self.edges[key] = self.edges.get(key, 0) + 1
                    break
                f = f.f_back
            else:
                self.roots[cid] = self.roots.get(cid, 0) + 1
        return self._local(cid)

    def write(self):
        tmp = self.out_path + ".tmp"
        with self.lock, open(tmp, "w", encoding="utf-8") as f:
            f.write("kernlens-calls\t1\n")
            for i, (rel, first, qual, calls) in enumerate(self.codes):
                f.write("code\t%d\t%s\t%d\t%s\t%d\n" % (i, rel, first, qual, calls))
            for (cid, line), hits in sorted(self.lines.items()):
                f.write("line\t%d\t%d\t%d\n" % (cid, line, hits))
            for (pid, line, cid), n in sorted(self.edges.items()):
                f.write("edge\t%d\t%d\t%d\t%d\n" % (pid, line, cid, n))
            for cid, n in sorted(self.roots.items()):
                f.write("root\t%d\t%d\n" % (cid, n))
            f.write("backward\t%d\n" % self.backward_calls)
        os.replace(tmp, self.out_path)


def install(workspace, out_path):
    """Starts discovery on this thread and on threads started later."""
    global _state
    _state = Discovery(workspace, out_path)
    trace_chain.install(_state.trace)  # chained with the program's own sys.settrace users
    return _state


def finish():
    """Stops tracing and writes the file; returns an error message or None."""
    global _state
    if _state is None:
        return None
    trace_chain.uninstall()
    st, _state = _state, None
    try:
        st.write()
    except OSError as e:
        return "cannot write call discovery %s: %s" % (st.out_path, e)
    return None
