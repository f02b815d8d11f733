"""One probe session per process: overlay hook + NVTX + backend, for the main process and children.

The main process (python -m kernlens_probe) exports this environment before running the entry;
every Python child started from it (subprocess, torchrun workers, ...) imports the probe's
sitecustomize.py (the probe dir is first on PYTHONPATH), which calls activate_child():

  KERNLENS_PROBE_ROOT_PID   pid of the main probe process (children: any other pid)
  KERNLENS_PROBE_DIR        the probe directory (also prepended to PYTHONPATH)
  KERNLENS_PROBE_OVERLAY    overlay directory ("" = none)
  KERNLENS_PROBE_WORKSPACE  workspace root override ("" = from the manifest)
  KERNLENS_PROBE_BACKEND    nsys | torch | emulate
  KERNLENS_PROBE_OUT        the main OUT_PATH; a child writes child_out_path(OUT_PATH)
  KERNLENS_PROBE_GPU        GPU model for emulate
  KERNLENS_PROBE_CHILD_LOG  file children append one JSON line to per output they write
  KERNLENS_PROBE_AUTOGRAD_NVTX  "1": emit_nvtx's sequence ranges (nsys: the probe enters
                            torch.autograd.profiler.emit_nvtx(); emulate: autograd.py writes them)

Backends start lazily when the program imports torch (no torch import is forced), so children
that never use torch cost nothing and write nothing.
"""

import atexit
import json
import os
import sys
import threading

from . import nvtx_provider, overlay_hook, post_import, roofline, step_scopes, trace_chain, warn_location

ENV_KEYS = ("KERNLENS_PROBE_ROOT_PID", "KERNLENS_PROBE_DIR", "KERNLENS_PROBE_OVERLAY",
            "KERNLENS_PROBE_WORKSPACE", "KERNLENS_PROBE_BACKEND", "KERNLENS_PROBE_OUT",
            "KERNLENS_PROBE_GPU", "KERNLENS_PROBE_CHILD_LOG", "KERNLENS_PROBE_AUTOGRAD_NVTX")


class Config:
    def __init__(self, backend, out=None, overlay=None, workspace=None, gpu="h100", argv=(), autograd_nvtx=True):
        self.backend = backend
        self.autograd_nvtx = autograd_nvtx
        self.out = os.path.abspath(out) if out else None
        self.overlay = os.path.abspath(overlay) if overlay else None
        self.workspace = os.path.abspath(workspace) if workspace else None
        self.gpu = gpu or "h100"
        self.argv = list(argv)


def probe_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_out_path(out, pid=None, rank=None):
    """OUT.sqlite -> OUT.rank<RANK>.sqlite (env RANK set, e.g. torchrun) else OUT.pid<PID>.sqlite."""
    stem, ext = os.path.splitext(out)
    rank = os.environ.get("RANK") if rank is None else rank
    if rank not in (None, ""):
        return "%s.rank%s%s" % (stem, rank, ext)
    return "%s.pid%d%s" % (stem, pid if pid is not None else os.getpid(), ext)


def export_env(cfg):
    d = probe_dir()
    os.environ["KERNLENS_PROBE_ROOT_PID"] = str(os.getpid())
    os.environ["KERNLENS_PROBE_DIR"] = d
    os.environ["KERNLENS_PROBE_OVERLAY"] = cfg.overlay or ""
    os.environ["KERNLENS_PROBE_WORKSPACE"] = cfg.workspace or ""
    os.environ["KERNLENS_PROBE_BACKEND"] = cfg.backend
    os.environ["KERNLENS_PROBE_OUT"] = cfg.out or ""
    os.environ["KERNLENS_PROBE_GPU"] = cfg.gpu
    os.environ["KERNLENS_PROBE_AUTOGRAD_NVTX"] = "1" if cfg.autograd_nvtx else "0"
    if cfg.out:
        os.environ["KERNLENS_PROBE_CHILD_LOG"] = cfg.out + ".children"
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not parts or os.path.abspath(parts[0]) != d:
        os.environ["PYTHONPATH"] = os.pathsep.join([d] + [p for p in parts if os.path.abspath(p) != d])


class Session:
    def __init__(self, cfg, role):
        self.cfg = cfg
        self.role = role
        self.spec = roofline.gpu(cfg.gpu) if cfg.backend == "emulate" else None
        self.backend = None       # Emulator or TorchBackend once created
        self.outputs = []
        self.summary = {}
        self.partial = False
        self._finished = False
        self._lock = threading.Lock()

    def install(self):
        """Overlay hook + NVTX provider + lazy backend. Raises OverlayError / ValueError."""
        warn_location.install()
        trace_chain.wrap_program_hooks()
        if self.cfg.overlay:
            overlay_hook.install(self.cfg.overlay, self.cfg.workspace)
        nvtx_provider.install(warn_if_noop=self.cfg.backend == "nsys")
        post_import.when_imported("torch", step_scopes.install)
        if self.cfg.backend == "emulate" and self.role == "child":
            # A child builds its emulator when (if ever) it imports torch: the emulator's modules
            # import torch, and a child that never does (multiprocessing's resource tracker, a
            # `python -c` helper) must not load it because of the probe; it writes no export.
            post_import.when_imported("torch", lambda torch: self._start_emulator().activate())
        elif self.cfg.backend == "emulate":
            self._start_emulator()
            post_import.when_imported("torch", lambda torch: self.backend.activate())
        elif self.cfg.backend == "nsys" and self.cfg.autograd_nvtx:
            post_import.when_imported("torch", _enter_emit_nvtx)
        elif self.cfg.backend == "torch":
            from . import torch_backend
            # Kineto logs its stages and a CPU machine's "gpuGetDeviceCount failed" on stderr, which is
            # not the program's output; read when libtorch loads, so set before torch is imported.
            os.environ.setdefault("KINETO_LOG_LEVEL", "6")
            self.backend = torch_backend.TorchBackend()
            post_import.when_imported("torch", self.backend.start)

    def _start_emulator(self):
        from . import emulate
        self.backend = emulate.Emulator(self.spec, self.cfg.argv, self.role, seq_ranges=self.cfg.autograd_nvtx)
        return self.backend

    def output_path(self):
        if not self.cfg.out:
            return None
        return self.cfg.out if self.role == "main" else child_out_path(self.cfg.out)

    def finish(self):
        """Writes this process's output (once). Returns an error string or None."""
        with self._lock:
            if self._finished:
                return None
            self._finished = True
        path = self.output_path()
        if self.backend is None or path is None:
            return None
        if self.role == "child" and self.cfg.backend == "emulate" and self.backend._mode_cls is None:
            return None  # a child that never imported torch writes nothing
        if self.role == "child" and self.cfg.backend == "torch" and self.backend.prof is None:
            return None
        try:
            if self.cfg.backend == "emulate":
                self.backend.deactivate()
                if self.partial:
                    self.backend.status = "partial: the program failed"
                self.backend.write(path)
                self.summary = self.backend.summary()
            else:
                self.backend.finish(path)
        except Exception as e:
            return "cannot write %s export %s: %s: %s" % (self.cfg.backend, path, type(e).__name__, e)
        self.outputs.append(path)
        if self.role == "child":
            self._log_child(path)
        return None

    def _log_child(self, path):
        log = os.environ.get("KERNLENS_PROBE_CHILD_LOG")
        if not log:
            return
        line = json.dumps({"pid": os.getpid(), "rank": os.environ.get("RANK"), "path": path}) + "\n"
        try:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        except OSError:
            pass


_emit_nvtx = None


def _enter_emit_nvtx(torch):
    """nsys backend: emit_nvtx's per-op ranges with autograd sequence numbers for the whole run
    (backward kernels are attributed through them, core/attribution/autograd_link.h). Needs a
    CUDA build; anything else is a warning, never a failure of the program."""
    global _emit_nvtx
    if _emit_nvtx is not None:
        return
    try:
        from . import cuda_check
        if not cuda_check.cuda_devices_present(torch):  # no GPU kernels to link (CPU build or no device)
            _emit_nvtx = False
            return
        ctx = torch.autograd.profiler.emit_nvtx()
        ctx.__enter__()
        _emit_nvtx = ctx
    except Exception as e:
        _emit_nvtx = False
        sys.stderr.write("kernlens-probe: warning: torch.autograd.profiler.emit_nvtx() unavailable (%s: %s); "
                         "backward kernels stay on the line that called backward()\n" % (type(e).__name__, e))


def config_from_env():
    e = os.environ
    return Config(e.get("KERNLENS_PROBE_BACKEND", "nsys"), e.get("KERNLENS_PROBE_OUT") or None,
                  e.get("KERNLENS_PROBE_OVERLAY") or None, e.get("KERNLENS_PROBE_WORKSPACE") or None,
                  e.get("KERNLENS_PROBE_GPU") or "h100", sys.argv,
                  e.get("KERNLENS_PROBE_AUTOGRAD_NVTX", "1") != "0")


_child = None


def activate_child():
    """Called from sitecustomize in a child process. Never raises: warns and carries on."""
    global _child
    if _child is not None:
        return
    try:
        cfg = config_from_env()
        _child = Session(cfg, "child")
        _child.install()
    except Exception as e:
        sys.stderr.write("kernlens-probe: warning: child process %d not instrumented: %s\n" % (os.getpid(), e))
        return

    def _at_exit():
        err = _child.finish()
        if err:
            sys.stderr.write("kernlens-probe: error: %s\n" % err)
    atexit.register(_at_exit)

    ov = overlay_hook.installed()
    script = sys.argv[0] if sys.argv else ""
    if ov is not None and script not in ("", "-c", "-m", "-") and os.path.isfile(script) \
            and ov.lookup(os.path.abspath(script)) is not None:
        _trampoline(os.path.abspath(script))


def _trampoline(script):
    """The child's main script is overlaid, but CPython reads it itself after site import: run the
    overlay text here as __main__ and end the process the way the interpreter would."""
    from . import entry
    rc = 0
    try:
        entry.run_in_process(entry.Plan("script", script, list(sys.argv)), replace_path0=False)
    except BaseException as e:
        if not isinstance(e, SystemExit):
            entry.print_exception(e)
        rc = entry.exit_code(e)
    entry.join_threads()
    if _child is not None:
        _child.partial = rc != 0
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(rc)


def read_child_log(out):
    path = out + ".children"
    entries = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        pass
    return entries
