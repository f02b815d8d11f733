"""Legacy constructors and Tensor-creation patterns real model code has (Segment Anything's
torch.Tensor([...]) buffers in __init__), under whatever modes the program and the probe enter."""
import copy
import io
import threading

import numpy
import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode


class Sam(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pixel_mean", torch.Tensor([123.675, 116.28, 103.53]).view(-1, 1, 1), False)
        self.register_buffer("pixel_std", torch.Tensor([58.395, 57.12, 57.375]).view(-1, 1, 1), False)
        self.a = nn.Parameter(torch.Tensor(3, 4).zero_())
        self.b = nn.Parameter(torch.tensor([1.0, 2.0]))

    def forward(self, x):
        return ((x - self.pixel_mean) / self.pixel_std).sum() + self.a.sum() + self.b.sum()


class MyT(torch.Tensor):
    pass


class Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class PassthroughF(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def attempt(name, fn):
    try:
        v = fn()
        shown = (tuple(v.shape), str(v.dtype), type(v).__name__) if isinstance(v, torch.Tensor) else v
        print(name, "ok", shown)
    except Exception as e:
        print(name, "FAIL", type(e).__name__, str(e)[:200])


def main():
    torch.manual_seed(0)
    m = Sam()
    print("sam", float(m(torch.rand(3, 4, 4))))
    x = torch.ones(2)
    attempt("list", lambda: torch.Tensor([1.0, 2.0]))
    attempt("FloatTensor", lambda: torch.FloatTensor([1, 2]))
    attempt("LongTensor", lambda: torch.LongTensor(2, 3).fill_(1))
    attempt("empty", lambda: torch.Tensor())
    attempt("from_tensor", lambda: torch.Tensor(torch.ones(2)))
    attempt("from_numpy", lambda: torch.Tensor(numpy.ones(2)))
    attempt("__new__", lambda: torch.Tensor.__new__(torch.Tensor, [1.0, 2.0]))
    attempt("x.new", lambda: x.new([1.0, 2.0]))
    attempt("x.new_size", lambda: x.new(3))
    attempt("new_tensor", lambda: x.new_tensor([3.0]))
    attempt("storage", lambda: torch.Tensor(x.untyped_storage()))
    attempt("set_", lambda: torch.Tensor().set_(x.untyped_storage()))
    attempt("as_subclass", lambda: torch.randn(3).as_subclass(MyT))
    attempt("_make_subclass", lambda: torch.Tensor._make_subclass(MyT, torch.ones(2)))
    attempt("deepcopy", lambda: copy.deepcopy(nn.Parameter(torch.Tensor([1.0]))))
    buf = io.BytesIO()
    torch.save({"m": m.state_dict()}, buf)
    buf.seek(0)
    attempt("save_load", lambda: torch.load(buf)["m"]["pixel_mean"])
    with Passthrough():
        attempt("dispatch_mode_list", lambda: torch.Tensor([1.0, 2.0]))
        attempt("dispatch_mode_param", lambda: nn.Parameter(torch.Tensor([1.0, 2.0])))
    with PassthroughF():
        attempt("function_mode_list", lambda: torch.Tensor([1.0, 2.0]))
        attempt("function_mode_tensor", lambda: torch.tensor([1.0, 2.0]))
    with torch.device("meta"):
        attempt("meta_linear", lambda: nn.Linear(2, 2).weight)
    torch.set_default_dtype(torch.float64)
    attempt("default_float64", lambda: torch.Tensor([1.0]))
    torch.set_default_dtype(torch.float32)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("t", Sam().pixel_mean.sum().item()))
    t.start()
    t.join()
    print("thread", out["t"])
    z = torch.Tensor([1, 2]).requires_grad_()
    (z * 2).sum().backward()
    print("grad", z.grad.tolist())


if __name__ == "__main__":
    main()
