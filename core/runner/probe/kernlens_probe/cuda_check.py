"""Is a CUDA device there?, asked without initialising CUDA in the program.

torch.cuda.is_available() runs c10's one-time CUDA initialisation; on a machine whose driver does
not fit the wheel's CUDA (or has no GPU but a libcuda) that prints PyTorch's "CUDA initialization:
The NVIDIA driver on your system is too old" UserWarning, once per process. A plain run prints it
only if the program itself gets there (a backward pass, its own is_available()); the probe must not
print it first, nor swallow it (the program's own call would then be silent).

Contract: cuda_devices_present(torch) is True only when this PyTorch was built with CUDA, the
CUDA_VISIBLE_DEVICES mask does not hide every device, and NVML (libnvidia-ml.so.1, which every
NVIDIA driver installs) counts at least one device. It never touches torch.cuda.
"""

import ctypes
import os


def cuda_devices_present(torch):
    if not getattr(torch._C, "_has_cuda", False):
        return False
    if os.environ.get("CUDA_VISIBLE_DEVICES") is not None and not os.environ["CUDA_VISIBLE_DEVICES"].strip():
        return False
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    try:
        if lib.nvmlInit_v2() != 0:
            return False
    except AttributeError:
        return False
    try:
        n = ctypes.c_uint(0)
        return lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) == 0 and n.value > 0
    except AttributeError:
        return False
    finally:
        try:
            lib.nvmlShutdown()
        except AttributeError:
            pass
