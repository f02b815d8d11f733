"""Line strategy: one NVTX range per executed source line of chosen functions (planner-owned).

Activated by `--line-ranges SPEC` (or env KERNLENS_PROBE_LINE_RANGES=SPEC). SPEC is the JSON the
planner writes (core/planner/line_strategy.h):

  {"version": 1, "workspace": "/abs/root",
   "functions": [{"path": "pkg/model.py", "file": "/abs/root/pkg/model.py", "qualname": "Net.forward",
                  "first_line": 12, "def_line": 13}]}

A global trace function (sys.settrace + threading.settrace, so every thread; chained with the
program's own tracers through trace_chain.py) looks at each new
frame once per code object: only code objects whose realpath(co_filename) and co_firstlineno match
a listed function (co_qualname too, where the interpreter has it) get a local tracer. That tracer
pops the previous line's range and pushes `kl:<path>:<L>-<L>:line` on every 'line' event, and pops
on 'return' (also taken when an exception leaves the frame, and at each generator yield). Ranges
go through torch.cuda.nvtx (the probe's Tee), so every backend records them like edit ranges; until
the program imports torch nothing is pushed. Ranges nest: a traced callee's lines sit inside the
caller's line range, so the innermost range of a launch is the line that issued it.
Child processes are not traced (the flag is not forwarded).
"""

import json
import os
import sys
import threading

_by_key = {}
_cache = {}


def _load(spec_path):
    with open(spec_path, "r", encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("version") != 1 or not isinstance(doc.get("functions"), list):
        raise ValueError("line-range spec %s: expected version 1 with a functions list" % spec_path)
    for fn in doc["functions"]:
        real = os.path.realpath(fn["file"])
        info = (fn["path"], fn.get("qualname", ""))
        for line in {int(fn.get("first_line", 0)), int(fn.get("def_line", 0))}:
            if line > 0:
                _by_key[(real, line)] = info


def _info(code):
    info = _cache.get(code)
    if info is None:
        info = _by_key.get((os.path.realpath(code.co_filename), code.co_firstlineno), False)
        qual = getattr(code, "co_qualname", None)
        if info and qual is not None and info[1] and qual != info[1]:
            info = False
        _cache[code] = info
    return info


def _nvtx():
    return sys.modules.get("torch.cuda.nvtx")


def _local_tracer(rel):
    state = [False]  # a range of this frame is open

    def local(frame, event, arg):
        if event == "line":
            nv = _nvtx()
            if nv is None:
                return local
            if state[0]:
                nv.range_pop()
            nv.range_push("kl:%s:%d-%d:line" % (rel, frame.f_lineno, frame.f_lineno))
            state[0] = True
        elif event == "return":
            if state[0]:
                nv = _nvtx()
                if nv is not None:
                    nv.range_pop()
                state[0] = False
        return local

    return local


def _global(frame, event, arg):
    if event != "call":
        return None
    info = _info(frame.f_code)
    if not info:
        return None
    return _local_tracer(info[0])


def install(spec_path):
    """Reads the spec and starts tracing (this thread and threads started later)."""
    _load(spec_path)
    if not _by_key:
        return 0
    from . import trace_chain
    trace_chain.install(_global)  # chained with the program's own sys.settrace users
    return len(_by_key)


def install_from_env():
    path = os.environ.get("KERNLENS_PROBE_LINE_RANGES")
    if path:
        return install(path)
    return 0
