"""What a program sees of its own source: __file__, inspect, frames, linecache, warnings."""
import inspect
import linecache
import os
import sys
import traceback
import warnings

import torch

import wslib


def where():
    frame = inspect.currentframe()
    line = frame.f_lineno
    return line, traceback.extract_stack(limit=1)[0].lineno


class Probe:
    def method(self):
        here = sys._getframe().f_lineno
        return here


def main():
    print("file", os.path.basename(__file__), os.path.basename(wslib.__file__))
    print("lines", where(), Probe().method(), where.__code__.co_firstlineno, wslib.scale.__code__.co_firstlineno)
    print("getsource", inspect.getsource(wslib.scale))
    print("getsourcelines", inspect.getsourcelines(Probe)[1], len(inspect.getsourcelines(Probe)[0]))
    print("linecache", linecache.getline(wslib.__file__, 20).rstrip())
    print("module source lines", len(inspect.getsource(wslib).splitlines()))
    warnings.warn("from the program itself")
    print("rng", torch.randn(3).tolist(), torch.rand(1).item())


if __name__ == "__main__":
    torch.manual_seed(1)
    main()
