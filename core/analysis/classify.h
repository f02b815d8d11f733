// Classification of GPU ops for the overlap/NCCL analyses: compute kernels, NCCL
// (communication) kernels, memory copies, memsets. NCCL = kernel name contains "nccl"
// (case-insensitive), the convention NCCL's own kernels follow (ncclDevKernel_*, ncclKernel_*).
#pragma once

#include <string>
#include <string_view>

#include "core/profile/model.h"

namespace kl::analysis {

enum class OpClass { Compute, Nccl, Memcpy, Memset };
const char* opClassName(OpClass c);  // "compute", "nccl", "memcpy", "memset"

bool isNcclName(std::string_view name);
OpClass classify(const profile::ProfileModel& m, const profile::GpuOp& op);

/// Collective type from an NCCL kernel name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL" ->
/// "AllReduce", "ncclKernel_SendRecv_..." -> "SendRecv"; "" when not an NCCL name, "Other"
/// when no type can be read from it.
std::string ncclCollective(std::string_view name);

}  // namespace kl::analysis
