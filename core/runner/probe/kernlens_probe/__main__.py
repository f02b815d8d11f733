"""python3 -m kernlens_probe --backend nsys|torch|emulate [--overlay DIR] [--out PATH] [--gpu h100]
                          [--workspace ROOT] [--status PATH] [--autograd-nvtx on|off] -- ENTRY COMMAND...

Exit status: the entry program's own status (0, its sys.exit code, 1 for an uncaught exception
with Python's traceback on stderr, 130 for KeyboardInterrupt, 143 for SIGTERM). The probe's own
failures: 2 for bad usage / overlay / entry command (before the program runs), 3 when the program
succeeded but its export could not be written; both print one line "kernlens-probe: error: ...".
"""

import argparse
import json
import os
import signal
import sys
import threading

from . import BACKENDS, NOTES, __version__, entry, nvtx_provider, overlay_hook, roofline, session


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser():
    p = _Parser(prog="python3 -m kernlens_probe", add_help=True,
                description="Run an entry command under kernlens (docs/probe.md).")
    p.add_argument("--backend", required=True, choices=BACKENDS)
    p.add_argument("--overlay", help="overlay directory with overlay.json")
    p.add_argument("--out", help="profile to write (emulate: nsys-schema SQLite, torch: Kineto JSON)")
    p.add_argument("--gpu", default="h100", help="emulated GPU model: %s" % ", ".join(sorted(roofline.GPUS)))
    p.add_argument("--workspace", help="workspace root (overrides the manifest's)")
    p.add_argument("--status", help="write a JSON status file here at the end")
    p.add_argument("--line-ranges", help="line strategy: trace the functions of this spec (line_ranges.py)")
    p.add_argument("--discover-calls", metavar="OUT",
                   help="record which workspace functions ran, from which line (call_discovery.py)")
    p.add_argument("--autograd-nvtx", choices=("on", "off"), default="on",
                   help="emit_nvtx's autograd sequence ranges (nsys: enter emit_nvtx(); emulate: write them); "
                        "they link backward kernels to forward lines")
    p.add_argument("--version", action="version", version="kernlens-probe %s" % __version__)
    return p


def _fail(msg, status_path=None, status=None):
    sys.stderr.write("kernlens-probe: error: %s\n" % msg)
    if status_path:
        doc = dict(status or {})
        doc["probe_error"] = msg
        _write_status(status_path, doc)
    return 2


def _write_status(path, doc):
    try:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        sys.stderr.write("kernlens-probe: error: cannot write status %s: %s\n" % (path, e))


# The oldest PyTorch the probe runs on; older ones get one line, not a traceback from inside the
# probe. Tested: the version pinned in requirements/dev.in (README "Supported PyTorch").
MIN_TORCH = (2, 1)


def _torch_problem(backend):
    """One line saying why this interpreter's PyTorch cannot run `backend`, or None.

    Reads the installed distribution's metadata (torch is not imported here: the program imports
    it itself, in its own order). The nsys backend profiles programs without torch too."""
    try:
        from importlib import metadata
        version = metadata.version("torch")
    except Exception:
        try:  # a torch on PYTHONPATH without distribution metadata (a source tree)
            import importlib.util
            spec = importlib.util.find_spec("torch")
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            if backend == "nsys":
                return None
            return ("%s cannot import torch: the %s backend needs PyTorch %d.%d or later in the entry's "
                    "interpreter (name another with --python)" % ((sys.executable, backend) + MIN_TORCH))
        return None
    parts = []
    for piece in version.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit()) or "0"
        parts.append(int(digits))
    if tuple(parts) < MIN_TORCH:
        return ("PyTorch %s in %s is not supported: kernlens needs PyTorch %d.%d or later "
                "(name another interpreter with --python)" % ((version, sys.executable) + MIN_TORCH))
    return None


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        if any(a in ("-h", "--help", "--version") for a in argv):
            _parser().parse_args(argv)
            return 0
        return _fail("missing `--` before the entry command (see --help)")
    cut = argv.index("--")
    try:
        args = _parser().parse_args(argv[:cut])
    except _UsageError as e:
        return _fail(str(e))
    command = argv[cut + 1:]
    status = {"probe_version": __version__, "backend": args.backend, "pid": os.getpid(),
              "command": command, "exit_code": None, "probe_error": None, "entry_error": None,
              "export_error": None, "nvtx_provider": None, "outputs": [], "children": [], "summary": {},
              "notes": []}
    if args.backend in ("torch", "emulate") and not args.out:
        return _fail("--out is required for --backend %s" % args.backend, args.status, status)
    problem = _torch_problem(args.backend)
    if problem:
        return _fail(problem, args.status, status)
    if args.backend == "emulate":
        try:
            roofline.gpu(args.gpu)
        except ValueError as e:
            return _fail(str(e), args.status, status)
    try:
        plan = entry.plan(command)
    except entry.EntryError as e:
        return _fail(str(e), args.status, status)
    if args.out:
        out_dir = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(out_dir):
            return _fail("output directory does not exist: %s" % out_dir, args.status, status)
        try:
            os.unlink(args.out + ".children")
        except OSError:
            pass

    cfg = session.Config(args.backend, args.out, args.overlay, args.workspace, args.gpu, command,
                         args.autograd_nvtx == "on")
    session.export_env(cfg)
    sess = session.Session(cfg, "main")
    try:
        sess.install()
    except (overlay_hook.OverlayError, ValueError) as e:
        return _fail(str(e), args.status, status)

    if args.line_ranges:  # planner's line strategy (line_ranges.py)
        os.environ["KERNLENS_PROBE_LINE_RANGES"] = os.path.abspath(args.line_ranges)
    try:
        from . import line_ranges
        line_ranges.install_from_env()
    except (OSError, ValueError, KeyError) as e:
        return _fail("line ranges: %s" % e, args.status, status)

    if args.discover_calls:  # planner's discovery pass (call_discovery.py)
        if not args.workspace:
            return _fail("--discover-calls needs --workspace", args.status, status)
        from . import call_discovery
        call_discovery.install(args.workspace, os.path.abspath(args.discover_calls))

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)

    rc = 0
    try:
        if plan.kind == "subprocess":
            rc = entry.run_subprocess(plan)
        else:
            entry.run_in_process(plan)
    except entry.EntryError as e:
        sys.stderr.write("kernlens-probe: error: %s\n" % e)
        status["entry_error"] = str(e)
        rc = 2
    except BaseException as e:  # the program's own failure: Python's behaviour
        if not isinstance(e, SystemExit):
            entry.print_exception(e)
            status["entry_error"] = "%s: %s" % (type(e).__name__, e)
        rc = entry.exit_code(e)
    finally:
        sys.stdout.flush()
    if rc != 0:
        sess.partial = True
    entry.join_threads()
    if args.discover_calls:
        from . import call_discovery
        derr = call_discovery.finish()
        if derr:
            sys.stderr.write("kernlens-probe: warning: %s\n" % derr)

    err = sess.finish()
    unmodelled = (sess.summary or {}).get("unmodelled_ops") or {}
    if unmodelled:
        sys.stderr.write("kernlens-probe: warning: the emulator does not model %d op launches (emitted as a "
                         "generic elementwise kernel): %s\n" % (sum(unmodelled.values()), ", ".join(
                             "%s x%d" % kv for kv in sorted(unmodelled.items()))))
    status["exit_code"] = rc
    status["nvtx_provider"] = nvtx_provider.description()
    status["outputs"] = list(sess.outputs)
    status["summary"] = sess.summary
    status["notes"] = list(NOTES)
    if args.out:
        status["children"] = session.read_child_log(cfg.out)
    if err:
        sys.stderr.write("kernlens-probe: error: %s\n" % err)
        status["export_error"] = err
        if rc == 0:
            rc = 3
    if args.status:
        _write_status(args.status, status)
    return rc


if __name__ == "__main__":
    sys.exit(main())
