"""Run the user's entry command unchanged, in this process where possible.

  python [opts] script.py args   -> the script (overlay text if overlaid) as __main__, in-process
  python [opts] -m pkg.mod args  -> runpy, in-process (the import hook serves overlaid modules)
  python [opts] -c CODE args     -> exec, in-process
  prog args, prog a Python script by shebang (torchrun, ./train.py) -> that script, in-process
  anything else (bash wrapper, srun, ...) -> a child process; Python children get the probe
                                             through PYTHONPATH + sitecustomize (session.py)
The interpreter is always the probe's own (`python3.11` in the command does not switch it).
"""

import builtins
import os
import re
import runpy
import shutil
import subprocess
import sys
import traceback
import types
import warnings

from . import overlay_hook

PY_NAME = re.compile(r"python(\d+(\.\d+)*)?")
# Interpreter options that take no argument and can be ignored in-process.
IGNORED_FLAGS = set("BEsSIOqbdvRxPh") | {"OO", "bb", "vv"}


class EntryError(Exception):
    """Entry command that cannot be run (message is one line)."""


class Plan:
    def __init__(self, kind, target, argv, unbuffered=False, warn_opts=()):
        self.kind = kind          # "script" | "module" | "code" | "subprocess"
        self.target = target      # path, module name, code text, or argv[0]
        self.argv = argv          # sys.argv for the program (or the full argv for subprocess)
        self.unbuffered = unbuffered
        self.warn_opts = list(warn_opts)


def is_python(exe):
    if PY_NAME.fullmatch(os.path.basename(exe)):
        return True
    found = shutil.which(exe) if os.sep not in exe else exe
    return bool(found) and os.path.realpath(found) == os.path.realpath(sys.executable)


def python_shebang(path):
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def plan(argv):
    if not argv:
        raise EntryError("no entry command after --")
    exe = argv[0]
    if is_python(exe):
        return _plan_python(argv[1:])
    path = exe if os.sep in exe else shutil.which(exe)
    if path and os.path.isfile(path) and python_shebang(path):
        return Plan("script", os.path.abspath(path), [os.path.abspath(path)] + argv[1:])
    if not path:
        raise EntryError("entry command not found: %s" % exe)
    return Plan("subprocess", exe, list(argv))


def _plan_python(args):
    unbuffered = False
    warn_opts = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-u":
            unbuffered = True
        elif a in ("-W", "-X"):
            if i + 1 >= len(args):
                raise EntryError("python option %s needs an argument" % a)
            if a == "-W":
                warn_opts.append(args[i + 1])
            i += 1
        elif a.startswith("-W") or a.startswith("-X"):
            if a.startswith("-W"):
                warn_opts.append(a[2:])
        elif a in ("-m", "-c"):
            if i + 1 >= len(args):
                raise EntryError("python option %s needs an argument" % a)
            kind = "module" if a == "-m" else "code"
            return Plan(kind, args[i + 1], [args[i + 1] if kind == "module" else "-c"] + args[i + 2:],
                        unbuffered, warn_opts)
        elif a.startswith("-m") or a.startswith("-c"):
            kind = "module" if a[1] == "m" else "code"
            return Plan(kind, a[2:], [a[2:] if kind == "module" else "-c"] + args[i + 1:], unbuffered, warn_opts)
        elif a == "-":
            raise EntryError("reading the program from stdin (python -) is not supported")
        elif a.startswith("-") and a[1:] and (a[1:] in IGNORED_FLAGS or set(a[1:]) <= IGNORED_FLAGS | {"u"}):
            unbuffered = unbuffered or "u" in a[1:]
        elif a.startswith("-"):
            raise EntryError("unsupported python option in entry command: %s" % a)
        else:
            path = os.path.abspath(a)
            if not os.path.isfile(path):
                raise EntryError("python: can't open file %r: no such file" % a)
            return Plan("script", path, [a] + args[i + 1:], unbuffered, warn_opts)
        i += 1
    raise EntryError("interactive python (no script, -m or -c) is not supported as an entry")


def _new_main(filename):
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": filename, "__builtins__": builtins, "__cached__": None,
                          "__loader__": None, "__spec__": None, "__package__": None})
    if filename is None:
        del main.__file__
    sys.modules["__main__"] = main
    return main


def run_in_process(p, replace_path0=True):
    """Runs a non-subprocess plan; exceptions propagate (the caller formats them).
    replace_path0: sys.path[0] is the probe's own entry (python -m kernlens_probe); False when
    called from sitecustomize, before the interpreter has added the script's directory."""
    if not replace_path0:
        sys.path.insert(0, "")
    if p.unbuffered:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(line_buffering=True, write_through=True)
            except (AttributeError, ValueError):
                pass
    for opt in p.warn_opts:
        if hasattr(warnings, "_setoption"):
            warnings._setoption(opt)
    sys.argv = list(p.argv)
    if p.kind == "script":
        code = overlay_hook.compile_file(p.target)
        sys.path[0] = os.path.dirname(os.path.realpath(p.target))
        main = _new_main(p.target)
        exec(code, main.__dict__)
    elif p.kind == "module":
        sys.path[0] = os.getcwd()
        run_as_main = getattr(runpy, "_run_module_as_main", None)
        if run_as_main is not None:
            run_as_main(p.target, alter_argv=True)
        else:
            runpy.run_module(p.target, run_name="__main__", alter_sys=True)
    elif p.kind == "code":
        sys.path[0] = ""
        main = _new_main(None)
        exec(compile(p.target, "<string>", "exec"), main.__dict__)
    else:
        raise EntryError("not an in-process plan: %s" % p.kind)


def run_subprocess(p):
    try:
        rc = subprocess.call(p.argv)
    except OSError as e:
        raise EntryError("cannot run entry command %s: %s" % (p.target, e)) from None
    return 128 - rc if rc < 0 else rc


def _probe_frame(filename):
    here = os.path.dirname(os.path.abspath(__file__))
    return (filename.startswith(here + os.sep) or os.path.basename(filename) == "runpy.py"
            or filename.startswith("<frozen runpy"))


def print_exception(exc):
    """Python's own traceback format, without the probe's frames."""
    tb = exc.__traceback__
    while tb is not None and _probe_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)
    sys.stderr.flush()


def exit_code(exc):
    """Exit status Python itself would give for an exception leaving the program."""
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        sys.stderr.write("%s\n" % code)
        return 1
    if isinstance(exc, KeyboardInterrupt):
        return 130
    return 1


def join_threads():
    """Like interpreter shutdown: wait for non-daemon threads (they may still launch work)."""
    import threading
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon and t is not threading.main_thread():
            try:
                t.join()
            except (RuntimeError, KeyboardInterrupt):
                pass
