#include "core/profile/model.h"

#include <cctype>

namespace kl::profile {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& o) {
  for (auto v : o.views_) intern(v);
}

StringTable& StringTable::operator=(const StringTable& o) {
  if (this != &o) {
    StringTable copy(o);
    *this = std::move(copy);
  }
  return *this;
}

StrId StringTable::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  store_.emplace_back(s);
  std::string_view v = store_.back();
  auto id = static_cast<StrId>(views_.size());
  views_.push_back(v);
  index_.emplace(v, id);
  bytes_ += s.size();
  return id;
}

bool StringTable::find(std::string_view s, StrId& out) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  out = it->second;
  return true;
}

std::string_view copyKindName(uint8_t k) {
  static const char* names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH",     "AtoA",     "AtoD",
                                "DtoA",    "DtoD", "HtoH", "PtoP", "UVM HtoD", "UVM DtoH", "UVM DtoD"};
  return k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

namespace {
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
}  // namespace

ApiRole classifyApi(std::string_view name) {
  // Strip a version suffix "_v<digits>".
  if (auto u = name.rfind("_v"); u != std::string_view::npos && u + 2 < name.size()) {
    bool digits = true;
    for (size_t i = u + 2; i < name.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    if (digits) name = name.substr(0, u);
  }
  std::string_view base = name;
  if (startsWith(base, "cuda"))
    base.remove_prefix(4);
  else if (startsWith(base, "hip"))
    base.remove_prefix(3);
  else if (startsWith(base, "cu"))
    base.remove_prefix(2);
  else
    return ApiRole::Other;
  if (startsWith(base, "GraphLaunch")) return ApiRole::GraphLaunch;
  if (startsWith(base, "Launch") || startsWith(base, "ExtLaunch") || startsWith(base, "ModuleLaunch") ||
      startsWith(base, "ExtModuleLaunch") || startsWith(base, "HccModuleLaunch"))
    return contains(base, "HostFunc") ? ApiRole::Other : ApiRole::Launch;
  if (startsWith(base, "Memcpy")) return ApiRole::Memcpy;
  if (startsWith(base, "Memset") || startsWith(base, "MemsetD")) return ApiRole::Memset;
  if (contains(base, "Synchronize") || startsWith(base, "StreamWaitEvent")) return ApiRole::Sync;
  return ApiRole::Other;
}

const char* rangeKindName(RangeKind k) {
  switch (k) {
    case RangeKind::NvtxPushPop: return "nvtx_push_pop";
    case RangeKind::NvtxStartEnd: return "nvtx_start_end";
    case RangeKind::NvtxMark: return "nvtx_mark";
    case RangeKind::UserAnnotation: return "user_annotation";
    case RangeKind::GpuUserAnnotation: return "gpu_user_annotation";
    case RangeKind::CpuOp: return "cpu_op";
  }
  return "unknown";
}

const char* sourceFormatName(SourceFormat f) { return f == SourceFormat::Nsys ? "nsys" : "kineto"; }

size_t ProfileModel::kernelCount() const {
  if (!gpuOps.stored<&GpuOp::kind>()) return gpuOps.size();  // every op is a kernel
  size_t n = 0;
  for (const auto& op : gpuOps) n += op.kind == GpuOpKind::Kernel;
  return n;
}

std::string_view ProfileModel::shortName(const GpuOp& op) const {
  if (const auto* k = kernel(op); k && k->shortName != kEmptyStr) return str(k->shortName);
  return str(op.name);
}

}  // namespace kl::profile

namespace kl::profile {
const char* gpuOpKindName(GpuOpKind k) {
  switch (k) {
    case GpuOpKind::Kernel: return "kernel";
    case GpuOpKind::Memcpy: return "memcpy";
    case GpuOpKind::Memset: return "memset";
    case GpuOpKind::Graph: return "graph";
  }
  return "unknown";
}
std::optional<GpuOpKind> gpuOpKindFromName(std::string_view name) {
  for (GpuOpKind k : {GpuOpKind::Kernel, GpuOpKind::Memcpy, GpuOpKind::Memset, GpuOpKind::Graph})
    if (name == gpuOpKindName(k)) return k;
  return std::nullopt;
}
}  // namespace kl::profile
