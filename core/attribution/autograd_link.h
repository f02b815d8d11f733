// Backward -> forward link through autograd sequence numbers.
//
// Every autograd node gets a per-thread sequence number when a forward op creates it. PyTorch's
// torch.autograd.profiler.emit_nvtx() (and nsys --pytorch=autograd-nvtx) write it into the NVTX
// range texts:
//   forward op     "aten::mm, seq = 42"              (optionally ", op_id = .., sizes = [..], input_op_ids = ..")
//   backward node  "MmBackward0, seq = 42"           (PyTorch >= 1.8: same ", seq = N" suffix)
//                  "MmBackward, stashed seq = 42"    (older releases, and the emit_nvtx docs)
// A range is a backward node when its text says "stashed seq", or its name contains "Backward" or
// starts with "torch::autograd::" (CopySlices, CppNode<..>) or with the engine's
// "autograd::engine::evaluate_function: " wrapper (Kineto); such names without a number
// (AccumulateGrad, "autograd::engine::evaluate_function: X") are nodes without a forward op.
// Forward ops are ATen ops
// ("aten::mm") or custom Functions' class names. Kineto traces carry the same number as the
// cpu_op arg "Sequence number" (Range::seq), backward nodes carry "Fwd thread id" > 0
// (Range::backwardNode), and a `fwdbwd` flow joins the forward op that created a node to the
// node's range (Range::fwdbwdFlow) — all set by the Kineto reader.
//
// Link of one launch call (emit_nvtx semantics):
//  1. the innermost backward-node range open on the launching thread around the call -> its seq N;
//     none: the launch is forward work (Pass::Forward), attribution is unchanged;
//  2. if, inside that node, the call lies in a forward op range with seq > 0 that started after
//     the node (grad mode on during backward: activation checkpointing re-running forward ops),
//     the launch is Pass::Recompute, else Pass::Backward;
//  3. the forward op of the node: the forward op at the start of the node's `fwdbwd` flow
//     (Kineto, same process); else, among non-node ranges with seq N that started before the
//     node (any thread of the same process), the one that started last (the op that consumed N;
//     earlier ones with N created no node);
//  4. the point that decides the ranges is that forward op's interval on its thread; if that
//     point is itself inside a backward node (an op recomputed during backward), step 1-3 repeat
//     from there (bounded depth) — unless the point lies in a forward op that started inside
//     the node AND in a kernlens line range ("kl:") that started inside the node on the same
//     thread: code re-run during backward (a checkpointed forward) pushed its own line ranges
//     there, so the point stays (a recompute launch keeps its own interval; a backward launch of
//     a recomputed node takes the recomputed op's);
//  5. a node without a forward op (AccumulateGrad, GraphRoot, seq missing) is engine work of the
//     backward() call: the point is the launch interval on the forward thread of the nearest
//     linked launch of the same thread (the thread blocked in backward()), or the launch itself
//     when nothing on its thread was linked.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/profile/model.h"

namespace kl::attribution {

/// Which part of a training step launched a GPU op: the model's forward, the backward pass
/// (Backward / Recompute: see below), or one of the steps around them, each known by the range
/// open around its launch (stepKindOf): the optimizer's step, zero_grad, gradient clipping, the
/// AMP GradScaler. Forward is also "none of these" (inference, user code).
enum class Pass : uint8_t { Forward, Backward, Recompute, Optimizer, ZeroGrad, GradClip, AmpScaler };
/// "forward", "backward", "recompute", "optimizer", "zero_grad", "grad-clip", "amp-scaler" (the
/// JSON / store spelling).
const char* passName(Pass p);
/// The pass passName spells `name`; nullopt for any other text.
std::optional<Pass> passFromName(std::string_view name);
/// Backward or Recompute: launched by autograd's backward pass.
constexpr bool isBackwardPass(Pass p) { return p == Pass::Backward || p == Pass::Recompute; }
/// Optimizer, ZeroGrad, GradClip or AmpScaler.
constexpr bool isStepPass(Pass p) { return p >= Pass::Optimizer; }

/// The step kind of a range text, nullopt for any other range. Texts (the probe's
/// kernlens_probe/step_scopes.py writes them; PyTorch writes the first two itself as
/// record_function scopes, so Kineto traces and emit_nvtx captures carry them too):
///   "Optimizer.step#<Class>.step"           -> Optimizer
///   "Optimizer.zero_grad#<Class>.zero_grad" -> ZeroGrad
///   "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_" -> GradClip
///   "GradScaler.<method>"                   -> AmpScaler
std::optional<Pass> stepKindOf(std::string_view text);

/// Per API call with `wanted[c] != 0`: the kind of the innermost step range (stepKindOf) open
/// around the call on its own thread, Pass::Forward when none. Index-aligned with
/// model.apiCalls; empty when the profile has no step range.
std::vector<Pass> stepScopes(const profile::ProfileModel& model, const std::vector<uint8_t>& wanted);

/// The sequence-number tag of one range text.
struct SeqTag {
  int64_t seq = -1;
  bool backwardNode = false;
};
/// Parses an emit_nvtx text ("name, seq = N...", "name, stashed seq = N"); nullopt when the
/// text carries no sequence number.
std::optional<SeqTag> parseSeqTag(std::string_view text);
/// True for backward node names ("MmBackward0", "torch::autograd::CopySlices", ...).
bool isBackwardNodeName(std::string_view name);

/// Where one launch call's ranges are looked up, and why.
struct LinkedCall {
  Pass pass = Pass::Forward;
  uint32_t node = profile::kNone;       // innermost backward-node range around the call
  uint32_t forwardOp = profile::kNone;  // the forward op range the chain ended on (kNone: none)
  uint32_t thread = profile::kNone;     // thread of the lookup point (kNone: the call's own)
  int64_t start = 0, end = 0;           // lookup interval on that thread
};

/// Links every call with `wanted[c] != 0`; calls outside backward nodes keep Pass::Forward and
/// thread kNone. Index-aligned with model.apiCalls; empty when no range carries a sequence tag
/// (every call is then forward work looked up on its own thread).
std::vector<LinkedCall> linkAutograd(const profile::ProfileModel& model, const std::vector<uint8_t>& wanted);

}  // namespace kl::attribution
