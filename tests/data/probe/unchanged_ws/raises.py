"""Raises from a workspace module: the traceback must name the user's own lines."""
import sys

import torch

import wslib


def main():
    x = torch.ones(3)
    total = float(wslib.square(x).sum())
    print("total", total)
    sys.stdout.flush()
    value = wslib.explode(total)
    print("never", value)


if __name__ == "__main__":
    main()
