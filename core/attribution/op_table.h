// OpTable: what every top-level CPU op of a PyTorch-profiler trace launched, forward and backward —
// the per-op answer for traces without Python stacks or kernlens ranges.
//
// Rules (exactly):
//  - Attribution with Kineto cpu_op ranges only (no NVTX, no record_function annotations, no
//    Python frames), backward linked (attribution.h rule 4): a backward launch is looked up at the
//    forward op that created its autograd node.
//  - The owner of a GPU op is the OUTERMOST cpu_op of its stack (the op the program called, e.g.
//    aten::conv2d, not aten::cudnn_convolution); one OpEntry per owner name.
//  - Backward work with no forward op (AccumulateGrad, engine work) is owned by its innermost
//    backward node's name, flagged noForwardOwner.
//  - Ops with no launch call or no cpu_op around them are counted in `unmapped*`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attribution/range_table.h"

namespace kl::attribution {

struct OpEntry {
  std::string name;  // "aten::conv2d", or the backward node name when noForwardOwner
  bool noForwardOwner = false;
  int64_t launches = 0, gpuNs = 0;
  int64_t backwardLaunches = 0, backwardGpuNs = 0;  // part launched by the backward pass
  std::vector<KernelEntry> kernels;                 // keyed by (name, pass); most GPU time first, then name
};

struct OpTable {
  std::vector<OpEntry> ops;  // most GPU time first, then name
  int64_t totalOps = 0, totalGpuNs = 0;
  int64_t unmappedOps = 0, unmappedGpuNs = 0;
  bool emulated = false;
};

/// The attribution options of the op table (cpu_op ranges only, backward linked).
Options opTableOptions(const CancellationToken& cancel = {});

/// Attributes `model` once (opTableOptions) and aggregates per top-level op. Fails only when
/// cancelled.
Result<OpTable> tabulateOps(const profile::ProfileModel& model, const CancellationToken& cancel = {});

}  // namespace kl::attribution
