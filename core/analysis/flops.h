// Model FLOPs of one GEMM / attention operator from its recorded input shapes (2 FLOPs per
// multiply-add; bias additions, softmax and scaling not counted):
//   aten::mm          A[M,K] B[K,N]                     2*M*N*K
//   aten::addmm       C, A[M,K] B[K,N]                  2*M*N*K
//   aten::bmm         A[b,M,K] B[b,K,N]                 2*b*M*N*K
//   aten::baddbmm     C, A[b,M,K] B[b,K,N]              2*b*M*N*K
//   aten::_scaled_mm  A[M,K] B[K,N]                     2*M*N*K (FP8)
//   aten::linear      x[...,K] W[N,K]                   2*prod(x[:-1])*N*K (only when innermost)
//   aten::matmul      2-D/3-D as mm/bmm                 (only when innermost)
//   attention forward, q[B,H,L,E] k[B,H,S,E] v[B,H,S,Ev] (aten::_scaled_dot_product_flash_attention,
//     _scaled_dot_product_efficient_attention, _scaled_dot_product_cudnn_attention,
//     scaled_dot_product_attention; aten::_flash_attention_forward and
//     _efficient_attention_forward take q[B,L,H,E]):  2*B*H*L*S*(E+Ev), halved when is_causal
//   attention backward (the *_backward variants of the above): 2x the forward
// Shapes come from a Kineto cpu_op's Input Dims / Input type / Concrete Inputs (Range::shapes) or
// from an emit_nvtx range text "aten::mm, seq = 3, sizes = [[64, 128], [128, 256]]" (no dtype).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/gpu_peaks.h"

namespace kl::analysis {

struct OpShapes {
  std::vector<std::vector<int64_t>> dims;  // per input; {} for scalars / absent
  std::vector<std::string> types;          // per input ("c10::BFloat16"), may be shorter
  std::vector<std::string> concrete;       // per input ("False", "0.125"), may be shorter
};

/// Parses Range::shapes ("d,d;d,d|t;t|c;c").
OpShapes parseShapes(std::string_view text);
/// Parses an emit_nvtx range text: operator name (before the first ',') and the "sizes = [[...]]"
/// list; false when the text has no sizes.
bool parseNvtxShapes(std::string_view text, std::string& opName, OpShapes& out);

struct OpFlops {
  double flops = 0;
  DType dtype = DType::Unknown;
  std::string formula;  // "2*M*N*K", "attention fwd 2*B*H*L*S*(E+Ev)", ... ("" when unknown)
};

/// FLOPs of operator `name` with `shapes`; false when the operator has no formula here or the
/// shapes do not fit it.
bool flopsOf(std::string_view name, const OpShapes& shapes, OpFlops& out);

}  // namespace kl::analysis
