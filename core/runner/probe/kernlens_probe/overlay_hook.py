"""Serve instrumented ("overlay") sources in place of workspace files, without writing them.

Overlay directory layout (written by the C++ side, docs/probe.md):
    OVERLAY_DIR/overlay.json   {"version": 1, "workspace": "/abs/root",
                                "files": {"pkg/model.py": "files/pkg/model.py", ...}}
    OVERLAY_DIR/files/...      the instrumented texts (values may also be absolute paths)

Contract:
  * A module whose file (realpath) is a key of "files" is compiled from the overlay text with the
    ORIGINAL absolute path as code filename, so tracebacks, __file__ and inspect show the user's path.
  * Bytecode is never read or written for overlaid modules (stale .pyc of the original is ignored).
  * Code objects carry the ORIGINAL line numbers and columns: the overlay text is parsed, every
    AST node is moved to the original line it came from (inserted lines, e.g. the `with
    torch.cuda.nvtx.range(...)` of a range, take the line of the first statement they wrap) and
    its columns shifted by the line's change of indentation, then compiled. So tracebacks,
    f_lineno, co_firstlineno, warnings and inspect.getsource show the user's file as it is on
    disk (linecache is not seeded; it reads the original).
  * Fallback, per file: when the original cannot be read or the overlay text does not parse, the
    file is compiled from the overlay text as before with linecache seeded with it (line numbers
    of the instrumented text) and a note says so; when the overlay text cannot be read at all the
    original file runs un-overlaid and a note says so. Never an error in the program.
  * The user's files are only ever opened for reading (by the normal importer, for non-overlaid files).
"""

import ast
import difflib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import linecache
import os
import sys
import tokenize

from . import note

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
        """Code object of the overlay text, carrying the original `filename` and line numbers."""
        try:
            text = self.source_text(filename)
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            note("overlay text of %s unreadable (%s: %s): the file ran un-overlaid, its lines were not "
                 "instrumented" % (filename, type(e).__name__, e))
            with io.open_code(filename) as f:
                return compile(f.read(), filename, "exec", dont_inherit=True)
        try:
            with io.open_code(filename) as f:
                raw = f.read()
            original = raw.decode(tokenize.detect_encoding(io.BytesIO(raw).readline)[0])
            tree = ast.parse(text, filename)
            remap_lines(tree, text, original)
            return compile(tree, filename, "exec", dont_inherit=True)
        except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as e:
            note("original of %s unreadable (%s: %s): tracebacks of that file show the instrumented "
                 "text's line numbers" % (filename, type(e).__name__, e))
        lines = text.splitlines(True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        # mtime None: linecache.checkcache never evicts it (same rule as loader-provided source).
        linecache.cache[filename] = (len(text), None, lines, filename)
        return compile(self.source_bytes(filename), filename, "exec", dont_inherit=True)


def _indent(line):
    return len(line) - len(line.lstrip(" \t"))


def line_map(text, original):
    """For each line of `text` (1-based index; [0] unused): (original line, column shift), where
    column shift = indentation in `text` - indentation in `original`. Lines equal up to leading
    whitespace are matched in order (difflib); a block of changed lines maps line by line onto the
    block it replaced (clamped to its last line); a line only in `text` takes the next matched
    line (the statement an inserted `with` wraps), or the last original line at the end."""
    a = text.splitlines()
    b = original.splitlines()
    out = [None] * (len(a) + 1)
    sm = difflib.SequenceMatcher(None, [x.strip() for x in a], [x.strip() for x in b], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag in ("equal", "replace"):
            for i in range(i1, i2):
                j = min(j1 + (i - i1), j2 - 1)
                out[i + 1] = (j + 1, _indent(a[i]) - _indent(b[j]))
    nxt = max(len(b), 1)
    for ln in range(len(a), 0, -1):
        if out[ln] is None:  # inserted: columns relative to the target line's indentation
            target_indent = _indent(b[nxt - 1]) if 0 < nxt <= len(b) else 0
            out[ln] = (nxt, _indent(a[ln - 1]) - target_indent)
        else:
            nxt = out[ln][0]
    return out


def remap_lines(tree, text, original):
    """Moves every node of `tree` (parsed from `text`) to its line and column in `original`."""
    m = line_map(text, original)
    last = len(m) - 1
    for node in ast.walk(tree):
        ln = getattr(node, "lineno", None)
        if ln is None:
            continue
        end = getattr(node, "end_lineno", None) or ln
        o_ln, sh = m[min(max(ln, 1), last)] if last else (ln, 0)
        o_end, sh_end = m[min(max(end, 1), last)] if last else (end, 0)
        node.lineno = o_ln
        node.end_lineno = max(o_end, o_ln)
        if getattr(node, "col_offset", None) is not None:
            node.col_offset = max(0, node.col_offset - sh)
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset = max(0, node.end_col_offset - sh_end)
            if node.end_lineno == node.lineno and node.end_col_offset < node.col_offset:
                node.end_col_offset = node.col_offset


class OverlayLoader(importlib.machinery.SourceFileLoader):
    """SourceFileLoader that compiles the overlay text and never touches bytecode caches."""

    def __init__(self, fullname, path, overlay):
        super().__init__(fullname, path)
        self._overlay = overlay

    def get_source(self, fullname):
        """The user's file (what the code objects' line numbers refer to), or the overlay text
        where the file fell back to the instrumented numbering."""
        if self.path in linecache.cache and linecache.cache[self.path][1] is None:
            return self._overlay.source_text(self.path)
        return super().get_source(fullname)

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
