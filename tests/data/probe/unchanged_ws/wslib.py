"""Workspace module used by the unchanged-program tests (instrumented like any workspace file)."""
import torch


def square(x):
    y = x * x
    return y


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        t = torch.full((2,), float(i))
        return t * t


def scale(v, by):
    w = v * by
    return w


def explode(v):
    ratio = v / 0
    return check(ratio) + scale(v, 2)


def check(r):
    if r != r or r in (float("inf"), float("-inf")):
        raise ValueError("ratio is not finite: %r" % (r,))
    return r
