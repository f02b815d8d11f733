"""Run callbacks right after a module is imported, without importing it ourselves.

Used to patch torch.cuda.nvtx (and start backends) only when the program imports torch, so a
child process that never touches torch pays nothing.
"""

import importlib.abc
import sys
import threading


class _HookLoader(importlib.abc.Loader):
    def __init__(self, inner, fire):
        self._inner = inner
        self._fire = fire

    def create_module(self, spec):
        create = getattr(self._inner, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._fire(module)

    def __getattr__(self, name):  # is_package, get_code, get_source, get_resource_reader, ...
        return getattr(self._inner, name)


class PostImportFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.hooks = {}
        self._busy = threading.local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.hooks or getattr(self._busy, "name", None) == fullname:
            return None
        self._busy.name = fullname
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.name = None
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _HookLoader(spec.loader, lambda m, n=fullname: self._fire(n, m))
        return spec

    def _fire(self, name, module):
        for cb in self.hooks.pop(name, []):
            _call(cb, module)


def _call(cb, module):
    try:
        cb(module)
    except Exception as e:  # never break the user's import
        sys.stderr.write("kernlens-probe: warning: post-import hook for %s failed: %s\n"
                         % (getattr(module, "__name__", "?"), e))


_finder = None


def when_imported(name, callback):
    """Calls callback(module) now if `name` is imported, else right after its first import."""
    global _finder
    mod = sys.modules.get(name)
    if mod is not None:
        _call(callback, mod)
        return
    if _finder is None:
        _finder = PostImportFinder()
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    _finder.hooks.setdefault(name, []).append(callback)
