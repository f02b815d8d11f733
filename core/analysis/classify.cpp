#include "core/analysis/classify.h"

#include <cctype>

namespace kl::analysis {
namespace {

size_t findNoCase(std::string_view s, std::string_view needle) {
  if (needle.size() > s.size()) return std::string_view::npos;
  for (size_t i = 0; i + needle.size() <= s.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && std::tolower(static_cast<unsigned char>(s[i + k])) == needle[k]) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

}  // namespace

const char* opClassName(OpClass c) {
  switch (c) {
    case OpClass::Compute: return "compute";
    case OpClass::Nccl: return "nccl";
    case OpClass::Memcpy: return "memcpy";
    case OpClass::Memset: return "memset";
  }
  return "compute";
}

bool isNcclName(std::string_view name) { return findNoCase(name, "nccl") != std::string_view::npos; }

OpClass classify(const profile::ProfileModel& m, const profile::GpuOp& op) {
  switch (op.kind) {
    case profile::GpuOpKind::Memcpy: return OpClass::Memcpy;
    case profile::GpuOpKind::Memset: return OpClass::Memset;
    case profile::GpuOpKind::Kernel:
    case profile::GpuOpKind::Graph: break;
  }
  return isNcclName(m.str(op.name)) ? OpClass::Nccl : OpClass::Compute;
}

std::string ncclCollective(std::string_view name) {
  size_t p = findNoCase(name, "nccl");
  if (p == std::string_view::npos) return "";
  std::string_view rest = name.substr(p + 4);
  // Skip the kernel-family word: "DevKernel_", "Kernel_", "_".
  for (std::string_view pre : {"DevKernel_", "Kernel_", "_"}) {
    if (rest.substr(0, pre.size()) == pre) {
      rest.remove_prefix(pre.size());
      break;
    }
  }
  size_t n = 0;
  while (n < rest.size() && std::isalnum(static_cast<unsigned char>(rest[n]))) ++n;
  std::string type(rest.substr(0, n));
  if (type.empty() || std::isdigit(static_cast<unsigned char>(type[0]))) return "Other";
  return type;
}

}  // namespace kl::analysis
