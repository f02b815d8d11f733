import torch as th
from torch.cuda import nvtx


def step(model, x):
    with th.cuda.nvtx.range("user range"):
        y = model(x)
    nvtx.range_push("user push")
    z = y * 2
    nvtx.range_pop()
    return z

# A form feed starts the next line (Python resets the indentation column there).

def after_form_feed(a):
    if a:
        return 1
    return 2


@th.no_grad()
def decorated(m, x): return m(x)


def ff_body(a):
    b = a
    return b
