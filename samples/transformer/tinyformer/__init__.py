"""tinyformer: a small decoder-only transformer split across modules, for profiling."""
from .model import TinyFormer

__all__ = ["TinyFormer"]
