"""Serve instrumented ("overlay") sources in place of workspace files, without writing them.

Overlay directory layout (written by the C++ side, docs/probe.md):
    OVERLAY_DIR/overlay.json   {"version": 1, "workspace": "/abs/root",
                                "files": {"pkg/model.py": "files/pkg/model.py", ...}}
    OVERLAY_DIR/files/...      the instrumented texts (values may also be absolute paths)

Contract:
  * A module whose file (realpath) is a key of "files" is compiled from the overlay text with the
    ORIGINAL absolute path as code filename, so tracebacks, __file__ and inspect show the user's path.
  * Bytecode is never read or written for overlaid modules (stale .pyc of the original is ignored).
  * linecache is seeded with the overlay text, so traceback lines match the line numbers that ran.
  * The user's files are only ever opened for reading (by the normal importer, for non-overlaid files).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import linecache
import os
import sys
import tokenize

MANIFEST = "overlay.json"


class OverlayError(Exception):
    """Bad overlay directory or manifest (message is one line, for the user)."""


class Overlay:
    """The manifest: realpath(original) -> overlay text path."""

    def __init__(self, overlay_dir, workspace=None):
        self.dir = os.path.abspath(overlay_dir)
        path = os.path.join(self.dir, MANIFEST)
        try:
            with open(path, "r", encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            raise OverlayError("overlay manifest not found: %s" % path) from None
        except (OSError, ValueError) as e:
            raise OverlayError("cannot read overlay manifest %s: %s" % (path, e)) from None
        if not isinstance(data, dict) or not isinstance(data.get("files", {}), dict):
            raise OverlayError("overlay manifest %s: expected an object with a \"files\" object" % path)
        ws = workspace or data.get("workspace")
        if not isinstance(ws, str) or not ws:
            raise OverlayError("overlay manifest %s: no workspace (set \"workspace\" or --workspace)" % path)
        if not os.path.isdir(ws):
            raise OverlayError("workspace is not a directory: %s" % ws)
        self.workspace = os.path.realpath(ws)
        self.files = {}
        for rel, text in data.get("files", {}).items():
            if not isinstance(rel, str) or not isinstance(text, str):
                raise OverlayError("overlay manifest %s: file entries must be strings" % path)
            original = os.path.realpath(os.path.join(self.workspace, rel))
            text_path = text if os.path.isabs(text) else os.path.join(self.dir, text)
            if not os.path.isfile(text_path):
                raise OverlayError("overlay text missing for %s: %s" % (rel, text_path))
            self.files[original] = text_path
        self._text_cache = {}

    def lookup(self, filename):
        """Overlay text path for an original file, or None."""
        if not filename or not self.files:
            return None
        return self.files.get(os.path.realpath(filename))

    def source_bytes(self, filename):
        text_path = self.lookup(filename)
        if text_path is None:
            raise OverlayError("not an overlaid file: %s" % filename)
        with open(text_path, "rb") as f:
            return f.read()

    def source_text(self, filename):
        data = self.source_bytes(filename)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)

    def compile(self, filename):
        """Code object of the overlay text, carrying the original `filename`; seeds linecache."""
        data = self.source_bytes(filename)
        text = self.source_text(filename)
        lines = text.splitlines(True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        # mtime None: linecache.checkcache never evicts it (same rule as loader-provided source).
        linecache.cache[filename] = (len(text), None, lines, filename)
        return compile(data, filename, "exec", dont_inherit=True)


class OverlayLoader(importlib.machinery.SourceFileLoader):
    """SourceFileLoader that compiles the overlay text and never touches bytecode caches."""

    def __init__(self, fullname, path, overlay):
        super().__init__(fullname, path)
        self._overlay = overlay

    def get_source(self, fullname):
        return self._overlay.source_text(self.path)

    def get_code(self, fullname):
        return self._overlay.compile(self.path)

    def set_data(self, path, data, *, _mode=0o666):  # never write .pyc
        return None


class OverlayFinder(importlib.abc.MetaPathFinder):
    """First entry of sys.meta_path: resolves like PathFinder, swaps the loader for overlaid files."""

    def __init__(self, overlay):
        self.overlay = overlay

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.has_location or not spec.origin:
            return None
        if self.overlay.lookup(spec.origin) is None:
            return None
        loader = OverlayLoader(fullname, spec.origin, self.overlay)
        return importlib.util.spec_from_file_location(
            fullname, spec.origin, loader=loader,
            submodule_search_locations=spec.submodule_search_locations)

    def invalidate_caches(self):
        pass


_installed = None


def install(overlay_dir, workspace=None):
    """Installs the finder once per process; returns the Overlay. Raises OverlayError."""
    global _installed
    if _installed is not None:
        return _installed.overlay
    overlay = Overlay(overlay_dir, workspace)
    _installed = OverlayFinder(overlay)
    sys.meta_path.insert(0, _installed)
    return overlay


def installed():
    return _installed.overlay if _installed is not None else None


def compile_file(filename):
    """Code for a script file: the overlay text when overlaid, else the file itself."""
    ov = installed()
    if ov is not None and ov.lookup(filename) is not None:
        return ov.compile(filename)
    with io.open_code(filename) as f:
        data = f.read()
    return compile(data, filename, "exec", dont_inherit=True)
