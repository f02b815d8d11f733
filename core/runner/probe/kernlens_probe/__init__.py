"""kernlens probe: runs a user's entry command unchanged under kernlens.

Pieces (one file each):
  overlay_hook   sys.meta_path finder serving instrumented sources from an overlay directory
  post_import    run callbacks right after a given module is imported (lazy torch patching)
  nvtx_provider  torch.cuda.nvtx on every machine (torch's own -> ctypes libnvToolsExt -> no-op)
  entry          run `python script.py` / `python -m mod` / `torchrun` / any command
  session        environment contract with child processes (sitecustomize.py)
  torch_backend  torch.profiler around the entry, Kineto JSON out
  emulate        TorchDispatchMode observer -> emulated GPU kernels -> nsys-schema SQLite
  kernel_table   ordered ATen op -> GPU kernel(s) table used by emulate
  roofline       GPU models (h100, h200, a100) and kernel duration model
  nsys_writer    nsys-schema (3.25.0 column set) SQLite writer
  trace_chain    the program's sys.settrace/setprofile beside the probe's tracers, blind to the probe
  warn_location  warnings keep the location a plain run gives them
  cuda_check     "is there a CUDA device?" through NVML, without initialising CUDA in the program

The contract with the C++ runner is documented in docs/probe.md.
"""

__version__ = "0.1.0"

# Product string written into emulated exports (META_DATA_EXPORT.EXPORT_PRODUCT_VERSION).
# The C++ reader sets ProfileModel.metadata.emulated when this value contains "emulated".
EMULATED_PRODUCT_VERSION = "kernlens-emulate %s (emulated)" % __version__

BACKENDS = ("nsys", "torch", "emulate")

# Where the probe could not do its part and fell back (a file left un-overlaid, an op run
# unmodelled, ...): one line each, in the status JSON's "notes" (docs/probe.md §1), which the C++
# runner shows among the run's notes. Never printed into the program's own output.
NOTES = []


def note(message):
    """Records one fallback note (once per distinct text)."""
    if message not in NOTES:
        NOTES.append(message)
