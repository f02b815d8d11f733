"""The emulator's ordered ATen op -> GPU kernel table.

RULES is an ordered list of (regex on the op name without namespace/overload, family, handler);
the first rule whose regex fully matches the op's overload-packet name wins. A handler gets an Op
(the real args/outputs of the CPU execution) and returns the Launch list a CUDA build of PyTorch
would issue for that op on the modelled GPU: kernels (with realistic cuBLAS/cuDNN/ATen/flash names,
grid/block and FLOPs/bytes from the REAL shapes) and memcpys. Names are realistic, not exact: the
kernel a given cuBLAS/cuDNN version picks depends on its heuristics, which are not modelled.

Ops in NO_KERNEL (views, metadata, allocation) launch nothing. Ops that match no rule get one
generic ATen elementwise kernel and are reported as "unmodelled" in the export's metadata.

The kernel names themselves are data: kernel_table.json (beside this file, installed with the
probe) holds every kernel's short-name and demangled %-templates, its fixed launch shape and the
real trace it was seen in; PARTS holds the sub-templates (functors, reducers, ...) and per-op
choices. This module keeps the logic that picks an entry and fills its parameters.
"""

import collections
import json
import math
import os
import re
import types

import torch

from . import roofline

Launch = collections.namedtuple("Launch", [
    "kind",            # "kernel" | "memcpy"
    "short", "demangled",
    "grid", "block",   # (x, y, z)
    "regs", "smem_static", "smem_dynamic",
    "flops", "bytes", "dtype_class",
    "gemm",            # (m, n, k, batch, tile_m, tile_n) for tile/wave-quantized GEMMs, else None
    "tensor_core",     # bool: runs on tensor cores (non-GEMM path of roofline)
    "copy_kind", "src_kind", "dst_kind",   # memcpy only (ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND)
])


def kernel(short, demangled=None, grid=(1, 1, 1), block=(128, 1, 1), regs=32, smem_static=0,
           smem_dynamic=0, flops=0, nbytes=0, dtype_class="fp32", gemm=None, tensor_core=False):
    return Launch("kernel", short, demangled or short, tuple(int(max(1, g)) for g in grid),
                  tuple(int(b) for b in block), regs, smem_static, smem_dynamic, float(flops),
                  float(nbytes), dtype_class, gemm, tensor_core, None, None, None)


def memcpy(nbytes, copy_kind, src_kind, dst_kind):
    return Launch("memcpy", "memcpy", "memcpy", (1, 1, 1), (1, 1, 1), 0, 0, 0, 0.0, float(nbytes),
                  "fp32", None, False, copy_kind, src_kind, dst_kind)


HTOD, DTOH, DTOD = 1, 2, 8
PAGEABLE, DEVICE = 0, 2


def _load_table():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_table.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


TABLE = _load_table()
KERNELS = {e["id"]: e for e in TABLE["kernels"]}
PARTS = TABLE["parts"]
STREAM_ID = TABLE["stream"]["id"]


def names(key, **params):
    """(short, demangled) of kernel_table.json's entry `key`, its %-templates filled with `params`
    (the demangled name is the short one when the entry has no demangled template)."""
    e = KERNELS[key]
    short = e["name"] % params
    return short, (e["demangled"] % params if "demangled" in e else short)


def launch(key, grid, params=None, **kw):
    """kernel() of entry `key`: its names from `params`, its block and registers from the data
    unless given."""
    e = KERNELS[key]
    short, dem = names(key, **(params or {}))
    if "block" in e:
        kw.setdefault("block", tuple(e["block"]))
    if "regs" in e:
        kw.setdefault("regs", e["regs"])
    return kernel(short, dem, grid=grid, **kw)


class Op:
    """One observed ATen call: name ("addmm"), overload ("default"), real args/kwargs/outputs."""

    def __init__(self, func, args, kwargs, out, spec, allow_tf32=False):
        self.func = func
        self.name = func.overloadpacket.__name__
        self.namespace = getattr(func, "namespace", None) or str(func).split(".")[0]
        self.overload = getattr(func, "_overloadname", "default")
        self.args, self.kwargs, self.out = args, kwargs or {}, out
        self.spec = spec
        self.allow_tf32 = allow_tf32
        self.inputs = flat_tensors((args, self.kwargs))
        self.outputs = flat_tensors(out)
        # The dtype a GPU's autocast region runs this op in (None: the tensors' own); set by the
        # emulator for AUTOCAST_LOWER ops inside torch.autocast("cuda", dtype).
        self.autocast_dtype = None

    @property
    def first(self):
        return self.inputs[0] if self.inputs else (self.outputs[0] if self.outputs else None)

    def dtype_of(self, t):
        """The dtype `t` has on the GPU for this op: autocast's for a floating-point fp32 input of
        an op autocast runs in lower precision, else its own."""
        if self.autocast_dtype is not None and t is not None and t.dtype == torch.float32:
            return self.autocast_dtype
        return t.dtype if t is not None else torch.float32

    def dtype_class(self, t=None):
        t = t if t is not None else self.first
        return roofline.dtype_class(self.dtype_of(t) if t is not None else "float32", self.allow_tf32)


# The ATen ops CUDA autocast runs in its lower-precision dtype (autocast_mode.cpp's
# "lower_precision_fp" list, as they reach the dispatcher: linear/matmul arrive as mm/addmm/bmm).
AUTOCAST_LOWER = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "addr", "convolution", "_convolution",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_efficient_attention_forward", "_flash_attention_forward"})


def autocast_casts(op, dtype, cache, already=()):
    """The cast kernels CUDA autocast runs before `op` (an AUTOCAST_LOWER op) in a region of
    `dtype`: one copy kernel per fp32 floating-point input, except a leaf that requires grad (a
    weight) already cast in this region (`cache`, autocast's weight cache, keyed by identity) and
    a tensor in `already` (the output of an earlier autocast op: 16-bit on the GPU, fp32 only in
    the CPU run)."""
    out = []
    for t in op.inputs:
        if t.dtype != torch.float32 or not t.is_floating_point() or t in already:
            continue
        # autocast casts linear's/matmul's own arguments: a weight reaches mm/addmm as a view
        # (weight.t()) of the parameter it caches and casts.
        src = t._base if t._base is not None and t._base.is_leaf else t
        if src.is_leaf and src.requires_grad:
            if id(src) in cache:
                continue
            cache[id(src)] = src  # kept alive with the region, so the id is not reused
        cast = torch.empty(src.shape, dtype=dtype, device="meta")
        out.append(elementwise_launch(op, name="copy", out=cast, ins=[src]))
    return out


def flat_tensors(x, acc=None):
    acc = [] if acc is None else acc
    if isinstance(x, torch.Tensor):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            flat_tensors(y, acc)
    elif isinstance(x, dict):
        for y in x.values():
            flat_tensors(y, acc)
    return acc


def nbytes(t):
    return t.numel() * t.element_size()


CTYPES = {torch.float32: "float", torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16",
          torch.float64: "double", torch.int64: "long", torch.int32: "int", torch.int16: "short",
          torch.int8: "signed char", torch.uint8: "unsigned char", torch.bool: "bool",
          torch.complex64: "c10::complex<float>", torch.complex128: "c10::complex<double>"}


def ctype(t):
    return CTYPES.get(t.dtype, "float") if t is not None else "float"


# ---- GEMM ------------------------------------------------------------------------------------

def transposed(t):
    """True when the last two dims are a transposed view (column-major in memory)."""
    if t.dim() < 2:
        return False
    return t.stride(-1) != 1 and t.stride(-2) == 1


def pick_tile(m, n):
    if m >= 256 and n >= 2048:
        return 128, 256
    if m >= 128 and n >= 128:
        return 128, 128
    if n >= 128:
        return 64, 128
    return 64, 64


SM90_IO = PARTS["gemm_io"]  # cuBLAS's/cuDNN's <A><B>_<C><acc>_<scale> type tag by dtype class


# fp32 (no TF32) GEMMs on Hopper run cuBLAS's sm80 FFMA kernels: the names seen on a real H100
# (tests/data/real/nsys/h100_2gpu_1s.sqlite) are tilesize64x256x8 warpsize1x4x1,
# 128x128x8 2x2x1, 128x32x8 2x2x1 and 32x32x8 1x2x1, stage3. Which one cuBLAS picks for a shape
# is its heuristic (not modelled); this picks by the output's size.
def ffma_tile(m, n):
    if m < 128 and n < 128:
        return 32, 32, "1x2x1"
    if n >= 256 and m < 128:
        return 64, 256, "1x4x1"
    if n < 128:
        return 128, 32, "2x2x1"
    return 128, 128, "2x2x1"


def gemm_key(spec, cls):
    """kernel_table.json's GEMM entry for the GPU model and dtype class (see gemm_name)."""
    if spec.gemm_style in ("sm90_xmma", "nvjet"):
        if cls in ("bf16", "fp16", "fp8"):
            return "gemm_nvjet"
        return "gemm_sm80_ffma" if cls == "fp32" else "gemm_sm90_xmma"
    return {"bf16": "gemm_ampere_bf16", "fp16": "gemm_ampere_fp16", "tf32": "gemm_sm80_tf32"}.get(cls, "gemm_ampere_sgemm")


def gemm_name(spec, cls, layout, tm, tn, batched, bias=False):
    """cuBLAS-style kernel name for the GPU model. layout: cuBLAS op letters, e.g. "tn".
    Hopper (sm90_xmma / nvjet styles): 16-bit and fp8 GEMMs are cuBLASLt's nvjet kernels, as the
    CUDA 12.8+/13 cuBLAS of PyTorch 2.x wheels runs them on H100/H200
    (nvjet_tst_<tile>_64x<stages>_<cluster>_<h|v>_bz_[coopA|coopB_][bias_]<ops>; `bias_` when
    the bias is fused into the epilogue, i.e. addmm with a 1-D bias); fp32 runs the sm80 FFMA
    kernels (ffma_tile); TF32 the sm90 xmma kernels. A100: ampere/sm80 names."""
    key = gemm_key(spec, cls)
    p = {"layout": layout, "tm": tm, "tn": tn}
    if key == "gemm_nvjet":
        p.update(cluster="1x2" if tn >= 256 else "1x1", coop="coopA_" if tm >= 128 else "coopB_",
                 bias="bias_" if bias else "", layout=layout.upper())
    elif key == "gemm_sm80_ffma":
        p["warps"] = ffma_tile(tm, tn)[2]
    elif key == "gemm_sm90_xmma":
        p.update(io=SM90_IO.get(cls, SM90_IO["fp32"]), tk=64 if cls in ("bf16", "fp16", "fp8", "int8") else 32,
                 wg="2x1x1" if tn >= 256 else "1x1x1")
    elif key == "gemm_ampere_sgemm":
        p.update(tm=min(tm, 128), tn=min(tn, 128))
    return names(key, **p)[0]


def gemm_launch(op, a, b, batch=1, extra_c=False, bias=False):
    spec = op.spec
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    cls = op.dtype_class(a)
    layout = ("t" if transposed(b) else "n") + ("t" if transposed(a) else "n")
    sm90 = spec.gemm_style in ("sm90_xmma", "nvjet")
    if sm90 and cls == "fp32":
        tm, tn, _ = ffma_tile(m, n)
    else:
        tm, tn = pick_tile(m, n)
    name = gemm_name(spec, cls, layout, tm, tn, batch > 1, bias=bias and batch == 1)
    dtype = op.dtype_of(a) if hasattr(op, "dtype_of") else a.dtype
    es = dtype.itemsize
    moved = (m * k + k * n + m * n * (2 if extra_c else 1)) * es * batch
    e = KERNELS[gemm_key(spec, cls)]
    return kernel(name, name, grid=(math.ceil(n / tn), math.ceil(m / tm), batch),
                  block=tuple(e["block"]), regs=e["regs"],
                  smem_dynamic=(213 if sm90 else 98) * 1024, flops=2.0 * m * n * k * batch,
                  nbytes=moved, dtype_class=cls, gemm=(m, n, k, batch, tm, tn),
                  tensor_core=cls != "fp32")


def h_mm(op):
    a, b = op.args[0], op.args[1]
    return [gemm_launch(op, a, b)]


def h_addmm(op):
    bias, a, b = op.args[0], op.args[1], op.args[2]
    return [gemm_launch(op, a, b, extra_c=bias.dim() == 2, bias=bias.dim() == 1)]


def h_bmm(op):
    a, b = op.args[0], op.args[1]
    return [gemm_launch(op, a, b, batch=a.shape[0])]


def h_baddbmm(op):
    a, b = op.args[1], op.args[2]
    return [gemm_launch(op, a, b, batch=a.shape[0], extra_c=True)]


def h_gemv(op):
    mat, vec = (op.args[1], op.args[2]) if op.name == "addmv" else (op.args[0], op.args[1])
    return [launch("gemv_t" if transposed(mat) else "gemv_n", (math.ceil(mat.shape[0] / 128), 1, 1),
                   {"T": ctype(mat)}, flops=2.0 * mat.numel(), nbytes=nbytes(mat) + nbytes(vec) * 2,
                   dtype_class=op.dtype_class(mat))]


def h_conv(op):
    """aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups): cuDNN's forward convolution; a transposed one (ConvTranspose*d)
    runs cuDNN's backward-data algorithm on a GPU (cudnn_convolution_transpose), so a dgrad
    kernel."""
    x, w = op.args[0], op.args[1]
    out = op.outputs[0]
    groups = op.args[8] if len(op.args) > 8 and isinstance(op.args[8], int) else 1
    transposed = len(op.args) > 6 and op.args[6] is True
    ksize = w.numel() // max(w.shape[0], 1)
    # Multiply-adds per output element (forward: weight[out] = in/g x k), per input element
    # (transposed: weight[in] = out/g x k).
    flops = 2.0 * (x.numel() if transposed else out.numel()) * ksize
    cls = op.dtype_class(x)
    io = SM90_IO.get(cls, SM90_IO["fp32"])
    arch = "sm90" if op.spec.gemm_style != "ampere" else "sm80"
    p = {"arch": arch, "kind": "dgrad" if transposed else "fprop", "io": io, "groups": groups}
    return [launch("conv_xmma", (math.ceil(out.numel() / (128 * 128)), 1, 1), p, smem_dynamic=200 * 1024, flops=flops,
                   nbytes=nbytes(x) + nbytes(w) + nbytes(out), dtype_class=cls, tensor_core=cls != "fp32")]


def h_conv_backward(op):
    grad, x, w = op.args[0], op.args[1], op.args[2]
    cls = op.dtype_class(x)
    io = SM90_IO.get(cls, SM90_IO["fp32"])
    arch = "sm90" if op.spec.gemm_style != "ampere" else "sm80"
    ksize = w.numel() // max(w.shape[0], 1)
    flops = 2.0 * grad.numel() * ksize
    mask = op.args[-1] if isinstance(op.args[-1], (list, tuple)) else (True, True, True)
    # (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, ...): the
    # input gradient of a transposed convolution is a forward convolution of grad_output.
    transposed = len(op.args) > 7 and op.args[7] is True
    out = []
    for i, kind in enumerate(("fprop" if transposed else "dgrad", "wgrad")):
        if i < len(mask) and mask[i]:
            p = {"arch": arch, "kind": kind, "io": io, "groups": 1}
            out.append(launch("conv_xmma", (math.ceil(grad.numel() / (128 * 128)), 1, 1), p,
                              smem_dynamic=200 * 1024, flops=flops,
                              nbytes=nbytes(grad) + nbytes(x) + nbytes(w), dtype_class=cls,
                              tensor_core=cls != "fp32"))
    if len(mask) > 2 and mask[2]:
        out.extend(reduce_launch(op, grad, name="sum"))  # the bias gradient
    return out


# ---- attention -------------------------------------------------------------------------------

def attention_shape(q, k):
    if q.dim() == 4:
        b, h, sq, d = q.shape
    else:
        b, h, sq, d = 1, q.shape[0] if q.dim() == 3 else 1, q.shape[-2], q.shape[-1]
    return b, h, sq, k.shape[-2], d


def _sdp_enabled(name):
    try:
        return bool(getattr(torch.backends.cuda, name)())
    except Exception:
        return True


def sdpa_backend(op, q, k, v, mask, dropout):
    """The backend CUDA PyTorch 2.x's select_sdp_backend (transformers/cuda/sdp_utils.cpp) picks
    on the modelled GPU, for the checks the emulator can see: priority cuDNN > flash > efficient
    > math on sm90+ (PyTorch >= 2.10 wheels bring cuDNN > 9.15, which check_prefer_cudnn_attention
    requires; TORCH_CUDNN_SDPA_DEPRIORITIZED=1 turns that off, as in PyTorch), flash > efficient >
    math on sm80; each backend must be enabled (torch.backends.cuda.*_sdp_enabled(), which
    torch.nn.attention.sdpa_kernel sets). cuDNN: fp16/bf16, equal head dims <= 128, multiple of 8.
    flash: fp16/bf16, equal head dims <= 256, no attn_mask. efficient: fp32/fp16/bf16, head dims
    a multiple of 4 (fp32) / 8 (16-bit). Otherwise "math" (the caller emits the decomposition's
    kernels). Returns "cudnn" | "flash" | "efficient" | "math"."""
    half = op.dtype_of(q) in (torch.float16, torch.bfloat16)
    dq, dk, dv = q.shape[-1], k.shape[-1], v.shape[-1]
    dense = q.dim() == 4 and not q.is_nested
    order = ["flash", "efficient", "math"]
    if op.spec.gemm_style in ("sm90_xmma", "nvjet") and os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "") not in ("1", "true", "ON", "on"):
        order = ["cudnn"] + order
    for b in order:
        if b == "cudnn" and _sdp_enabled("cudnn_sdp_enabled") and half and dense and dq == dk == dv \
                and dq <= 128 and dq % 8 == 0:
            return b
        if b == "flash" and _sdp_enabled("flash_sdp_enabled") and half and dq == dk == dv and dq <= 256 \
                and mask is None:
            return b
        if b == "efficient" and _sdp_enabled("mem_efficient_sdp_enabled") and \
                q.dtype in (torch.float32, torch.float16, torch.bfloat16) and dq == dk \
                and dq % (8 if half else 4) == 0 and dv % (8 if half else 4) == 0:
            return b
    return "math"


def _flash_tiles(d):
    """pytorch_flash's Flash_fwd_kernel_traits<d, kBlockM, kBlockN, warps> for sm8x/sm90
    (flash_fwd_launch_template.h run_mha_fwd_hdim*): hdim 64 -> <64, 128, 128, 4> as seen on a
    real H100 (tests/data/real/tracelens_h100_bert_small_infer.json.gz); larger head dims use
    kBlockN 64."""
    for hd in (32, 64, 96, 128, 160, 192, 224, 256):
        if d <= hd:
            break
    return hd, 128, (128 if hd <= 64 else 64), (4 if hd <= 128 else 8)


def _attn_args(op):
    """(mask, dropout_p, is_causal) of an SDPA-family op from its schema's argument names."""
    names = []
    try:
        names = [a.name for a in op.func._schema.arguments]
    except AttributeError:
        pass
    vals = dict(zip(names, op.args))
    vals.update(op.kwargs)
    mask = vals.get("attn_mask", vals.get("attn_bias"))
    mask = mask if isinstance(mask, torch.Tensor) else None
    dropout = vals.get("dropout_p", 0.0) or 0.0
    causal = bool(vals.get("is_causal", False))
    return mask, float(dropout), causal


CUDNN_SDPA_IO = PARTS["cudnn_sdpa_io"]


def _flash_element(cls):
    return PARTS["flash_element"].get(cls, PARTS["flash_element"]["other"])


def _mem_eff_io(cls):
    return PARTS["mem_eff_io"].get(cls, PARTS["mem_eff_io"]["other"])


def h_attention_fwd(op):
    q, k, v = op.args[0], op.args[1], op.args[2]
    b, h, sq, sk, d = attention_shape(q, k)
    mask, dropout, causal = _attn_args(op)
    causal = causal or any(a is True for a in op.args[3:] if isinstance(a, bool))
    flops = 4.0 * b * h * sq * sk * d / (2 if causal else 1)
    moved = nbytes(q) + nbytes(k) + nbytes(v) + nbytes(q)
    cls = op.dtype_class(q)
    backend = sdpa_backend(op, q, k, v, mask, dropout)
    if backend == "cudnn":
        return [launch("sdpa_cudnn_fprop", (math.ceil(sq / 64), h, b), {"io": CUDNN_SDPA_IO[cls], "d": max(64, d)},
                       smem_dynamic=160 * 1024, flops=flops, nbytes=moved, dtype_class=cls, tensor_core=True)]
    if backend == "flash":
        hd, bm, bn, warps = _flash_tiles(d)
        even_mn = sq % bm == 0 and sk % bn == 0
        # <Kernel_traits, Is_dropout, Is_causal, Is_local, Has_alibi, Is_even_MN, Is_even_K, Return_softmax>
        p = {"hd": hd, "bm": bm, "bn": bn, "warps": warps, "cut": _flash_element(cls),
             "dropout": str(dropout > 0).lower(), "causal": str(causal).lower(), "even_mn": str(even_mn).lower(),
             "even_k": str(d == hd).lower()}
        return [launch("flash_fwd", (math.ceil(sq / bm), b, h), p, block=(32 * warps, 1, 1), smem_dynamic=48 * 1024, flops=flops, nbytes=moved, dtype_class=cls,
                       tensor_core=True)]
    # efficient (and math, which the CPU run already decomposed unless CPU flash ran it: then the
    # memory-efficient kernel is the closest fused stand-in)
    return [launch("fmha_fwd", (math.ceil(sq / 64), h, b), {"io": _mem_eff_io(cls), "T": ctype(q)}, smem_dynamic=64 * 1024, flops=flops, nbytes=moved, dtype_class=cls,
                   tensor_core=cls != "fp32")]


def h_attention_bwd(op):
    grad, q, k, v = op.args[0], op.args[1], op.args[2], op.args[3]
    b, h, sq, sk, d = attention_shape(q, k)
    flops = 10.0 * b * h * sq * sk * d
    moved = 2 * (nbytes(q) + nbytes(k) + nbytes(v)) + 2 * nbytes(grad)
    cls = op.dtype_class(q)
    mask, dropout, causal = _attn_args(op)
    backend = sdpa_backend(op, q, k, v, mask, dropout)
    if backend == "cudnn":
        p = {"io": CUDNN_SDPA_IO[cls], "d": max(64, d)}
        parts = [("sdpa_cudnn_bprop", flops, moved), ("sdpa_cudnn_convert_dq", 0, 2 * nbytes(q))]
        return [launch(key, (math.ceil(sk / 128), h, b), p, smem_dynamic=(200 if f else 0) * 1024, flops=f, nbytes=m,
                       dtype_class=cls, tensor_core=bool(f)) for key, f, m in parts]
    if backend == "flash":
        hd = _flash_tiles(d)[0]
        p = {"hd": hd, "cut": _flash_element(cls), "dropout": str(dropout > 0).lower(), "causal": str(causal).lower(),
             "even_k": str(d == hd).lower()}
        return [
            launch("flash_bwd_dot_do_o", (math.ceil(sq / 128), b, h), p, nbytes=2 * nbytes(grad), dtype_class=cls),
            launch("flash_bwd_dq_dk_dv", (math.ceil(sk / 128), b, h), p, smem_dynamic=96 * 1024,
                   flops=flops, nbytes=moved, dtype_class=cls, tensor_core=True),
            launch("flash_bwd_convert_dq", (math.ceil(sq / 128), b, h), p, nbytes=2 * nbytes(q), dtype_class=cls),
        ]
    return [launch("fmha_bwd", (math.ceil(sk / 64), h, b), {"io": _mem_eff_io(cls), "T": ctype(q)}, smem_dynamic=96 * 1024, flops=flops, nbytes=moved, dtype_class=cls,
                   tensor_core=cls != "fp32")]


# ---- elementwise / reduce / normalization ------------------------------------------------------

FUNCTORS = PARTS["functors"]  # op -> the functor in its elementwise kernel's name (%(T)s: the C type)

FLOPS_PER_ELEMENT = {"gelu": 14, "gelu_backward": 20, "silu": 6, "silu_backward": 8, "sigmoid": 6,
                     "tanh": 6, "exp": 4, "log": 4, "pow": 4, "rsqrt": 2, "sqrt": 2, "erf": 8,
                     "softplus": 6, "addcdiv": 3, "addcmul": 3, "lerp": 3}


def functor(op_name, t):
    return FUNCTORS.get(op_name, PARTS["functor_default"]) % {"op": op_name, "T": ctype(t)}


def elementwise_args(n):
    return PARTS["elementwise_args"] % {"n": n}


def elementwise_launch(op, name=None, out=None, ins=None, flops_per=None):
    base = (name or op.name).rstrip("_")
    ins = [t for t in (op.inputs if ins is None else ins)]
    outs = [out] if out is not None else (op.outputs or ins[:1])
    ref = outs[0] if outs else (ins[0] if ins else None)
    numel = ref.numel() if ref is not None else 1
    moved = sum(nbytes(t) for t in ins) + sum(nbytes(t) for t in outs)
    fun = functor(base, ref)
    arity = len(ins) + len(outs)
    contiguous = all(t.is_contiguous() for t in ins + outs)
    casting = len({t.dtype for t in ins + outs}) > 1
    arr = elementwise_args(max(arity, 1))  # PyTorch 2.x (1.13: at::detail::Array<char*, N>)
    key = "ew_vectorized" if contiguous and not casting else "ew_unrolled" if contiguous else "ew_strided"
    per = flops_per if flops_per is not None else FLOPS_PER_ELEMENT.get(base, 1)
    return launch(key, (math.ceil(numel / 512), 1, 1), {"fun": fun, "arr": arr, "n_in": len(ins)},
                  flops=numel * per, nbytes=moved, dtype_class=op.dtype_class(ref))


def h_elementwise(op):
    return [elementwise_launch(op)]


def h_fill(op):
    out = op.outputs[0] if op.outputs else op.inputs[0]
    return [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0)]


REDUCERS = PARTS["reducers"]  # op -> reduce_kernel's ReduceOp functor (%(T)s: the C type, %(A)s: the accumulator)


def reduce_launch(op, src, reducer=None, name=None):
    t = ctype(src)
    acc = "float" if src.dtype in (torch.float16, torch.bfloat16, torch.float32) else t
    tmpl = reducer or REDUCERS.get(name or op.name, REDUCERS["sum"])
    red = tmpl % {"T": t, "A": acc}
    out_numel = op.outputs[0].numel() if op.outputs else 1
    return [launch("reduce", (max(1, min(out_numel, 65535)), 1, 1), {"T": t, "red": red},
                   smem_static=16, flops=src.numel(), nbytes=nbytes(src) + sum(nbytes(o) for o in op.outputs),
                   dtype_class=op.dtype_class(src))]


def h_reduce(op):
    if op.overload == "other" or (op.name in ("max", "min") and len(op.inputs) > 1):
        return [elementwise_launch(op, name="maximum" if op.name == "max" else "minimum")]
    return reduce_launch(op, op.inputs[0])


def softmax_launch(op, backward):
    src = op.args[1] if backward else op.args[0]
    dim = op.args[2] if backward else op.args[1]
    dim = dim % max(src.dim(), 1)
    is_log = "log" in op.name
    size = src.shape[dim] if src.dim() else 1
    rows = src.numel() // max(size, 1)
    t = ctype(src)
    moved = nbytes(src) * (3 if backward else 2)
    d = "bwd" if backward else "fwd"
    epi = ("LogSoftMax" if is_log else "SoftMax") + ("Backward" if backward else "Forward") + "Epilogue"
    p = {"T": t, "epi": epi, "is_log": "true" if is_log else "false",
         "log2": max(0, math.ceil(math.log2(max(size, 1))))}
    if dim != src.dim() - 1:
        key = "softmax_spatial_" + d
    elif size <= 1024 and size * src.element_size() <= 4096:
        key = "softmax_warp_" + d
    else:
        key = "softmax_block_" + d
    return [launch(key, (max(1, rows // 4), 1, 1), p, flops=src.numel() * 5, nbytes=moved,
                   dtype_class=op.dtype_class(src))]


def h_softmax(op):
    return softmax_launch(op, backward=False)


def h_softmax_bwd(op):
    return softmax_launch(op, backward=True)


def h_layer_norm(op):
    x = op.args[0]
    shape = op.args[1]
    n = int(math.prod(shape)) if shape else 1
    m = x.numel() // max(n, 1)
    t = ctype(x)
    moved = 2 * nbytes(x) + 2 * n * x.element_size() + 8 * m
    p = {"T": t}
    if n % 4 == 0:
        return [launch("layer_norm_vectorized", (m, 1, 1), p, flops=8 * x.numel(), nbytes=moved,
                       dtype_class=op.dtype_class(x))]
    return [launch("layer_norm_moments", (m, 1, 1), p, flops=3 * x.numel(), nbytes=nbytes(x), dtype_class=op.dtype_class(x)),
            launch("layer_norm_forward", (m, 1, 1), p, flops=5 * x.numel(), nbytes=moved, dtype_class=op.dtype_class(x))]


def h_layer_norm_bwd(op):
    grad, x = op.args[0], op.args[1]
    shape = op.args[2]
    n = int(math.prod(shape)) if shape else 1
    m = x.numel() // max(n, 1)
    t = ctype(x)
    out = [launch("layer_norm_grad_input_vectorized" if n % 4 == 0 else "layer_norm_grad_input", (m, 1, 1), {"T": t},
                  flops=10 * x.numel(), nbytes=3 * nbytes(x), dtype_class=op.dtype_class(x))]
    mask = op.args[-1] if isinstance(op.args[-1], (list, tuple)) else (True, True, True)
    if len(mask) > 2 and (mask[1] or mask[2]):
        out.append(launch("gamma_beta_bwd_small" if m <= 128 else "gamma_beta_bwd", (math.ceil(n / 32), 1, 1), {"T": t},
                          flops=4 * x.numel(), nbytes=2 * nbytes(x), dtype_class=op.dtype_class(x)))
    return out


def h_batch_norm(op):
    x = op.args[0]
    t = ctype(x)
    c = x.shape[1] if x.dim() > 1 else 1
    training = any(a is True for a in op.args[5:6]) if len(op.args) > 5 else True
    out = []
    if training:
        out.append(launch("batch_norm_stats", (c, 1, 1), {"T": t}, flops=3 * x.numel(), nbytes=nbytes(x),
                          dtype_class=op.dtype_class(x)))
    out.append(launch("batch_norm_transform", (c, 1, 1), {"T": t}, flops=2 * x.numel(), nbytes=2 * nbytes(x),
                      dtype_class=op.dtype_class(x)))
    return out


# ---- losses, embedding, dropout, random, indexing, copies ----------------------------------------

def h_nll_fwd(op):
    x = op.args[0]
    t = ctype(x)
    reduction = op.args[3] if len(op.args) > 3 else 1
    if reduction == 0:
        return [launch("nll_fwd_no_reduce", (math.ceil(x.shape[0] / 256), 1, 1), {"T": t},
                       nbytes=nbytes(x) // max(x.shape[-1], 1) * 3, dtype_class=op.dtype_class(x))]
    return [launch("nll_fwd_2d" if x.dim() == 2 else "nll_fwd_1d", (1, 1, 1), {"T": t}, flops=x.shape[0] if x.dim() else 1,
                   nbytes=8 * (x.shape[0] if x.dim() else 1) * 2, dtype_class=op.dtype_class(x))]


def h_nll_bwd(op):
    grad_in = op.outputs[0]
    t = ctype(grad_in)
    return [elementwise_launch(op, name="fill", out=grad_in, ins=[], flops_per=0),
            launch("nll_bwd_2d" if grad_in.dim() == 2 else "nll_bwd_1d", (1, 1, 1), {"T": t},
                   nbytes=16 * (grad_in.shape[0] if grad_in.dim() else 1),
                   dtype_class=op.dtype_class(grad_in))]


# Pointwise losses (aten/src/ATen/native/Loss.cpp, cuda/BinaryMiscOpsKernels.cu,
# cuda/PointwiseOpsKernel.cu): forward = one TensorIterator kernel for the per-element loss, then a
# mean/sum reduction unless reduction="none"; backward (the functional overload) = a zeroed
# grad_input (zeros_like) and one kernel over (input, target, grad_output) - grad_output is a
# broadcast 0-dim tensor after a reduction, so that kernel takes the strided path.
# (loss kernel, its dispatch order of reduced-precision types, backward kernel, its arguments)
POINTWISE_LOSSES = {name: (v["forward"], tuple(v["dispatch"]), v["backward"])
                    for name, v in PARTS["pointwise_losses"].items()}
_DISPATCH_BASE = {torch.float64: 1, torch.float32: 2}


def dispatch_lambda(t, extra):
    """The index N of `{lambda()#N}` AT_DISPATCH_FLOATING_TYPES_AND2(A, B, ...) instantiates for
    t's dtype: one lambda per case, in the order double, float, A, B."""
    if t.dtype in _DISPATCH_BASE:
        return _DISPATCH_BASE[t.dtype]
    key = {torch.float16: "half", torch.bfloat16: "bf16"}.get(t.dtype)
    return 3 + extra.index(key) if key in extra else 2


def loss_functor(fn, t, order, arity):
    ty = ctype(t)
    return PARTS["loss_functor"] % {"fn": fn, "n": dispatch_lambda(t, order), "args": ", ".join([ty] * arity)}


def functor_kernel(op, fun, out, ins, flops_per=2):
    """elementwise_launch's kernel choice (vectorized / strided) for an explicit functor name; a
    broadcast input (fewer elements than the output) makes the iteration strided."""
    la = elementwise_launch(op, name="copy", out=out, ins=ins, flops_per=flops_per)
    strided = any(t.numel() != out.numel() for t in ins) or la.short != KERNELS["ew_vectorized"]["name"]
    short, dem = names("ew_strided" if strided else "ew_vectorized", fun=fun, arr=elementwise_args(len(ins) + 1))
    return la._replace(short=short, demangled=dem)


def loss_reduction(op, per, reduction):
    """apply_loss_reduction on CUDA: a mean (1) or sum (2) reduce_kernel of the per-element loss,
    nothing for reduction="none" (0)."""
    if reduction == 0:
        return []
    red = types.SimpleNamespace(name="mean" if reduction == 1 else "sum", outputs=op.outputs, dtype_class=op.dtype_class)
    return reduce_launch(red, per)


def _reduction(op, pos):
    r = op.args[pos] if len(op.args) > pos else op.kwargs.get("reduction", 1)
    return int(r) if isinstance(r, int) else 1


def h_pointwise_loss(op):
    """aten::mse_loss / smooth_l1_loss / huber_loss(input, target, reduction, [beta|delta])."""
    x, tgt = op.args[0], op.args[1]
    fn, order, _ = POINTWISE_LOSSES[op.name]
    per = torch.empty(x.shape, dtype=x.dtype, device="meta")  # the per-element loss, never returned
    out = [functor_kernel(op, loss_functor(fn, x, order, 2), per, [x, tgt])]
    return out + loss_reduction(op, per, _reduction(op, 2))


def h_pointwise_loss_bwd(op):
    """aten::<loss>_backward(grad_output, input, target, reduction, ...): zeros_like(input) and the
    backward kernel; the .grad_input overload (the caller's buffer) only the kernel."""
    grad, x, tgt = op.args[0], op.args[1], op.args[2]
    fn, order, bfn = POINTWISE_LOSSES[op.name[:-len("_backward")]]
    out = op.outputs[0] if op.outputs else x
    launches = [] if op.overload == "grad_input" else [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0)]
    launches.append(functor_kernel(op, loss_functor(bfn, x, order, 3), out, [x, tgt, grad], flops_per=3))
    return launches


def h_bce(op):
    """aten::binary_cross_entropy(input, target, weight, reduction) (cuda/Loss.cu): the loss kernel,
    `mul_(weight)`, and for a reduction the reduce plus the copy of the result into `loss`."""
    x, tgt = op.args[0], op.args[1]
    weight = op.args[2] if len(op.args) > 2 and isinstance(op.args[2], torch.Tensor) else None
    bce = PARTS["bce"]
    per = torch.empty(x.shape, dtype=x.dtype, device="meta")
    out = [functor_kernel(op, loss_functor(bce["forward"], x, tuple(bce["dispatch"]), 2), per, [x, tgt], flops_per=6)]
    if weight is not None:
        out.append(elementwise_launch(op, name="mul", out=per, ins=[per, weight]))
    reduced = loss_reduction(op, per, _reduction(op, 3))
    return out + (reduced + [memcpy(x.element_size(), DTOD, DEVICE, DEVICE)] if reduced else [])


def h_bce_bwd(op):
    """aten::binary_cross_entropy_backward(grad, input, target, weight, reduction): the gradient
    kernel over (grad expanded, input, target), `mul_(weight)`, and `div_(numel)` for a mean."""
    grad, x, tgt = op.args[0], op.args[1], op.args[2]
    weight = op.args[3] if len(op.args) > 3 and isinstance(op.args[3], torch.Tensor) else None
    out = op.outputs[0] if op.outputs else x
    bce = PARTS["bce"]
    launches = [functor_kernel(op, loss_functor(bce["backward"], x, tuple(bce["dispatch"]), 3), out, [grad, x, tgt],
                               flops_per=5)]
    if weight is not None:
        launches.append(elementwise_launch(op, name="mul", out=out, ins=[out, weight]))
    if _reduction(op, 4) == 1:
        launches.append(elementwise_launch(op, name="div", out=out, ins=[out]))
    return launches


def _opt_tensor(op, i):
    return op.args[i] if len(op.args) > i and isinstance(op.args[i], torch.Tensor) else None


def h_bce_logits(op):
    """aten::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction): a
    composite on CUDA (Loss.cpp): log_sigmoid(input) [* ((pos_weight - 1) * target + 1)], then
    (1 - target) * input - that [* weight], then the reduction - one kernel per ATen op."""
    x, tgt = op.args[0], op.args[1]
    weight, pos_weight = _opt_tensor(op, 2), _opt_tensor(op, 3)
    per = torch.empty(x.shape, dtype=x.dtype, device="meta")
    ew = lambda name, ins: elementwise_launch(op, name=name, out=per, ins=ins)  # noqa: E731
    out = [ew("log_sigmoid_forward", [x])]
    if pos_weight is not None:
        out += [ew("sub", [pos_weight]), ew("mul", [per, tgt]), ew("add", [per]), ew("mul", [per, per])]
    out += [ew("rsub", [tgt]), ew("mul", [per, x]), ew("sub", [per, per])]
    if weight is not None:
        out.append(ew("mul", [per, weight]))
    return out + loss_reduction(op, per, _reduction(op, 4))


def h_bce_logits_bwd(op):
    """binary_cross_entropy_with_logits' gradient (FunctionsManual / Loss.cpp): sigmoid(input) -
    target (with pos_weight: t = pos_weight * target; (t + 1 - target) * sigmoid(input) - t), times
    grad (a broadcast scalar after a reduction), [times weight], [/ numel for a mean]."""
    grad, x, tgt = op.args[0], op.args[1], op.args[2]
    weight, pos_weight = _opt_tensor(op, 3), _opt_tensor(op, 4)
    out = op.outputs[0] if op.outputs else x
    ew = lambda name, ins: elementwise_launch(op, name=name, out=out, ins=ins)  # noqa: E731
    if pos_weight is not None:
        launches = [ew("mul", [pos_weight, tgt]), ew("add", [out]), ew("sub", [out, tgt]), ew("sigmoid", [x]),
                    ew("mul", [out, out]), ew("sub", [out, out])]
    else:
        launches = [ew("sigmoid", [x]), ew("sub", [out, tgt])]
    launches.append(functor_kernel(op, functor("mul", out), out, [out, grad], flops_per=1))
    if weight is not None:
        launches.append(ew("mul", [out, weight]))
    if _reduction(op, 5) == 1:
        launches.append(ew("div", [out]))
    return launches


def h_constant_pad(op):
    """aten::constant_pad_nd (F.pad, mode="constant"): the output filled with the value, then the
    input copied into its interior (a strided copy)."""
    x = op.args[0]
    out = op.outputs[0] if op.outputs else x
    return [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0),
            functor_kernel(op, functor("copy", x), out, [x], flops_per=0)]


def h_adaptive_avg_pool2d(op):
    """aten::_adaptive_avg_pool2d (output larger than 1x1; 1x1 is a mean): adaptive_average_pool,
    a 32x8 block per (batch x plane, row band)."""
    x = op.args[0]
    out = op.outputs[0] if op.outputs else x
    planes = int(math.prod(x.shape[:-2])) if x.dim() > 2 else 1
    return [launch("adaptive_avg_pool", (planes, max(1, 16 // max(1, x.shape[-3] if x.dim() > 2 else 1)), 1),
                   {"T": ctype(x)}, flops=x.numel(), nbytes=nbytes(x) + nbytes(out), dtype_class=op.dtype_class(x))]


def _pool_nhwc(x):
    return x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)


def _avg_pool_kernel(op, x, out, backward):
    """avg_pool2d_[backward_]out_cuda_frame[_nhwc] (cuda/AveragePool2d.cu): one thread per
    output (forward) or input-gradient (backward) element."""
    t = ctype(x)
    p = {"T": t, "acc": _opmath(t), "nhwc": "_nhwc" if _pool_nhwc(x) else ""}
    return launch("avg_pool_bwd" if backward else "avg_pool_fwd", (math.ceil(out.numel() / 256), 1, 1), p,
                  flops=max(x.numel(), out.numel()),
                  nbytes=nbytes(op.args[0]) + nbytes(out), dtype_class=op.dtype_class(x))


def h_avg_pool2d(op):
    """aten::avg_pool2d(input, kernel_size, ...)."""
    x = op.args[0]
    return [_avg_pool_kernel(op, x, op.outputs[0] if op.outputs else x, False)]


def h_avg_pool2d_bwd(op):
    """aten::avg_pool2d_backward(grad, input, ...): every input gradient written, no zeroing."""
    x = op.args[1]
    return [_avg_pool_kernel(op, x, op.outputs[0] if op.outputs else x, True)]


def h_max_pool2d(op):
    """aten::max_pool2d_with_indices (NCHW): max_pool_forward_nchw, one thread per output."""
    x = op.args[0]
    out = op.outputs[0] if op.outputs else x
    t = ctype(x)
    return [launch("max_pool_fwd", (math.ceil(out.numel() / 256), 1, 1), {"T": t, "acc": _opmath(t)}, flops=out.numel() * 9,
                   nbytes=nbytes(x) + nbytes(out) * 2, dtype_class=op.dtype_class(x))]


def h_max_pool2d_bwd(op):
    """aten::max_pool2d_with_indices_backward(grad, input, ...): a zeroed grad_input, then
    max_pool_backward_nchw."""
    grad, x = op.args[0], op.args[1]
    out = op.outputs[0] if op.outputs else x
    t = ctype(x)
    return [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0),
            launch("max_pool_bwd", (math.ceil(out.numel() / 256), 1, 1), {"T": t, "acc": _opmath(t)}, flops=grad.numel(),
                   nbytes=2 * nbytes(grad) + nbytes(out), dtype_class=op.dtype_class(x))]


def h_embedding(op):
    weight, idx = op.args[0], op.args[1]
    out = op.outputs[0]
    key = "index_select_small" if idx.numel() <= 16 else "index_select_large"
    return [launch(key, (min(math.ceil(out.numel() / 128), 65535), 1, 1), {"T": ctype(weight)}, nbytes=2 * nbytes(out) + nbytes(idx), dtype_class=op.dtype_class(weight))]


def h_embedding_bwd(op):
    grad, idx = op.args[0], op.args[1]
    out = op.outputs[0]
    t = ctype(grad)
    if idx.numel() <= 3072:
        return [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0),
                launch("embedding_bwd_feature", (math.ceil(grad.shape[-1] / 32), 1, 1), {"T": t}, flops=grad.numel(), nbytes=2 * nbytes(grad) + nbytes(idx), dtype_class=op.dtype_class(grad))]
    n = idx.numel()
    return [launch("radix_sort_onesweep", (math.ceil(n / 2048), 1, 1), nbytes=4 * nbytes(idx), dtype_class="fp32"),
            launch("compute_grad_weight", (math.ceil(n / 4), 1, 1), {"T": t}, flops=grad.numel(), nbytes=2 * nbytes(grad),
                   dtype_class=op.dtype_class(grad)),
            launch("sum_and_scatter", (math.ceil(n / 4), 1, 1), {"T": t}, nbytes=nbytes(out), dtype_class=op.dtype_class(grad))]


def h_dropout(op):
    x = op.args[0]
    out = op.outputs[0]
    return [launch("fused_dropout", (math.ceil(x.numel() / 1024), 1, 1), {"T": ctype(x)}, flops=4 * x.numel(),
                   nbytes=2 * nbytes(x) + out.numel(), dtype_class=op.dtype_class(x))]


DISTRIBUTIONS = PARTS["distributions"]  # op -> the distribution kernel template in the name


def h_random(op):
    out = op.outputs[0] if op.outputs else op.inputs[0]
    p = {"T": ctype(out), "dist": DISTRIBUTIONS.get(op.name.rstrip("_"), DISTRIBUTIONS["uniform"])}
    return [launch("distribution", (min(math.ceil(out.numel() / 1024), op.spec.sm_count * 4), 1, 1), p, flops=10 * out.numel(), nbytes=nbytes(out), dtype_class=op.dtype_class(out))]


def h_cat(op):
    out = op.outputs[0]
    t = ctype(out)
    n_in = len(op.inputs)
    batches = math.ceil(n_in / 64)
    return [launch("cat", (math.ceil(out.numel() / 512 / batches), n_in, 1), {"T": t, "dims": out.dim()}, nbytes=2 * nbytes(out), dtype_class=op.dtype_class(out))
            for _ in range(batches)]


def h_index(op):
    out = op.outputs[0] if op.outputs else op.inputs[0]
    base = op.name.rstrip("_")
    key = PARTS["index_kernels"].get(base, "index")
    return [launch(key, (math.ceil(out.numel() / 512), 1, 1), {"op": base, "T": ctype(out)}, nbytes=sum(nbytes(x) for x in op.inputs) + nbytes(out), dtype_class=op.dtype_class(out))]


def h_triu(op):
    out = op.outputs[0]
    t = ctype(out)
    upper = "true" if op.name.startswith("triu") else "false"
    return [launch("triu_tril", (math.ceil(out.numel() / 1024), 1, 1), {"T": t, "upper": upper}, nbytes=2 * nbytes(out),
                   dtype_class=op.dtype_class(out))]


def h_scan(op):
    x = op.inputs[0]
    t = ctype(x)
    return [launch("scan_init", (1, 1, 1), {"T": t}, dtype_class=op.dtype_class(x)),
            launch("scan", (math.ceil(x.numel() / 2048), 1, 1), {"T": t}, flops=x.numel(),
                   nbytes=2 * nbytes(x), dtype_class=op.dtype_class(x))]


def h_sort(op):
    x = op.inputs[0]
    t = ctype(x)
    out = []
    if x.shape and x.shape[-1] <= 4096 if x.dim() else True:
        out.append(launch("sort_bitonic", (max(1, x.numel() // max(x.shape[-1] if x.dim() else 1, 1)), 1, 1), {"T": t},
                          flops=x.numel() * 12, nbytes=4 * nbytes(x), dtype_class=op.dtype_class(x)))
    else:
        out.append(launch("sort_segmented", (max(1, x.numel() // 4096), 1, 1), {"T": t}, flops=x.numel() * 20,
                          nbytes=8 * nbytes(x), dtype_class=op.dtype_class(x)))
    if op.name == "topk":
        out.insert(0, launch("topk_gather", (max(1, x.numel() // max(x.shape[-1] if x.dim() else 1, 1)), 1, 1), {"T": t},
                             flops=x.numel() * 4, nbytes=2 * nbytes(x), dtype_class=op.dtype_class(x)))
    return out


# Multi-tensor-apply (ATen MultiTensorApply.cuh): tensors per launch by list depth
# (depth_to_max_tensors), blocks per launch (depth_to_max_blocks), elements per block (kChunkSize).
MAX_TENSORS = {1: 110, 2: 64, 3: 48, 4: 36, 5: 30}
MAX_BLOCKS = 320
CHUNK = 65536
MTA_BLOCK = 512
FOREACH = PARTS["foreach"]  # multi_tensor_apply_kernel's name parts (functors, metadata, signature)
NS = FOREACH["namespace"]
FOREACH_OPS = FOREACH["ops"]


def mta_launches(numels, depth):
    """One (blocks, elements) per kernel multi_tensor_apply launches for tensors of `numels`
    elements at list depth `depth`: ATen's loop — a tensor's chunks go to consecutive blocks; a
    launch is made when the launch holds its maximum of tensors (at a tensor's last chunk) or of
    blocks, and after the last chunk; a tensor cut by a launch carries on in the next one.
    Empty tensors are skipped."""
    sizes = [n for n in numels if n > 0]
    out = []
    loc_t = loc_b = elems = 0
    for i, n in enumerate(sizes):
        loc_t += 1
        chunks = -(-n // CHUNK)
        for c in range(chunks):
            loc_b += 1
            elems += min(CHUNK, n - c * CHUNK)
            last_chunk = c == chunks - 1
            if (loc_t == MAX_TENSORS[depth] and last_chunk) or loc_b == MAX_BLOCKS \
                    or (i == len(sizes) - 1 and last_chunk):
                out.append((loc_b, elems))
                loc_b = elems = 0
                loc_t = 0 if last_chunk else 1
    return out


def _opmath(t):
    return "double" if t == "double" else "float"


def _fast_route(lists):
    """ATen's can_use_fast_route: one dtype and device, dense strided tensors, same sizes and
    strides across the lists. Otherwise the op runs tensor by tensor (slow path)."""
    ref = lists[0]
    dtype = ref[0].dtype
    for lst in lists:
        if len(lst) != len(ref):
            return False
        for a, b in zip(lst, ref):
            if a.dtype != dtype or a.layout != torch.strided or a.shape != b.shape or a.stride() != b.stride() \
                    or not a.is_contiguous():
                return False
    return True


def h_foreach(op):
    """torch._foreach_* / _fused_adam(w)_ / _amp_foreach_non_finite_check_and_unscale_: one
    multi_tensor_apply_kernel per launch of ATen's chunking loop (mta_launches), named as CUDA
    PyTorch names it (functor by argument kind: UnaryOpFunctor, BinaryOpScalarFunctor,
    BinaryOpScalarListFunctor, BinaryOpListAlphaFunctor, PointwiseOpScalar(List)Functor,
    FusedAdamMathFunctor; <T, depth, r_args_depth, res_arg_index>); _foreach_norm adds its
    lpnorm_cleanup kernel. Off the fast route: one elementwise kernel per tensor."""
    lists = [a for a in op.args if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor)]
    scalars = [a for a in op.args[len(lists):] if not isinstance(a, (list, tuple, torch.Tensor))]
    scalar_list = any(isinstance(a, (list, tuple)) and a and not isinstance(a[0], torch.Tensor) for a in op.args)
    scalar_tensor = any(isinstance(a, torch.Tensor) for a in op.args[len(lists):])
    if not lists:
        return []
    ref = lists[0][0]
    t = ctype(ref)
    om = _opmath(t)
    inplace = op.name.endswith("_")
    base = op.name.strip("_").replace("foreach_", "").replace("fused_", "")
    if not op.name.startswith("_fused_") and not _fast_route(lists):
        outs = op.outputs if not inplace and op.outputs else lists[0]
        return [elementwise_launch(op, name=base, out=o, ins=[l[i] for l in lists if i < len(l)])
                for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.numel() > 0]
    n_lists = len(lists)
    F = FOREACH
    if op.name.startswith("_fused_adam"):
        depth = 5 if n_lists >= 5 and lists[4] else 4  # param, grad, exp_avg, exp_avg_sq [, max_exp_avg_sq]
        meta = F["fused_metadata"] % {"depth": depth}
        fn = F["fused_adam"] % {"T": t, "depth": depth, "mode": 1 if "adamw" in op.name else 0}
        tail = F["fused_adam_tail"]
    else:
        depth = min(5, n_lists + (0 if inplace else 1))
        p = {"T": t, "om": om, "depth": depth, "res": 0 if inplace else n_lists}
        meta = F["metadata"] % p
        opf = "%s<%s>" % (FOREACH_OPS.get(base, F["op_default"] % {"Op": base.capitalize()}), om)
        if op.name == "_amp_foreach_non_finite_check_and_unscale_":
            fn, tail = F["unscale"] % p, ", %s" % om
        elif base == "norm":
            meta, fn, tail = F["metadata"] % dict(p, depth=1), F["norm"] % p, F["norm_tail"] % p
        elif base == "lerp":
            # ForeachTernaryOp.cu: lerp with a scalar weight is TernaryOpScalarFunctor over
            # (self, end[, out]); with a weight list, TernaryOpListFunctor over
            # (self, end, weight[, out]); both with at::native::LerpFunctor<opmath_t>.
            opf = F["lerp_op"] % p
            if n_lists >= 3:
                fn, tail = F["ternary_list"] % p, ", %s" % opf
            else:
                fn, tail = F["ternary_scalar"] % p, ", %s, %s" % (opf, om)
        elif n_lists == 1 and not (scalars or scalar_list or scalar_tensor):
            fn, tail = F["unary"] % p, ", %s" % opf
        elif n_lists == 1:
            kind = "ScalarList" if scalar_list else "ScalarTensor" if scalar_tensor else "Scalar"
            if scalar_list:
                meta = F["scalar_list_metadata"] % p
            fn, tail = F["binary"] % dict(p, kind=kind), ", %s" % opf + (", %s" % om if kind == "Scalar" else "")
        elif n_lists == 2:
            fn, tail = F["binary_list_alpha"] % p, ", %s, %s" % (opf, om)
        else:
            kind = "ScalarList" if scalar_list else "Scalar"
            if scalar_list:
                meta = F["scalar_list_metadata"] % p
            fn, tail = F["pointwise"] % dict(p, kind=kind), ", %s" % opf + (", %s" % om if kind == "Scalar" else "")
    sig = F["signature"] % {"ns": NS, "meta": meta, "fn": fn, "tail": tail}
    per_elem_bytes = sum(x.element_size() for x in (l[0] for l in lists)) * (1 if inplace else 1.5)
    flops_per = 12 if "adam" in op.name else 2
    out = [launch("multi_tensor_apply", (blocks, 1, 1), {"sig": sig}, block=(MTA_BLOCK, 1, 1),
                  flops=elems * flops_per, nbytes=elems * per_elem_bytes, dtype_class=op.dtype_class(ref))
           for blocks, elems in mta_launches([x.numel() for x in lists[0]], depth)]
    if base == "norm" and out:
        n = len(lists[0])
        out.append(launch("lpnorm_cleanup", (n, 1, 1), {"T": t, "acc": om}, block=(MTA_BLOCK, 1, 1), nbytes=n * 4 * 320))
    return out


def h_amp_update_scale(op):
    return [launch("amp_update_scale", (1, 1, 1), nbytes=16)]


def h_copy(op):
    """copy_/_to_copy/clone: cudaMemcpyAsync for same-dtype contiguous copies, else a copy kernel.
    Host tensors (see emulate.HostTracker) become HtoD/DtoH memcpys; that decision is made by the
    caller, which passes op.copy_direction."""
    direction = getattr(op, "copy_direction", None)
    out = op.outputs[0] if op.outputs else op.inputs[0]
    src = op.args[1] if op.name == "copy_" and len(op.args) > 1 else op.inputs[0]
    if direction == "HtoD":
        return [memcpy(nbytes(src), HTOD, PAGEABLE, DEVICE)]
    if direction == "DtoH":
        return [memcpy(nbytes(src), DTOH, DEVICE, PAGEABLE)]
    if src.dtype == out.dtype and src.is_contiguous() and out.is_contiguous():
        return [memcpy(nbytes(src), DTOD, DEVICE, DEVICE)]
    return [elementwise_launch(op, name="copy", out=out, ins=[src], flops_per=0)]


def h_roll(op):
    out = op.outputs[0]
    return [launch("roll", (math.ceil(out.numel() / 512), 1, 1), {"T": ctype(out)}, nbytes=2 * nbytes(out),
                   dtype_class=op.dtype_class(out))]


def h_slice_backward(op):
    """grad_input = zeros(input_sizes); grad_input[slice].copy_(grad): a fill and a strided copy."""
    out = op.outputs[0]
    grad = op.inputs[0]
    return [elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0),
            elementwise_launch(op, name="copy", out=grad, ins=[grad], flops_per=0)._replace(
                **dict(zip(("short", "demangled"), names("ew_strided", fun=functor("copy", grad)))))]


def h_item(op):
    t = op.inputs[0]
    return [memcpy(t.element_size(), DTOH, DEVICE, PAGEABLE)]


def h_none(op):
    return []


def _meta(rows, cols, like):
    """A shape stand-in for a GEMM operand the fused op never materialises (no data, no launch)."""
    return torch.empty((int(rows), int(cols)), dtype=like.dtype, device="meta")


def mha_launches(op, like, rows, b, lq, s, e, h, qkv_w, proj_w):
    """The fused multi-head attention CUDA PyTorch runs for native_multi_head_attention: the
    packed in-projection GEMM over `rows` tokens, transform_bias_rescale_qkv, Q·K^T (batched),
    softmax, attention·V (batched), the out-projection GEMM."""
    d = max(1, e // max(h, 1))
    es = like.element_size()
    t = ctype(like)
    rescale = launch("transform_bias_rescale_qkv", (b * lq, 1, 1), {"T": t}, flops=3 * rows * e, nbytes=2 * 3 * b * lq * e * es,
                     dtype_class=op.dtype_class(like))
    softmax = launch("softmax_warp_fwd", (max(1, b * h * lq // 4), 1, 1),
                     {"T": t, "log2": max(0, int(math.ceil(math.log2(max(s, 1))))), "is_log": "false"}, flops=5 * b * h * lq * s,
                     nbytes=2 * b * h * lq * s * es, dtype_class=op.dtype_class(like))
    return [gemm_launch(op, _meta(rows, e, like), qkv_w.t()), rescale,
            gemm_launch(op, _meta(lq, d, like), _meta(d, s, like), batch=b * h), softmax,
            gemm_launch(op, _meta(lq, s, like), _meta(s, d, like), batch=b * h),
            gemm_launch(op, _meta(rows, e, like), proj_w.t(), extra_c=True)]


def token_shape(t):
    """(sequences, longest length, tokens) of a (B, L, E) / (L, E) tensor or of a nested tensor
    of (L_i, E) sequences (the encoder fast path with a padding mask)."""
    if getattr(t, "is_nested", False):
        lens = [int(r[0]) for r in t._nested_tensor_size().tolist()]
        return len(lens), max(lens) if lens else 1, sum(lens)
    if t.dim() == 3:
        return t.shape[0], t.shape[1], t.shape[0] * t.shape[1]
    return 1, t.shape[0], t.shape[0]


def h_native_mha(op):
    """aten::_native_multi_head_attention (nn.MultiheadAttention's inference fast path)."""
    q, k = op.args[0], op.args[1]
    e, h = int(op.args[3]), int(op.args[4])
    b, lq, rows = token_shape(q)
    s = token_shape(k)[1]
    return mha_launches(op, q if not q.is_nested else op.args[5], rows, b, lq, s, e, h, op.args[5], op.args[7])


def h_transformer_encoder_layer(op):
    """aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer's inference fast path):
    as CUDA PyTorch runs it (aten/src/ATen/native/transformers/transformer.cpp) — [layer norm if
    norm_first], the fused attention, the residual add, layer norm, linear1 + gelu/relu, linear2,
    the residual add, [layer norm if not norm_first]."""
    src, e, h = op.args[0], int(op.args[1]), int(op.args[2])
    qkv_w, proj_w = op.args[3], op.args[5]
    use_gelu, norm_first = bool(op.args[7]), bool(op.args[8])
    ffn_w1, ffn_w2 = op.args[14], op.args[16]
    b, lq, rows = token_shape(src)
    like = qkv_w  # a dense tensor of the layer's dtype (src may be nested)
    x = _meta(rows, e, like)
    mid = _meta(rows, ffn_w1.shape[0], like)
    norm = types.SimpleNamespace(args=(x, [e]), dtype_class=op.dtype_class, spec=op.spec)
    ew = types.SimpleNamespace(name="add", inputs=[x, x], outputs=[x], dtype_class=op.dtype_class, spec=op.spec)
    out = h_layer_norm(norm) if norm_first else []
    out += mha_launches(op, like, rows, b, lq, lq, e, h, qkv_w, proj_w)
    out.append(elementwise_launch(ew, name="add", out=x, ins=[x, x]))
    out += h_layer_norm(norm)
    out.append(gemm_launch(op, x, ffn_w1.t(), extra_c=True))
    out.append(elementwise_launch(ew, name="gelu" if use_gelu else "relu", out=mid, ins=[mid]))
    out.append(gemm_launch(op, mid, ffn_w2.t(), extra_c=True))
    out.append(elementwise_launch(ew, name="add", out=x, ins=[x, x]))
    if not norm_first:
        out += h_layer_norm(norm)
    return out


def h_nested_from_mask(op):
    """aten::_nested_tensor_from_mask(t, mask) on CUDA: the lengths (mask.sum(1)), copied to the
    host, and the padding removed (NestedTensorTransformerFunctions.cu remove_padding_kernel)."""
    t, mask = op.args[0], op.args[1]
    ty = ctype(t)
    lengths = types.SimpleNamespace(name="sum", outputs=[], dtype_class=op.dtype_class)
    return (reduce_launch(lengths, mask) + [memcpy(mask.shape[0] * 8, DTOH, DEVICE, PAGEABLE),
            launch("remove_padding", (t.shape[0], 1, 1), {"T": ty}, nbytes=2 * nbytes(t), dtype_class=op.dtype_class(t))])


def h_nested_mask_left_aligned(op):
    """aten::_nested_tensor_from_mask_left_aligned(t, mask): whether every row of the mask is
    left-aligned — on CUDA a reduction over the mask and a blocking copy of the answer."""
    mask = op.args[1]
    check = types.SimpleNamespace(name="sum", outputs=[], dtype_class=op.dtype_class)
    return reduce_launch(check, mask) + [memcpy(1, DTOH, DEVICE, PAGEABLE)]


def h_to_padded(op):
    """aten::to_padded_tensor(nested, padding) on CUDA: one add_padding_<dim> kernel."""
    out = op.outputs[0] if op.outputs else None
    if out is None:
        return []
    p = {"T": ctype(out), "dims": max(1, min(3, out.dim() - 1))}
    return [launch("add_padding", (out.shape[0], 1, 1), p, nbytes=2 * nbytes(out),
                   dtype_class=op.dtype_class(out))]


def h_group_norm(op):
    """aten::native_group_norm: per-group moments, then the fused normalise-and-affine pass."""
    x = op.args[0]
    n, c, groups = int(op.args[3]), int(op.args[4]), int(op.args[6])
    t = ctype(x)
    return [launch("group_norm_moments", (n * groups, 1, 1), {"T": t}, flops=3 * x.numel(), nbytes=nbytes(x),
                   dtype_class=op.dtype_class(x)),
            launch("group_norm_fused_params", (max(1, n * c // 256), 1, 1), {"T": t}, flops=4 * n * c, nbytes=8 * n * c,
                   dtype_class=op.dtype_class(x)),
            elementwise_launch(op, name="group_norm_fwd", out=op.outputs[0] if op.outputs else x, ins=[x])]


def h_group_norm_bwd(op):
    g = op.args[0]
    t = ctype(g)
    return [launch("group_norm_internal_grads", (max(1, g.shape[0] * g.shape[1]), 1, 1), {"T": t}, flops=4 * g.numel(),
                   nbytes=2 * nbytes(g), dtype_class=op.dtype_class(g)),
            launch("group_norm_bwd", (max(1, g.numel() // 1024), 1, 1), {"T": t}, flops=6 * g.numel(),
                   nbytes=3 * nbytes(g), dtype_class=op.dtype_class(g))]


def h_embedding_bag(op):
    """aten::_embedding_bag (sum/mean/max modes): one gather-and-reduce kernel per call."""
    weight, idx = op.args[0], op.args[1]
    mode = int(op.args[4]) if len(op.args) > 4 and isinstance(op.args[4], int) else 0
    out = op.outputs[0] if op.outputs else weight
    return [launch("embedding_bag_max" if mode == 2 else "embedding_bag_sum_mean", (max(1, math.ceil(out.numel() / 256)), 1, 1),
                   {"T": ctype(weight)}, flops=idx.numel() * weight.shape[-1], nbytes=idx.numel() * weight.shape[-1] * weight.element_size() + nbytes(out),
                   dtype_class=op.dtype_class(weight))]


# ---- cuDNN RNNs (nn.LSTM / nn.GRU / nn.RNN) ---------------------------------------------------
# CUDA PyTorch runs a whole nn.LSTM/GRU/RNN call as ONE op, aten::_cudnn_rnn (aten::lstm -> cuDNN),
# and its backward as aten::_cudnn_rnn_backward. On CPU, aten::lstm is a composite that decomposes
# into per-timestep addmm/sigmoid/tanh/mul... which a dispatch mode sees one by one; so the emulator
# intercepts the call itself (torch._VF.lstm/gru/rnn_tanh/rnn_relu, emulate.py) and asks this
# section for the cuDNN launches.
#
# Algorithm (aten/src/ATen/native/cudnn/RNN.cpp get_algo): CUDNN_RNN_ALGO_STANDARD, except half
# precision, unpacked input, one unidirectional layer, hidden and input sizes multiples of 128
# (<= 1024 hidden), where PyTorch picks CUDNN_RNN_ALGO_PERSIST_STATIC (its per-GPU batch/sequence
# limits are not modelled). STANDARD per layer and direction: the input projection of all time
# steps as one GEMM, then per time step the recurrent GEMM and one elementwise cell kernel
# (elemWiseRNNcell); backward data: per time step (reversed) the cell's backward kernel
# (LSTM_/GRU_/RNN_elementWise_bp1) and the recurrent dgrad GEMM, then the input dgrad GEMM;
# backward weights: the input and recurrent wgrad GEMMs. PERSIST_STATIC: the input GEMM plus one
# persistent kernel for all time steps (RNN_blockPersist_fp_LSTM / _GRU), and its backward twin.
# Training with dropout > 0: PyTorch initialises cuDNN's dropout state once per process
# (RNN.cpp get_dropout_state -> cudnnSetDropoutDescriptor: cudnn::initstates), and cuDNN drops
# out the output of every layer but the last (forward) and the gradient flowing into it (backward
# data). With biases, cudnnRNNBackwardWeights reduces the gates' gradient into the bias gradient,
# one GENERIC_elementWise_bp2 per layer and direction (after its wgrad GEMMs).
# Not modelled: the weight-flattening copy of non-contiguous weights.

# name -> (cudnnRNNMode_t, gates, kernel tag)
RNN_MODES = {"rnn_relu": (0, 1, "RNN"), "rnn_tanh": (1, 1, "RNN"), "lstm": (2, 4, "LSTM"), "gru": (3, 3, "GRU")}
RNN_TYPES = {torch.float32: ("float", "float"), torch.float16: ("__half", "__half"),
             torch.bfloat16: ("__nv_bfloat16", "__nv_bfloat16"), torch.float64: ("double", "double")}


class RnnCall:
    """One torch._VF.<lstm|gru|rnn_tanh|rnn_relu> call as aten::_cudnn_rnn would see it.

    Shapes: `steps` time steps; `batches[t]` rows at step t (all equal unless packed);
    `rows` = sum(batches); per layer, input width `widths[l]`; hidden size `hidden`, recurrent
    width `rec` (= proj_size for LSTMs with projections, else hidden)."""

    def __init__(self, name, x, batch_sizes, params, has_biases, num_layers, dropout, train,
                 bidirectional, batch_first, spec, allow_tf32=False):
        self.name, self.x, self.spec, self.allow_tf32 = name, x, spec, allow_tf32
        self.mode, self.gates, self.tag = RNN_MODES[name]
        self.layers, self.dirs = int(num_layers), 2 if bidirectional else 1
        self.dropout, self.train, self.packed = float(dropout), bool(train), batch_sizes is not None
        per = (4 if has_biases else 2)
        self.proj = len(params) == self.layers * self.dirs * (per + 1) and name == "lstm"
        if self.proj:
            per += 1
        self.has_biases = bool(has_biases)
        w_ih, w_hh = params[0], params[1]
        self.hidden = w_ih.shape[0] // self.gates
        self.rec = w_hh.shape[1]
        if self.packed:
            self.batches = [int(b) for b in batch_sizes.tolist()]
            self.input_size = x.shape[-1]
        else:
            t_dim, b_dim = (1, 0) if batch_first else (0, 1)
            if x.dim() == 2:  # unbatched (T, in)
                steps, batch = x.shape[0], 1
            else:
                steps, batch = x.shape[t_dim], x.shape[b_dim]
            self.batches = [int(batch)] * int(steps)
            self.input_size = x.shape[-1]
        self.steps, self.rows = len(self.batches), sum(self.batches)
        self.widths = [self.input_size] + [self.rec * self.dirs] * (self.layers - 1)
        self.persistent = (x.dtype == torch.float16 and not self.packed and self.layers == 1 and self.dirs == 1
                           and not self.proj and self.mode in (2, 3) and self.hidden % 128 == 0
                           and self.input_size % 128 == 0 and self.hidden <= 1024)

    def dtype_class(self, t=None):
        return roofline.dtype_class((t if t is not None else self.x).dtype, self.allow_tf32)

    # gemm_launch() takes an op: this call is one (spec, dtype_class).
    def _gemm(self, m, k, n, b_transposed=True):
        a = _meta(m, k, self.x)
        b = _meta(n, k, self.x).t() if b_transposed else _meta(k, n, self.x)
        return gemm_launch(self, a, b)

    def _types(self):
        return RNN_TYPES.get(self.x.dtype, ("float", "float"))

    def _cell(self, batch, backward):
        t, c = self._types()
        gh, es = self.gates * self.hidden, self.x.element_size()
        n = batch * self.hidden
        p = {"T": t, "C": c, "tag": self.tag, "mode": self.mode, "bias": 2 if self.has_biases else 0}
        if backward:
            flops, moved = 10 * batch * gh, 3 * batch * gh * es
        else:
            flops, moved = 8 * batch * gh, 2 * batch * gh * es + 2 * n * es
        return launch("rnn_cell_bwd" if backward else "rnn_cell_fwd", (max(1, math.ceil(n / 128)), 1, 1), p,
                      flops=flops, nbytes=moved, dtype_class=self.dtype_class())

    def _persistent(self, backward):
        t, c = self._types()
        p = {"T": t, "C": c, "tag": self.tag, "dir": "bp" if backward else "fp"}
        b, gh, es = self.batches[0], self.gates * self.hidden, self.x.element_size()
        flops = 2.0 * self.steps * b * self.rec * gh * (2 if backward else 1) + 10 * self.steps * b * gh
        return launch("rnn_persist", (self.spec.sm_count, 1, 1), p, smem_dynamic=96 * 1024, flops=flops,
                      nbytes=(self.rec * gh + 3 * self.steps * b * gh) * es, dtype_class=self.dtype_class(),
                      tensor_core=True)

    def _step_order(self, direction, backward):
        order = list(range(self.steps))
        if direction == 1:
            order.reverse()  # the reverse direction walks the sequence backwards
        return list(reversed(order)) if backward else order

    @property
    def dropout_active(self):
        """Training with dropout > 0: cuDNN's dropout descriptor carries random state."""
        return self.train and self.dropout > 0

    def dropout_state_launch(self):
        """cudnn::initstates, once per process (PyTorch caches the state): curand_init of cuDNN's
        ~2 MB of XORWOW states; modelled with the cost one real A100 run measured (~0.46 ms)."""
        return launch("rnn_dropout_state", (self.spec.sm_count * 2, 1, 1), flops=1.6e10 * self.spec.sm_count / 132, nbytes=2 * 1024 * 1024, dtype_class="fp32")

    def _dropout(self, backward):
        """cuDNN's inter-layer dropout over one layer's whole output (all steps and directions)."""
        t, c = self._types()
        n = self.rows * self.rec * self.dirs
        return launch("rnn_dropout", (max(1, math.ceil(n / 1024)), 1, 1), {"T": t, "C": c, "dir": "bp" if backward else "fp"},
                      flops=10 * n, nbytes=2 * n * self.x.element_size() + n // 8, dtype_class=self.dtype_class())

    def _bias_grad(self):
        """GENERIC_elementWise_bp2 (one per layer and direction, in cudnnRNNBackwardWeights):
        the gates' gradient of all steps summed into the (double) bias gradient."""
        t, c = self._types()
        gh = self.gates * self.hidden
        return launch("rnn_bias_grad", (max(1, math.ceil(gh / 128)), 1, 1), {"T": t, "C": c, "gates": self.gates}, flops=self.rows * gh, nbytes=(self.rows * gh + 2 * gh) * self.x.element_size(),
                      dtype_class=self.dtype_class())

    def forward_launches(self, init_dropout_state=False):
        """aten::_cudnn_rnn (cudnnRNNForward): layer by layer, direction by direction; dropout on
        each layer's output but the last's when training with dropout. `init_dropout_state`:
        this is the process's first such call (the caller keeps track)."""
        out = [self.dropout_state_launch()] if init_dropout_state and self.dropout_active else []
        gh = self.gates * self.hidden
        for layer in range(self.layers):
            if layer > 0 and self.dropout_active:
                out.append(self._dropout(False))
            for d in range(self.dirs):
                out.append(self._gemm(self.rows, self.widths[layer], gh))
                if self.persistent:
                    out.append(self._persistent(False))
                    continue
                for t in self._step_order(d, False):
                    out.append(self._gemm(self.batches[t], self.rec, gh))
                    out.append(self._cell(self.batches[t], False))
                    if self.proj:
                        out.append(self._gemm(self.batches[t], self.hidden, self.rec))
        return out

    def backward_launches(self):
        """aten::_cudnn_rnn_backward: cudnnRNNBackwardData (last layer first), then
        cudnnRNNBackwardWeights."""
        out = []
        gh = self.gates * self.hidden
        for layer in reversed(range(self.layers)):
            for d in range(self.dirs):
                if self.persistent:
                    out.append(self._persistent(True))
                else:
                    for t in self._step_order(d, True):
                        if self.proj:
                            out.append(self._gemm(self.batches[t], self.rec, self.hidden, b_transposed=False))
                        out.append(self._cell(self.batches[t], True))
                        out.append(self._gemm(self.batches[t], gh, self.rec, b_transposed=False))
                out.append(self._gemm(self.rows, gh, self.widths[layer], b_transposed=False))
            if layer > 0 and self.dropout_active:  # the gradient into the previous layer's dropout
                out.append(self._dropout(True))
        for layer in range(self.layers):
            for d in range(self.dirs):
                out.append(self._gemm(gh, self.rows, self.widths[layer]))
                out.append(self._gemm(gh, self.rows, self.rec))
                if self.proj:
                    out.append(self._gemm(self.rec, self.rows, self.hidden))
                if self.has_biases:
                    out.append(self._bias_grad())
        return out


def rnn_call(name, args, spec, allow_tf32=False):
    """RnnCall for torch._VF.<name>(*args), or None when the arguments are not the ones
    nn.LSTM/GRU/RNN pass (then the emulator leaves the call alone).
      input variant: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
      packed variant: (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)
    (hx is a list [h0, c0] for lstm, a tensor otherwise)."""
    if name not in RNN_MODES or not args or not isinstance(args[0], torch.Tensor):
        return None
    lists = [i for i, a in enumerate(args) if isinstance(a, (list, tuple))]
    if not lists:
        return None
    p = lists[-1]
    rest = args[p + 1:]
    if len(rest) not in (5, 6) or not all(isinstance(t, torch.Tensor) for t in args[p]) or len(args[p]) < 2:
        return None
    packed = len(rest) == 5
    if packed and not isinstance(args[1], torch.Tensor):
        return None
    x = args[0]
    if not x.is_floating_point():
        return None
    has_biases, num_layers, dropout, train, bidirectional = rest[:5]
    batch_first = bool(rest[5]) if not packed else False
    try:
        return RnnCall(name, x, args[1] if packed else None, list(args[p]), has_biases, num_layers, dropout,
                       train, bidirectional, batch_first, spec, allow_tf32)
    except (IndexError, ValueError, ZeroDivisionError, RuntimeError):
        return None


# ---- nn.LSTMCell / nn.GRUCell (aten/src/ATen/native/RNN.cpp, cuda/RNN.cu) --------------------
# On CUDA, aten::lstm_cell / gru_cell run LSTMCell/GRUCell's GPU branch: igates = matmul(input,
# w_ih.t()), hgates = matmul(hx, w_hh.t()) (two GEMMs, biases not added), then ONE fused pointwise
# kernel, aten::_thnn_fused_lstm_cell / _thnn_fused_gru_cell (kernel::lstm_cell_forward /
# gru_cell_forward, which also adds both biases and saves a workspace). Backward (GradMode off):
# kernel::lstm_cell_backward / gru_cell_backward, then with biases grad_gates.sum(0) - one sum for
# the LSTM (both biases get it), one per gates tensor for the GRU. CPU PyTorch instead runs
# addmm + chunk + sigmoid/tanh/mul..., so the emulator wraps the call (emulate.py).

RNN_CELL_GATES = {"lstm": 4, "gru": 3}
# TensorInfo arguments of each kernel (cuda/RNN.cu)
RNN_CELL_INFOS = {("lstm", False): 8, ("lstm", True): 7, ("gru", False): 7, ("gru", True): 5}
# elements read + written per hidden unit (gates, states, the workspace)
RNN_CELL_TRAFFIC = {("lstm", False): 15, ("lstm", True): 13, ("gru", False): 13, ("gru", True): 13}


def rnn_cell_launches(cell, backward, like, batch, hidden, contiguous, has_bias, spec, allow_tf32=False):
    """The fused cell kernel (and in backward the bias-gradient sums) CUDA PyTorch launches for
    one _thnn_fused_<cell>_cell call. `like`: a tensor of the call's dtype; `contiguous`: all the
    kernel's tensors are contiguous (indexing kind 1, else the strided kind 2)."""
    gates = RNN_CELL_GATES[cell]
    numel = batch * hidden
    work = numel * (5 if cell == "gru" else 4)
    t = ctype(like)
    acc = "double" if like.dtype == torch.float64 else "float"
    index = "int" if work < 2 ** 31 else "long"
    info = PARTS["rnn_cell_info"] % {"T": t, "index": index}
    p = {"T": t, "acc": acc, "index": index, "kind": 1 if contiguous else 2,
         "infos": ", ".join([info] * RNN_CELL_INFOS[(cell, backward)])}
    es = like.element_size()
    moved = es * numel * RNN_CELL_TRAFFIC[(cell, backward)]
    cls = roofline.dtype_class(like.dtype, allow_tf32)
    out = [launch("%s_cell_%s" % (cell, "backward" if backward else "forward"), (min(math.ceil(numel / 512), spec.sm_count * 4), 1, 1),
                  p, flops=(25 if backward else 20) * numel, nbytes=moved, dtype_class=cls)]
    if backward and has_bias:
        grad_gates = torch.empty((batch, gates * hidden), dtype=like.dtype, device="meta")
        red = types.SimpleNamespace(name="sum", outputs=[torch.empty(gates * hidden, dtype=like.dtype, device="meta")],
                                    dtype_class=lambda t=None: cls)
        for _ in range(1 if cell == "lstm" else 2):
            out += reduce_launch(red, grad_gates)
    return out


def _contiguous(tensors):
    return all(t is None or not isinstance(t, torch.Tensor) or t.is_contiguous() for t in tensors)


# op -> (cell, backward, index of the tensor shaped like the state, index of has_bias or None)
FUSED_CELL_OPS = {
    "_thnn_fused_lstm_cell": ("lstm", False, 2, None),            # (igates, hgates, cx, b_ih, b_hh)
    "_thnn_fused_lstm_cell_backward": ("lstm", True, 2, 5),       # (grad_hy, grad_cy, cx, cy, workspace, has_bias)
    "_thnn_fused_lstm_cell_backward_impl": ("lstm", True, 2, 5),
    "_thnn_fused_gru_cell": ("gru", False, 2, None),              # (igates, hgates, hx, b_ih, b_hh)
    "_thnn_fused_gru_cell_backward": ("gru", True, 0, 2),         # (grad_hy, workspace, has_bias)
}


def h_fused_cell(op):
    """aten::_thnn_fused_lstm_cell / _gru_cell and their backward ops (FUSED_CELL_OPS)."""
    cell, backward, state, bias = FUSED_CELL_OPS[op.name]
    t = op.args[state]
    return rnn_cell_launches(cell, backward, t, t.shape[0], t.shape[-1], _contiguous(op.inputs + op.outputs),
                             bias is not None and bool(op.args[bias]), op.spec, op.allow_tf32)


def h_embedding_bag_bwd(op):
    """aten::_embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
    num_weights, scale_grad_by_freq, mode, ...) on CUDA: a zeroed weight gradient, then for max
    mode EmbeddingBag_accGradParametersKernel_max, for sum/mean the sorted segment reduction
    (radix sort of the indices, compute_grad_weight_bags, sum_and_scatter)."""
    grad, idx = op.args[0], op.args[1]
    mode = int(op.args[7]) if len(op.args) > 7 and isinstance(op.args[7], int) else 0
    out = op.outputs[0] if op.outputs else grad
    t = ctype(grad)
    zero = elementwise_launch(op, name="fill", out=out, ins=[], flops_per=0)
    n = idx.numel()
    if mode == 2:
        return [zero, launch("embedding_bag_bwd_max", (max(1, math.ceil(grad.numel() / 256)), 1, 1), {"T": t}, flops=grad.numel(),
                             nbytes=2 * nbytes(grad) + nbytes(idx), dtype_class=op.dtype_class(grad))]
    return [zero,
            launch("radix_sort_onesweep", (max(1, math.ceil(n / 2048)), 1, 1), nbytes=4 * nbytes(idx), dtype_class="fp32"),
            launch("compute_grad_weight_bags", (max(1, math.ceil(n / 4)), 1, 1), {"T": t}, flops=n * grad.shape[-1],
                   nbytes=2 * n * grad.shape[-1] * grad.element_size(), dtype_class=op.dtype_class(grad)),
            launch("sum_and_scatter", (max(1, math.ceil(n / 4)), 1, 1), {"T": t}, nbytes=nbytes(out),
                   dtype_class=op.dtype_class(grad))]


# Views, metadata and allocations: no GPU work.
NO_KERNEL = re.compile(r"(view|_unsafe_view|_reshape_alias|reshape|view_as|t|transpose|permute|expand|"
                       r"expand_as|squeeze|unsqueeze|select|slice|as_strided|detach|alias|lift|lift_fresh|"
                       r"empty|empty_like|empty_strided|new_empty|new_empty_strided|split|split_with_sizes|"
                       r"chunk|unsafe_split|unsafe_split_with_sizes|unsafe_chunk|unbind|narrow|diagonal|unfold|resize_|set_|is_same_size|size|stride|"
                       r"sym_size|sym_stride|sym_numel|sym_storage_offset|dim|numel|is_nonzero|"
                       r"_has_compatible_shallow_copy_type|_conj|conj|_neg_view|resolve_conj|resolve_neg|"
                       r"movedim|swapaxes|_indices|_values|indices|values|real|imag|view_as_real|"
                       r"view_as_complex|_nested_tensor_size|contiguous|record_stream|_record_function_enter(_new)?|"
                       r"_record_function_exit|equal|is_pinned|_pin_memory|pin_memory|requires_grad_|retain_grad|"
                       r"_version|output_nr|_fw_primal|_make_dual|_unpack_dual)")

POINTWISE = ("add|sub|rsub|mul|div|neg|abs|sign|sgn|exp|exp2|expm1|log|log2|log10|log1p|sqrt|rsqrt|pow|"
             "square|reciprocal|relu|relu6|gelu|silu|mish|sigmoid|tanh|hardtanh|hardsigmoid|hardswish|"
             "leaky_relu|elu|selu|celu|softplus|softshrink|hardshrink|threshold|clamp|clamp_min|clamp_max|"
             "clip|maximum|minimum|fmax|fmin|eq|ne|lt|le|gt|ge|logical_and|logical_or|logical_not|"
             "logical_xor|bitwise_and|bitwise_or|bitwise_not|bitwise_xor|where|masked_fill|addcmul|addcdiv|"
             "lerp|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|erf|erfc|erfinv|floor|ceil|round|trunc|frac|"
             "remainder|fmod|isnan|isinf|isfinite|nan_to_num|polar|heaviside|xlogy|hypot|logit|"
             "sigmoid_backward|tanh_backward|gelu_backward|silu_backward|threshold_backward|"
             "hardtanh_backward|leaky_relu_backward|elu_backward|softplus_backward|mish_backward|"
             "hardswish_backward|hardsigmoid_backward|native_dropout_backward|_masked_scale|"
             "_to_copy_backward|bitwise_left_shift|bitwise_right_shift|"
             "l1_loss_backward|_softmax_backward_data_elementwise|log_sigmoid_forward|log_sigmoid_backward|"
             "glu|glu_backward")

RULES = [
    # (regex, family, handler) - first full match wins
    (r"_local_scalar_dense", "copy", h_item),
    (r"copy_|_to_copy|clone|_copy_from|_copy_from_and_resize|to_dense", "copy", h_copy),
    (r"mm|_mm_plus_mm", "gemm", h_mm),
    (r"addmm|_addmm_activation", "gemm", h_addmm),
    (r"bmm", "gemm", h_bmm),
    (r"baddbmm", "gemm", h_baddbmm),
    (r"mv|addmv", "gemm", h_gemv),
    (r"convolution|_convolution|cudnn_convolution|conv2d|conv1d|conv3d", "conv", h_conv),
    (r"convolution_backward", "conv", h_conv_backward),
    # CPU PyTorch >= 2.1 (what the emulator runs) dispatches F.scaled_dot_product_attention to
    # _scaled_dot_product_flash_attention_for_cpu; a GPU to flash (16-bit) or efficient (fp32).
    (r"_scaled_dot_product_(flash|efficient|cudnn)_attention|_scaled_dot_product_attention_forward|"
     r"_scaled_dot_product_attention|scaled_dot_product_attention|_flash_attention_forward|"
     r"_efficient_attention_forward|_scaled_dot_product_flash_attention_for_cpu", "attention", h_attention_fwd),
    (r"_scaled_dot_product_(flash|efficient|cudnn)_attention_backward|_flash_attention_backward|"
     r"_efficient_attention_backward|_scaled_dot_product_flash_attention_for_cpu_backward", "attention",
     h_attention_bwd),
    (r"_softmax|_log_softmax|softmax|log_softmax", "softmax", h_softmax),
    (r"_softmax_backward_data|_log_softmax_backward_data", "softmax", h_softmax_bwd),
    (r"_native_multi_head_attention", "attention", h_native_mha),
    (r"_transformer_encoder_layer_fwd", "attention", h_transformer_encoder_layer),
    (r"_nested_tensor_from_mask", "nested", h_nested_from_mask),
    (r"_nested_tensor_from_mask_left_aligned", "nested", h_nested_mask_left_aligned),
    (r"to_padded_tensor", "nested", h_to_padded),
    (r"native_group_norm", "groupnorm", h_group_norm),
    (r"native_group_norm_backward", "groupnorm", h_group_norm_bwd),
    (r"_embedding_bag|_embedding_bag_forward_only", "embedding", h_embedding_bag),
    (r"_embedding_bag_dense_backward", "embedding", h_embedding_bag_bwd),
    (r"native_layer_norm", "layernorm", h_layer_norm),
    (r"native_layer_norm_backward", "layernorm", h_layer_norm_bwd),
    (r"native_batch_norm|_native_batch_norm_legit|cudnn_batch_norm", "batchnorm", h_batch_norm),
    (r"nll_loss_forward|nll_loss2d_forward", "loss", h_nll_fwd),
    (r"nll_loss_backward|nll_loss2d_backward", "loss", h_nll_bwd),
    (r"mse_loss|smooth_l1_loss|huber_loss", "loss", h_pointwise_loss),
    (r"mse_loss_backward|smooth_l1_loss_backward|huber_loss_backward", "loss", h_pointwise_loss_bwd),
    (r"binary_cross_entropy", "loss", h_bce),
    (r"binary_cross_entropy_backward", "loss", h_bce_bwd),
    (r"binary_cross_entropy_with_logits", "loss", h_bce_logits),
    (r"binary_cross_entropy_with_logits_backward", "loss", h_bce_logits_bwd),
    (r"constant_pad_nd", "copy", h_constant_pad),
    (r"max_pool2d_with_indices", "pool", h_max_pool2d),
    (r"_adaptive_avg_pool2d", "pool", h_adaptive_avg_pool2d),
    (r"avg_pool2d", "pool", h_avg_pool2d),
    (r"avg_pool2d_backward", "pool", h_avg_pool2d_bwd),
    (r"max_pool2d_with_indices_backward", "pool", h_max_pool2d_bwd),
    (r"|".join(FUSED_CELL_OPS), "rnn", h_fused_cell),
    (r"embedding", "embedding", h_embedding),
    (r"embedding_dense_backward", "embedding", h_embedding_bwd),
    (r"native_dropout|fused_dropout|_fused_dropout", "dropout", h_dropout),
    (r"(normal|uniform|bernoulli|random|exponential|geometric|log_normal|cauchy)_?|randn|rand|randint|"
     r"rand_like|randn_like|randint_like", "random", h_random),
    (r"_foreach_\w+|_fused_adamw?_|_fused_sgd_|_amp_foreach_non_finite_check_and_unscale_", "optimizer", h_foreach),
    (r"_amp_update_scale_", "optimizer", h_amp_update_scale),
    (r"fill_|zero_|zeros|ones|full|zeros_like|ones_like|full_like|new_zeros|new_ones|new_full|"
     r"scalar_tensor|arange|linspace|eye|_efficientzerotensor", "fill", h_fill),
    (r"triu|tril|triu_|tril_", "elementwise", h_triu),
    (r"roll", "index", h_roll),
    (r"slice_backward|select_backward", "copy", h_slice_backward),
    (r"sum|mean|amax|amin|max|min|argmax|argmin|prod|norm|linalg_vector_norm|var|std|var_mean|"
     r"std_mean|any|all|logsumexp|count_nonzero|nansum|aminmax", "reduce", h_reduce),
    (r"cumsum|cumprod|cummax|cummin|logcumsumexp", "scan", h_scan),
    (r"sort|topk|argsort|msort", "sort", h_sort),
    (r"cat|_cat|stack", "cat", h_cat),
    (r"index|index_put_?|_index_put_impl_|gather|scatter_?|scatter_add_?|index_add_?|index_select|"
     r"masked_scatter_?|take_along_dim", "index", h_index),
    (r"(%s)_?" % POINTWISE, "elementwise", h_elementwise),
]

_COMPILED = [(re.compile(rx), fam, h) for rx, fam, h in RULES]


def family(op_name):
    """Family of an op name ("gemm", "elementwise", ..., "none" for no-kernel ops, None if unmodelled)."""
    if NO_KERNEL.fullmatch(op_name):
        return "none"
    for rx, fam, _ in _COMPILED:
        if rx.fullmatch(op_name):
            return fam
    return None


def launches_for(op):
    """(launches, modelled: bool) for an Op."""
    if op.namespace in ("profiler", "prim", "prims") or NO_KERNEL.fullmatch(op.name):
        return [], True
    for rx, _, handler in _COMPILED:
        if rx.fullmatch(op.name):
            return handler(op), True
    if not op.inputs and not op.outputs:
        return [], False
    return [elementwise_launch(op)], False
