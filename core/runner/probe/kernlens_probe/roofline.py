"""GPU models and the roofline duration model of the emulate backend.

Durations are MODELLED, never measured: for each emulated kernel
    t = max(flops / (peak[dtype class] * eff_compute), bytes / (bandwidth * eff_memory)) + overhead
    t = max(t, floor)
with FLOPs and bytes computed from the real tensor shapes of the op. GEMMs are tile- and
wave-quantized (tiles are padded to the chosen tile size and run in ceil(tiles / SMs) waves).
Copies between host and device use the PCIe/NVLink-C2C host bandwidth. No wall clock enters a
duration, so a deterministic program gives deterministic durations.

Peak numbers are the vendors' dense (no sparsity) datasheet values for SXM parts.
"""

import collections

GpuSpec = collections.namedtuple("GpuSpec", [
    "key", "name", "chip", "sm_count", "compute", "memory_bytes", "bandwidth", "host_bandwidth",
    "clock_hz", "l2_bytes", "peak", "gemm_style"])

T = 1e12
GiB = 1 << 30

GPUS = {
    "h100": GpuSpec("h100", "NVIDIA H100 80GB HBM3", "GH100", 132, (9, 0), 80 * GiB, 3.35e12, 55e9,
                    1_980_000_000, 50 * (1 << 20),
                    {"fp64": 67 * T, "fp32": 67 * T, "tf32": 494.7 * T, "bf16": 989.4 * T,
                     "fp16": 989.4 * T, "fp8": 1978.9 * T, "int8": 1978.9 * T},
                    "sm90_xmma"),
    "h200": GpuSpec("h200", "NVIDIA H200", "GH100", 132, (9, 0), 141 * GiB, 4.8e12, 55e9,
                    1_980_000_000, 50 * (1 << 20),
                    {"fp64": 67 * T, "fp32": 67 * T, "tf32": 494.7 * T, "bf16": 989.4 * T,
                     "fp16": 989.4 * T, "fp8": 1978.9 * T, "int8": 1978.9 * T},
                    "nvjet"),
    "a100": GpuSpec("a100", "NVIDIA A100-SXM4-80GB", "GA100", 108, (8, 0), 80 * GiB, 2.039e12, 25e9,
                    1_410_000_000, 40 * (1 << 20),
                    {"fp64": 19.5 * T, "fp32": 19.5 * T, "tf32": 156 * T, "bf16": 312 * T,
                     "fp16": 312 * T, "fp8": 312 * T, "int8": 624 * T},
                    "ampere"),
}

# Model constants (ns / fractions). Kept here so docs/probe.md can quote them.
EFF_GEMM = 0.70          # fraction of tensor-core peak a large cuBLAS GEMM reaches
EFF_SIMT = 0.60          # fraction of FP32 peak for non-GEMM arithmetic
EFF_MEMORY = 0.80        # fraction of HBM bandwidth a streaming kernel reaches
KERNEL_OVERHEAD_NS = 1000   # fixed per-kernel cost (launch of CTAs, tail)
KERNEL_FLOOR_NS = 2000      # no kernel is shorter than this
MEMCPY_OVERHEAD_NS = 1500   # fixed per-copy cost
LAUNCH_CALL_NS = 4000       # CPU-side duration of a cudaLaunchKernel call (upper bound)
QUEUE_LATENCY_NS = 3000     # launch call end -> earliest kernel start on an idle stream


def gpu(key):
    """GpuSpec for a --gpu value; raises ValueError listing the known models."""
    spec = GPUS.get((key or "h100").lower())
    if spec is None:
        raise ValueError("unknown --gpu %r (known: %s)" % (key, ", ".join(sorted(GPUS))))
    return spec


def dtype_class(dtype_name, allow_tf32=False):
    """Peak-table key for a torch dtype name ("float32", "bfloat16", ...)."""
    d = str(dtype_name).replace("torch.", "")
    if d in ("bfloat16",):
        return "bf16"
    if d in ("float16", "half"):
        return "fp16"
    if d.startswith("float8"):
        return "fp8"
    if d in ("float64", "double", "complex128"):
        return "fp64"
    if d in ("int8", "uint8"):
        return "int8"
    if d in ("float32", "float", "complex64"):
        return "tf32" if allow_tf32 else "fp32"
    return "fp32"


def ceil_div(a, b):
    return -(-int(a) // int(b))


def gemm_compute_ns(spec, m, n, k, batch, tile_m, tile_n, cls):
    """Tile- and wave-quantized GEMM compute time on tensor cores (SIMT for fp32)."""
    tiles = ceil_div(max(m, 1), tile_m) * ceil_div(max(n, 1), tile_n) * max(batch, 1)
    waves = ceil_div(tiles, spec.sm_count)
    flops_per_wave = 2.0 * tile_m * tile_n * max(k, 1) * spec.sm_count
    eff = EFF_SIMT if cls == "fp32" else EFF_GEMM
    return waves * flops_per_wave / (spec.peak[cls] * eff) * 1e9


def kernel_ns(spec, launch):
    """Modelled duration (ns, int) of one emulated launch (kernel_table.Launch)."""
    if launch.kind == "memcpy":
        bw = spec.host_bandwidth if launch.copy_kind in (1, 2) else spec.bandwidth * EFF_MEMORY / 2
        return int(MEMCPY_OVERHEAD_NS + launch.bytes / bw * 1e9)
    if launch.gemm is not None:
        m, n, k, batch, tm, tn = launch.gemm
        compute = gemm_compute_ns(spec, m, n, k, batch, tm, tn, launch.dtype_class)
    else:
        peak = spec.peak.get(launch.dtype_class, spec.peak["fp32"])
        if launch.dtype_class not in ("fp64", "fp32"):  # non-GEMM math runs on SIMT units
            peak = spec.peak["fp32"] * (2 if launch.dtype_class in ("bf16", "fp16") else 1)
        if launch.tensor_core:
            peak = spec.peak.get(launch.dtype_class, spec.peak["fp32"])
        compute = launch.flops / (peak * (EFF_GEMM if launch.tensor_core else EFF_SIMT)) * 1e9
    memory = launch.bytes / (spec.bandwidth * EFF_MEMORY) * 1e9
    return int(max(KERNEL_FLOOR_NS, max(compute, memory) + KERNEL_OVERHEAD_NS))
