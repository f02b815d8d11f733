// ProfileModel: one in-memory, read-only-after-load view of a profile (nsys SQLite export or
// Kineto/PyTorch-profiler JSON, possibly several files = ranks of one run).
//
// Layout: the row tables (gpuOps, apiCalls, ranges, pyFrames) are columnar (core/profile/
// columns.h: one vector per field, read as rows by value or as whole columns; ends,
// correlation ids and thread/process indices are compact: 4 or 2 bytes a row, exact); processes,
// threads, gpus and the per-op detail tables are plain vectors of small structs. Rows are
// cross-referenced by uint32_t indices (kNone = absent) and interned strings (StrId into
// `strings`). Nothing points into another table, so a model can be moved, copied and shared
// read-only across threads.
//
// Reading rows (unchanged for a std::vector<Row> reader, except that rows are values):
//   const auto& op = m.gpuOps[i];  for (const auto& r : m.ranges) ...  m.apiCalls.size()
// Hot loops read columns:  const auto& start = m.gpuOps.col<&GpuOp::start>();   (Dense only)
//                          m.ranges.get<&Range::domain>(i)                        (any column)
// Writing (readers, tests): push_back(row), set(i, row), update(i, [](Range& r) { ... }).
// Adding a field to a row struct: add its Dense<>/Sparse<> column to the table type below
// (a static_assert counts the fields).
//
// Invariants (established by every reader, relied on by attribution and the analyses):
//  - Times are int64 nanoseconds on ONE timeline for the whole model: CPU and GPU rows of a
//    file are directly comparable, and with several ranks every rank is shifted onto rank 0's
//    clock (Metadata::rankClockOffsetNs). The origin is arbitrary (not 0, not the capture start).
//  - start <= end for every interval (a reader clamps a negative duration to 0 length).
//  - gpuOps, apiCalls, ranges, pyFrames, cpuOps are sorted by (start, end desc, original order);
//    their indices are stable for the lifetime of the model.
//  - Every process/thread index in a row is valid; thread and process indices are per model
//    (not OS ids). OS ids live in Process::pid / Thread::tid.
//  - A row's rank equals processes[row's process].rank (kept on the row for fast filtering).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/profile/columns.h"
#include "core/profile/validate.h"

namespace kl::profile {

constexpr uint32_t kNone = UINT32_MAX;

// ---- interned strings ------------------------------------------------------------------------

/// Index into StringTable. 0 is always the empty string, so a default StrId means "none".
using StrId = uint32_t;
constexpr StrId kEmptyStr = 0;

/// Append-only string interner: equal strings get equal ids; views stay valid for the
/// table's lifetime (storage is never reallocated).
class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& o);
  StringTable& operator=(const StringTable& o);
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;

  StrId intern(std::string_view s);
  /// Id of `s` if already interned.
  bool find(std::string_view s, StrId& out) const;
  std::string_view str(StrId id) const { return id < views_.size() ? views_[id] : std::string_view(); }
  std::string_view operator[](StrId id) const { return str(id); }
  size_t size() const { return views_.size(); }
  /// Bytes held by string storage (for memory reports).
  size_t bytes() const { return bytes_; }

 private:
  std::deque<std::string> store_;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StrId> index_;
  size_t bytes_ = 0;
};

// ---- packed nsys ids -----------------------------------------------------------------------

/// nsys globalTid/globalPid layout: [63:56] hardware id | [55:48] VM id | [47:24] PID | [23:0] TID.
/// Real files have VM id 1 (bits 48..55 set); all arithmetic is on uint64 to be sign-safe.
struct GlobalId {
  static uint32_t tid(int64_t g) { return static_cast<uint32_t>(static_cast<uint64_t>(g) & 0xFFFFFFu); }
  static uint32_t pid(int64_t g) { return static_cast<uint32_t>((static_cast<uint64_t>(g) >> 24) & 0xFFFFFFu); }
  static uint32_t vmId(int64_t g) { return static_cast<uint32_t>((static_cast<uint64_t>(g) >> 48) & 0xFFu); }
  static uint32_t hwId(int64_t g) { return static_cast<uint32_t>((static_cast<uint64_t>(g) >> 56) & 0xFFu); }
  /// The globalPid of a globalTid: TID bits cleared.
  static int64_t processOf(int64_t g) { return static_cast<int64_t>(static_cast<uint64_t>(g) & ~uint64_t{0xFFFFFF}); }
  static int64_t make(uint32_t hw, uint32_t vm, uint32_t pid, uint32_t tid) {
    return static_cast<int64_t>((uint64_t{hw & 0xFFu} << 56) | (uint64_t{vm & 0xFFu} << 48) |
                                (uint64_t{pid & 0xFFFFFFu} << 24) | uint64_t{tid & 0xFFFFFFu});
  }
};

// ---- entities --------------------------------------------------------------------------------

struct Process {
  int64_t globalPid = 0;  // nsys packed id (TID bits 0); Kineto: GlobalId::make(0,0,pid,0)
  uint32_t pid = 0;       // OS process id
  int32_t rank = 0;       // rank of the file this process came from (0 for single files)
  StrId name = kEmptyStr;
};

struct Thread {
  int64_t globalTid = 0;     // nsys packed id; Kineto: GlobalId::make(0,0,pid,tid)
  uint32_t tid = 0;          // OS thread id (Kineto: the trace's tid, truncated to 24 bits)
  uint32_t process = kNone;  // index into processes (always valid)
  StrId name = kEmptyStr;
};

struct Gpu {
  int32_t deviceId = -1;  // nsys TARGET_INFO_GPU.id / Kineto device index; GpuOp::deviceId
  int32_t rank = 0;
  StrId name = kEmptyStr;                      // "NVIDIA H100 80GB HBM3"
  int32_t smCount = 0;                         // 0 = unknown
  int64_t memoryBytes = 0;                     // total global memory; 0 = unknown
  int32_t computeMajor = 0, computeMinor = 0;  // 0 = unknown
  int64_t clockRateHz = 0;                     // SM clock; 0 = unknown
  StrId busLocation = kEmptyStr;
  StrId uuid = kEmptyStr;
};

// ---- GPU work --------------------------------------------------------------------------------

/// Graph = a graph-level trace row (nsys CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "Graph" trace mode):
/// one interval for a whole cudaGraphLaunch, individual kernels not visible; detail = kNone.
enum class GpuOpKind : uint8_t { Kernel, Memcpy, Memset, Graph };
const char* gpuOpKindName(GpuOpKind k);  // "kernel", "memcpy", "memset", "graph"
/// The kind gpuOpKindName spells `name`; nullopt for any other text.
std::optional<GpuOpKind> gpuOpKindFromName(std::string_view name);

/// One kernel / memcpy / memset execution on a GPU.
struct GpuOp {
  int64_t start = 0, end = 0;  // GPU execution interval, ns
  int64_t correlationId = -1;  // -1 = none; unique only per (process, id)
  StrId name = kEmptyStr;      // kernels: demangled (else short) name; memcpy "[CUDA memcpy HtoD]";
                               // memset "[CUDA memset]"; graph "[CUDA graph <graphId>]"
  uint32_t process = kNone;    // launching process (nsys: the GPU row's globalPid)
  uint32_t detail = kNone;     // index into kernels / memcpys / memsets by kind (kNone for Graph)
  int64_t graphId = -1;        // CUDA graph id for graph nodes and Graph rows, else -1
  int32_t deviceId = -1;
  int32_t rank = 0;
  uint32_t contextId = 0;
  uint32_t streamId = 0;
  GpuOpKind kind = GpuOpKind::Kernel;

  int64_t duration() const { return end - start; }
};

struct KernelDetail {
  StrId demangledName = kEmptyStr;  // full, with templates/args
  StrId shortName = kEmptyStr;      // base name ("vectorized_elementwise_kernel")
  StrId mangledName = kEmptyStr;    // may be empty
  int32_t grid[3] = {0, 0, 0};      // 0 = unknown
  int32_t block[3] = {0, 0, 0};
  int32_t registersPerThread = 0;
  int32_t staticSharedMemory = 0;   // bytes per block
  int32_t dynamicSharedMemory = 0;  // bytes per block
  int64_t graphNodeId = -1;         // CUDA graph node id, -1 = none (graph id: GpuOp::graphId)
  uint32_t collective = kNone;      // index into ProfileModel::collectives (NCCL kernels), kNone
};

/// What the trace records about one NCCL kernel's collective (Kineto kernel args "Collective
/// name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "Process Group Name").
struct CollectiveDetail {
  StrId name = kEmptyStr;                 // "allreduce", "_allgather_base", ...
  int64_t inNelems = -1, outNelems = -1;  // -1 = not recorded
  int32_t groupSize = 0;                  // 0 = not recorded
  StrId dtype = kEmptyStr;                // "Float", "BFloat16", ...
  StrId processGroup = kEmptyStr;         // process group name
};

/// Memory kinds follow ENUM_CUDA_MEM_KIND (0 pageable, 1 pinned, 2 device, 3 array, 4 managed ...).
struct MemcpyDetail {
  int64_t bytes = 0;
  uint8_t copyKind = 0;                  // ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ... (0 unknown)
  uint8_t srcKind = 255, dstKind = 255;  // 255 = unknown
};

struct MemsetDetail {
  int64_t bytes = 0;
  int32_t value = 0;
  uint8_t memKind = 255;  // 255 = unknown
};

/// Name for ENUM_CUDA_MEMCPY_OPER ("HtoD", "DtoH", ..., "unknown").
std::string_view copyKindName(uint8_t copyKind);

// ---- CPU side --------------------------------------------------------------------------------

enum class ApiLevel : uint8_t { Runtime, Driver };
/// What an API call does, classified from its name (version suffix "_v\d+" ignored).
enum class ApiRole : uint8_t {
  Other,
  Launch,       // cudaLaunchKernel*, cuLaunchKernel*, cudaLaunchCooperativeKernel*, hipLaunchKernel, ...
  GraphLaunch,  // cudaGraphLaunch / cuGraphLaunch / hipGraphLaunch
  Memcpy,       // cudaMemcpy*, cuMemcpy*, hipMemcpy*
  Memset,       // cudaMemset*, cuMemset*, hipMemset*
  Sync,         // *Synchronize, cudaStreamWaitEvent, cudaEventQuery? (no: only blocking waits)
};

/// A CUDA/HIP runtime or driver API call on a CPU thread.
struct ApiCall {
  int64_t start = 0, end = 0;
  int64_t correlationId = -1;  // -1 = none
  StrId name = kEmptyStr;      // as recorded ("cudaLaunchKernel_v7000")
  uint32_t thread = kNone;     // index into threads (always valid)
  int32_t rank = 0;
  ApiLevel level = ApiLevel::Runtime;
  ApiRole role = ApiRole::Other;
};

/// Classifies an API name (strips a trailing "_v<digits>").
ApiRole classifyApi(std::string_view name);

enum class RangeKind : uint8_t {
  NvtxPushPop,        // nsys eventType 59 (and 70): thread range
  NvtxStartEnd,       // nsys eventType 60 (and 71): process range, may end on another thread
  NvtxMark,           // nsys eventType 34: instant, end == start
  UserAnnotation,     // Kineto cat "user_annotation" (record_function), or 2021 "Operator" ranges
                      // named like "ProfilerStep#N"/"...#..." (see docs/profiles.md)
  GpuUserAnnotation,  // Kineto cat "gpu_user_annotation": on a GPU stream, thread == kNone
  CpuOp,              // Kineto cat "cpu_op" (and 2021 "Operator"): ATen op on a CPU thread
};
const char* rangeKindName(RangeKind k);

/// An annotation interval (NVTX range/mark, Kineto annotation or cpu_op).
struct Range {
  int64_t start = 0, end = 0;  // end == start for marks; open ranges end at Metadata::spanEnd
  StrId text = kEmptyStr;      // nsys: COALESCE(StringIds.value for textId, text)
  StrId domain = kEmptyStr;    // nsys: domain name from eventType 75 (empty = default domain)
  StrId category = kEmptyStr;  // nsys: category name from eventType 33 ("" if unnamed/none)
  uint32_t thread = kNone;     // starting thread (kNone only for GpuUserAnnotation)
  uint32_t endThread = kNone;  // nsys endGlobalTid when it differs from the start thread
  int32_t rank = 0;
  int32_t categoryId = 0;  // raw NVTX category number (0 = none)
  int32_t domainId = 0;    // raw NVTX domain id (0 = default; named or not)
  int32_t deviceId = -1;   // GpuUserAnnotation only
  uint32_t streamId = 0;   // GpuUserAnnotation only
  /// Kineto cpu_op recorded with shapes: "<Input Dims>|<Input type>|<Concrete Inputs>", each a
  /// list with ';' between the op's inputs and ',' inside one input ("141,512;512,512|c10::BFloat16;
  /// c10::BFloat16|;"); kEmptyStr when not recorded. Parsed by analysis/flops.h.
  StrId shapes = kEmptyStr;
  /// Autograd sequence number recorded as data (Kineto cpu_op arg "Sequence number"); -1 = none.
  /// nsys carries it in the range text instead (emit_nvtx, attribution/autograd_link.h).
  int64_t seq = -1;
  /// Kineto `fwdbwd` flow id bound to this range: the flow starts at the forward op that created
  /// an autograd node and ends at that node's backward range; -1 = none.
  int64_t fwdbwdFlow = -1;
  RangeKind kind = RangeKind::NvtxPushPop;
  bool open = false;  // never closed in the capture (nsys end NULL); end = spanEnd
  /// Recorded as an autograd backward node (Kineto: "Fwd thread id" > 0, or the end of a
  /// `fwdbwd` flow); nsys texts are classified by name instead.
  bool backwardNode = false;

  bool endsOnOtherThread() const { return endThread != kNone && endThread != thread; }
};

/// A Kineto python_function event: one Python frame active over [start, end] on a thread.
struct PyFrame {
  int64_t start = 0, end = 0;
  StrId file = kEmptyStr;      // "torch/nn/modules/module.py" (as recorded; may be empty)
  StrId function = kEmptyStr;  // "forward", "<module>", or a C function name
  StrId name = kEmptyStr;      // raw event name, e.g. "model.py(42): forward"
  uint32_t thread = kNone;
  uint32_t parent = kNone;  // index of the parent frame (via "Python parent id"), kNone = root
  int64_t pythonId = -1;    // args["Python id"]
  int32_t line = 0;         // 0 = unknown
  int32_t rank = 0;
};

// ---- metadata --------------------------------------------------------------------------------

enum class SourceFormat : uint8_t { Nsys, Kineto };
const char* sourceFormatName(SourceFormat f);

struct Metadata {
  SourceFormat format = SourceFormat::Nsys;
  std::string toolVersion;    // nsys EXPORT_PRODUCT_VERSION ("2026.2.1.210") / Kineto schemaVersion
  std::string schemaVersion;  // nsys EXPORT_SCHEMA_VERSION ("3.25.0"); Kineto: "" or traceName
  /// Produced by kernlens' emulate backend: the product version (or a Kineto "kernlens_emulated"
  /// marker) contains "emulated". Every consumer that shows numbers must say so.
  bool emulated = false;
  int64_t spanStart = 0, spanEnd = 0;  // min start / max end over all rows, ns (model timeline)
  std::vector<std::string> files;      // input files, rank order
  int32_t numRanks = 1;                // number of input files (ranks)
  std::vector<int32_t> fileRanks;      // rank of each file (trace distributedInfo, else file order)
  /// Per input file (index-aligned with `files`): the offset that was added to every time of
  /// that file's rank to put it on the model timeline (0 for the reference rank).
  std::vector<int64_t> rankClockOffsetNs;
  /// Per input file: how its offset was found ("nccl-kernel-end-median(n=..,mad_ns=..)",
  /// "reference rank", "none: ...").
  std::vector<std::string> rankClockMethod;
  /// Non-fatal findings while reading ("NVTX domain 1 has no eventType 75 row", ...).
  std::vector<std::string> warnings;
  /// Rows left out because their numbers are corrupt (core/profile/validate.h).
  SkippedRows skippedRows;
};

// ---- the columnar row tables -------------------------------------------------------------------

// Ends are stored as durations and correlation ids from -1 (Compact: 4 bytes a row), thread and
// process indices in 2 bytes (Small); every value reads back exactly.
using GpuOpTable =
    Columns<GpuOp, Dense<&GpuOp::start>, Compact<&GpuOp::end, &GpuOp::start>, Compact<&GpuOp::correlationId>,
            Dense<&GpuOp::name>, Small<&GpuOp::process>, Sparse<&GpuOp::detail>, Sparse<&GpuOp::graphId>,
            Sparse<&GpuOp::deviceId>, Sparse<&GpuOp::rank>, Sparse<&GpuOp::contextId>, Sparse<&GpuOp::streamId>,
            Sparse<&GpuOp::kind>>;
using ApiCallTable = Columns<ApiCall, Dense<&ApiCall::start>, Compact<&ApiCall::end, &ApiCall::start>,
                             Compact<&ApiCall::correlationId>, Sparse<&ApiCall::name>, Small<&ApiCall::thread>,
                             Sparse<&ApiCall::rank>, Sparse<&ApiCall::level>, Sparse<&ApiCall::role>>;
using RangeTable =
    Columns<Range, Dense<&Range::start>, Compact<&Range::end, &Range::start>, Dense<&Range::text>,
            Sparse<&Range::domain>, Sparse<&Range::category>, Small<&Range::thread>, Sparse<&Range::endThread>,
            Sparse<&Range::rank>, Sparse<&Range::categoryId>, Sparse<&Range::domainId>, Sparse<&Range::deviceId>,
            Sparse<&Range::streamId>, Sparse<&Range::kind>, Sparse<&Range::open>, Sparse<&Range::shapes>,
            Sparse<&Range::seq>, Sparse<&Range::fwdbwdFlow>, Sparse<&Range::backwardNode>>;
using PyFrameTable =
    Columns<PyFrame, Dense<&PyFrame::start>, Compact<&PyFrame::end, &PyFrame::start>, Dense<&PyFrame::file>,
            Dense<&PyFrame::function>, Dense<&PyFrame::name>, Dense<&PyFrame::thread>, Sparse<&PyFrame::parent>,
            Sparse<&PyFrame::pythonId>, Sparse<&PyFrame::line>, Sparse<&PyFrame::rank>>;

// ---- the model -------------------------------------------------------------------------------

struct ProfileModel {
  StringTable strings;
  Metadata meta;

  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<Gpu> gpus;

  GpuOpTable gpuOps;
  /// GpuOp::detail for Kind::Kernel. Empty when the reader was asked not to load kernel
  /// details (ReadOptions::kernelDetails = false): then every kernel's detail is kNone.
  std::vector<KernelDetail> kernels;
  std::vector<MemcpyDetail> memcpys;          // GpuOp::detail for Kind::Memcpy
  std::vector<MemsetDetail> memsets;          // GpuOp::detail for Kind::Memset
  std::vector<CollectiveDetail> collectives;  // KernelDetail::collective

  ApiCallTable apiCalls;
  RangeTable ranges;  // NVTX ranges + marks, Kineto annotations and cpu_ops
  PyFrameTable pyFrames;

  std::string_view str(StrId id) const { return strings.str(id); }
  const KernelDetail* kernel(const GpuOp& op) const {
    return op.kind == GpuOpKind::Kernel && op.detail < kernels.size() ? &kernels[op.detail] : nullptr;
  }
  /// Kernel short name when known, else the op's name.
  std::string_view shortName(const GpuOp& op) const;
  /// Number of kernel ops (also when kernel details were not loaded).
  size_t kernelCount() const;
};

}  // namespace kl::profile
