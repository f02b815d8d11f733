"""kernlens from a wheel: the native binary and its data inside this package.

The `kernlens` command (a console script) and `python -m kernlens` both exec the binary
kernlens/bin/kernlens, which finds its probe at kernlens/share/kernlens/probe (relative to its
own executable, as in any install).
"""
import os

__all__ = ["binary"]


def binary() -> str:
    """The path of the kernlens executable installed with this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kernlens")
