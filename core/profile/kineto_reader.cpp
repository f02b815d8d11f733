// Kineto / PyTorch-profiler JSON (Chrome trace format) -> ProfileModel, streamed event by event.
//
// Mapping (categories compared case-insensitively, so the 2021 capitalised names work too):
//   kernel                          -> GpuOp Kernel (args: device, stream, context, correlation,
//                                      grid, block, registers per thread, shared memory)
//   gpu_memcpy / memcpy             -> GpuOp Memcpy (copy kind from "Memcpy HtoD (...)", bytes)
//   gpu_memset / memset             -> GpuOp Memset
//   cuda_runtime / cuda_driver / runtime / hip_* -> ApiCall (args.correlation)
//   cpu_op / operator               -> Range CpuOp; a 2021 "Operator" whose name contains '#'
//                                      (ProfilerStep#5, Optimizer.step#SGD.step) -> UserAnnotation
//   user_annotation                 -> Range UserAnnotation
//   gpu_user_annotation             -> Range GpuUserAnnotation (device/stream, no thread)
//   python_function                 -> PyFrame ("file.py(123): func", Python id / parent id)
//   2021 args["Call stack"]         -> a chain of PyFrames spanning the operator (outermost first)
//   ph "M" process_name/thread_name -> names
//   cpu_op args "Sequence number"   -> Range::seq; "Fwd thread id" > 0 -> Range::backwardNode
//   ph "s"/"f" cat "fwdbwd"         -> Range::fwdbwdFlow of the cpu_op starting at the flow's
//                                      ts on its thread (the innermost one when several do)
// Kernels are tied to processes through their runtime call's correlation id (GPU events carry
// the device as pid). "External id" is never used for linking.
#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "core/profile/json_pull.h"
#include "core/profile/reader.h"
#include "core/support/gzip.h"

namespace kl::profile {

namespace {

using Tok = JsonPull::Tok;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// One trace event, reduced to the fields we use.
struct Event {
  std::string ph, cat, name;
  std::optional<int64_t> pid, tid;  // numeric (or digits inside a string: "stream 7")
  std::string pidText, tidText;     // when not numeric ("Spans")
  int64_t ts = 0, dur = 0;
  const char* badTime = nullptr;  // why ts/dur are unusable (core/profile/validate.h)
  bool hasTs = false;
  // args
  std::optional<int64_t> correlation, device, stream, context, pyId, pyParent, bytes, regs, smem;
  std::optional<int64_t> seq, fwdThread, id;  // autograd "Sequence number", "Fwd thread id"; flow id
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::string argName, callStack;
  std::string inputDims, inputTypes, concreteInputs;  // compact text, see Range::shapes
  // NCCL kernels (PyTorch >= 2.1 copies record_param_comms' args onto the kernel event)
  std::optional<int64_t> inNelems, outNelems, groupSize;
  std::string collName, collDtype, pgName;
  void clear() {
    ph.clear();
    cat.clear();
    name.clear();
    pid.reset();
    tid.reset();
    pidText.clear();
    tidText.clear();
    ts = dur = 0;
    badTime = nullptr;
    hasTs = false;
    correlation.reset();
    device.reset();
    stream.reset();
    context.reset();
    pyId.reset();
    pyParent.reset();
    bytes.reset();
    regs.reset();
    smem.reset();
    seq.reset();
    fwdThread.reset();
    id.reset();
    for (int i = 0; i < 3; ++i) grid[i] = block[i] = 0;
    argName.clear();
    callStack.clear();
    inputDims.clear();
    inputTypes.clear();
    concreteInputs.clear();
    inNelems.reset();
    outNelems.reset();
    groupSize.reset();
    collName.clear();
    collDtype.clear();
    pgName.clear();
  }
};

/// Integer from a number token or from the digits of a string ("stream 7", "25738").
std::optional<int64_t> intOf(Tok t, std::string_view text) {
  int64_t v;
  if (t == Tok::Number) {
    if (parseInt64(text, v)) return v;
    return std::nullopt;
  }
  if (t == Tok::String) {
    size_t i = 0;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '-') ++i;
    size_t j = i;
    if (j < text.size() && text[j] == '-') ++j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i && parseInt64(text.substr(i, j - i), v)) return v;
  }
  return std::nullopt;
}

class KinetoReader {
 public:
  /// `sourceNamed`: the source's own errors name the input as `name` does (a file opened by its
  /// path), so they are not prefixed again.
  KinetoReader(ByteSource& src, std::string name, const ReadOptions& opts, bool sourceNamed)
      : p_(src), name_(std::move(name)), sourceNamed_(sourceNamed), opts_(opts) {}

  Result<ProfileModel> run() {
    Tok t = p_.next();
    if (t == Tok::Error) return fail(p_.error());
    if (t == Tok::ArrBegin) {  // bare Chrome trace: an array of events
      if (auto r = readEvents(); !r) return r.error();
      if (p_.next() != Tok::End) return fail(p_.error().empty() ? "data after the trace array" : p_.error());
      sawEvents_ = eventObjects_ > 0;
    } else if (t == Tok::ObjBegin) {
      while (true) {
        t = p_.next();
        if (t == Tok::ObjEnd) break;
        if (t != Tok::Key) return fail(p_.error().empty() ? "malformed JSON" : p_.error());
        std::string key(p_.text());
        Tok v = p_.next();
        if (v == Tok::Error) return fail(p_.error());
        if (key == "traceEvents" && v == Tok::ArrBegin) {
          if (auto r = readEvents(); !r) return r.error();
          sawEvents_ = true;
        } else if (key == "distributedInfo" && v == Tok::ObjBegin) {
          if (auto r = readDistributed(); !r) return r.error();
        } else if (key == "deviceProperties" && v == Tok::ArrBegin) {
          if (auto r = readDevices(); !r) return r.error();
        } else if (key == "schemaVersion" && (v == Tok::Number || v == Tok::String)) {
          m_.meta.schemaVersion = std::string(p_.text());
        } else if (key == "traceName" && v == Tok::String) {
          traceName_ = std::string(p_.text());
        } else if ((key == "kernlens_emulated" || key == "emulated") && v == Tok::True) {
          m_.meta.emulated = true;
        } else if (!p_.skip(v)) {
          return fail(p_.error());
        }
      }
      if (p_.next() != Tok::End) return fail(p_.error().empty() ? "data after the trace object" : p_.error());
    } else {
      return fail("JSON but not a trace (top level is not an object or array)");
    }
    if (!sawEvents_) return fail("JSON but not a trace (no traceEvents array)");
    if (opts_.cancel.isCancelled()) return Error::cancelled();
    return finish();
  }

 private:
  Error fail(const std::string& why) const {
    // Errors of the byte source (e.g. "<file>: truncated gzip data") already name the file.
    if (sourceNamed_ && p_.sourceFailed()) return Error::invalid(why);
    return Error::invalid(name_ + ": " + why);
  }

  Result<void> readDistributed() {
    while (true) {
      Tok t = p_.next();
      if (t == Tok::ObjEnd) return {};
      if (t != Tok::Key) return fail(p_.error());
      std::string key(p_.text());
      Tok v = p_.next();
      if (key == "rank") {
        if (auto r = intOf(v, p_.text())) rank_ = static_cast<int32_t>(*r);
      }
      if (!p_.skip(v)) return fail(p_.error());
    }
  }

  Result<void> readDevices() {
    while (true) {
      Tok t = p_.next();
      if (t == Tok::ArrEnd) return {};
      if (t != Tok::ObjBegin) {
        if (!p_.skip(t)) return fail(p_.error());
        continue;
      }
      Gpu g;
      while (true) {
        Tok k = p_.next();
        if (k == Tok::ObjEnd) break;
        if (k != Tok::Key) return fail(p_.error());
        std::string key(p_.text());
        Tok v = p_.next();
        auto num = intOf(v, p_.text());
        if (key == "id" && num)
          g.deviceId = static_cast<int32_t>(*num);
        else if (key == "name" && v == Tok::String)
          g.name = m_.strings.intern(p_.text());
        else if (key == "totalGlobalMem" && num)
          g.memoryBytes = *num;
        else if (key == "computeMajor" && num)
          g.computeMajor = static_cast<int32_t>(*num);
        else if (key == "computeMinor" && num)
          g.computeMinor = static_cast<int32_t>(*num);
        else if (key == "numSms" && num)
          g.smCount = static_cast<int32_t>(*num);
        if (!p_.skip(v)) return fail(p_.error());
      }
      if (g.deviceId >= 0) m_.gpus.push_back(g);
    }
  }

  /// The Kineto "args" keys readArgs() keeps (None: any other key, skipped).
  enum class Arg {
    None,
    Corr,
    Dev,
    Stream,
    Ctx,
    PyId,
    PyParent,
    Bytes,
    Regs,
    Smem,
    Grid,
    Block,
    Name,
    Stack,
    Dims,
    Types,
    Concrete,
    InN,
    OutN,
    Group,
    Coll,
    DType,
    Pg,
    Seq,
    FwdTid
  };
  static Arg argOf(std::string_view k) {
    static constexpr std::pair<std::string_view, Arg> kKeys[] = {
        {"correlation", Arg::Corr},
        {"device", Arg::Dev},
        {"stream", Arg::Stream},
        {"context", Arg::Ctx},
        {"Python id", Arg::PyId},
        {"Python parent id", Arg::PyParent},
        {"bytes", Arg::Bytes},
        {"registers per thread", Arg::Regs},
        {"shared memory", Arg::Smem},
        {"grid", Arg::Grid},
        {"block", Arg::Block},
        {"name", Arg::Name},
        {"labels", Arg::Name},
        {"Call stack", Arg::Stack},
        {"Input Dims", Arg::Dims},
        {"Input type", Arg::Types},
        {"Concrete Inputs", Arg::Concrete},
        {"In msg nelems", Arg::InN},
        {"Out msg nelems", Arg::OutN},
        {"Group size", Arg::Group},
        {"Collective name", Arg::Coll},
        {"dtype", Arg::DType},
        {"Process Group Name", Arg::Pg},
        {"Sequence number", Arg::Seq},
        {"Fwd thread id", Arg::FwdTid},
    };
    for (const auto& [key, arg] : kKeys)
      if (k == key) return arg;
    return Arg::None;
  }

  /// The "args" object of an event (after its ObjBegin, through its ObjEnd) into e's fields.
  Result<void> readArgs(Event& e) {
    while (true) {
      Tok t = p_.next();
      if (t == Tok::ObjEnd) return {};
      if (t != Tok::Key) return fail(p_.error());
      const Arg which = argOf(p_.text());  // compared before next() invalidates the view
      Tok v = p_.next();
      if (v == Tok::Error) return fail(p_.error());
      switch (which) {
        case Arg::Corr: e.correlation = intOf(v, p_.text()); break;
        case Arg::Dev: e.device = intOf(v, p_.text()); break;
        case Arg::Stream: e.stream = intOf(v, p_.text()); break;
        case Arg::Ctx: e.context = intOf(v, p_.text()); break;
        case Arg::PyId: e.pyId = intOf(v, p_.text()); break;
        case Arg::PyParent: e.pyParent = intOf(v, p_.text()); break;
        case Arg::Bytes: e.bytes = intOf(v, p_.text()); break;
        case Arg::Regs: e.regs = intOf(v, p_.text()); break;
        case Arg::Smem: e.smem = intOf(v, p_.text()); break;
        case Arg::Name:
          if (v == Tok::String && e.argName.empty()) e.argName = std::string(p_.text());
          break;
        case Arg::Stack:
          if (v == Tok::String) e.callStack = std::string(p_.text());
          break;
        case Arg::Grid:
        case Arg::Block:
          if (v == Tok::ArrBegin) {
            KL_TRY(readDim3(which == Arg::Grid ? e.grid : e.block));
            continue;
          }
          break;
        case Arg::Dims:
        case Arg::Types:
        case Arg::Concrete:
          if (v != Tok::ArrBegin) break;
          KL_TRY(readInputs(which, e));
          continue;
        case Arg::InN: e.inNelems = intOf(v, p_.text()); break;
        case Arg::OutN: e.outNelems = intOf(v, p_.text()); break;
        case Arg::Group: e.groupSize = intOf(v, p_.text()); break;
        case Arg::Coll:
          if (v == Tok::String) e.collName = std::string(p_.text());
          break;
        case Arg::DType:
          if (v == Tok::String) e.collDtype = std::string(p_.text());
          break;
        case Arg::Pg:
          if (v == Tok::String) e.pgName = std::string(p_.text());
          break;
        case Arg::Seq: e.seq = intOf(v, p_.text()); break;
        case Arg::FwdTid: e.fwdThread = intOf(v, p_.text()); break;
        case Arg::None: break;
      }
      if (!p_.skip(v)) return fail(p_.error());
    }
  }

  /// After the ArrBegin of a "grid" / "block" array: its first three integers into dst (others
  /// left as they are). Consumes the ArrEnd.
  Result<void> readDim3(int32_t* dst) {
    int i = 0;
    while (true) {
      Tok x = p_.next();
      if (x == Tok::ArrEnd) return {};
      if (x == Tok::Error || x == Tok::End) return fail(p_.error());
      if (auto n = intOf(x, p_.text()); n && i < 3) dst[i] = static_cast<int32_t>(*n);
      ++i;
      if (!p_.skip(x)) return fail(p_.error());
    }
  }

  /// After the ArrBegin of "Input Dims" / "Input type" / "Concrete Inputs": the array, compacted
  /// (compactArray), into its field of e. Consumes the ArrEnd.
  Result<void> readInputs(Arg which, Event& e) {
    std::string& dst = which == Arg::Dims ? e.inputDims : which == Arg::Types ? e.inputTypes : e.concreteInputs;
    if (compactArray(dst)) return {};
    if (!p_.error().empty()) return fail(p_.error());
    return fail("bad '" +
                std::string(which == Arg::Dims    ? "Input Dims"
                            : which == Arg::Types ? "Input type"
                                                  : "Concrete Inputs") +
                "'");
  }

  /// After an ArrBegin: the array's elements as text, ';' between top-level elements, ','
  /// between the numbers/strings inside one (nested lists flattened). Consumes the ArrEnd.
  bool compactArray(std::string& out) {
    int depth = 1;
    bool first = true, firstInner = true;
    while (depth > 0) {
      Tok x = p_.next();
      switch (x) {
        case Tok::ArrBegin:
          if (depth == 1) {
            if (!first) out.push_back(';');
            first = false;
            firstInner = true;
          }
          ++depth;
          break;
        case Tok::ArrEnd: --depth; break;
        case Tok::String:
        case Tok::Number:
        case Tok::True:
        case Tok::False:
        case Tok::Null: {
          if (depth == 1) {
            if (!first) out.push_back(';');
            first = false;
          } else if (!firstInner) {
            out.push_back(',');
          }
          firstInner = false;
          std::string_view t = x == Tok::True ? "True" : x == Tok::False ? "False" : x == Tok::Null ? "" : p_.text();
          for (char ch : t)
            if (ch != ';' && ch != ',' && ch != '|') out.push_back(ch);
          break;
        }
        case Tok::ObjBegin:
          if (!p_.skip(x)) return false;
          break;
        default: return false;
      }
    }
    return true;
  }

  Result<void> readEvents() {
    Event e;
    for (uint64_t n = 0;; ++n) {
      Tok t = p_.next();
      if (t == Tok::ArrEnd) return {};
      if (t == Tok::Error || t == Tok::End) return fail(p_.error().empty() ? "truncated traceEvents" : p_.error());
      if ((n & 0x3FFF) == 0x3FFF && opts_.cancel.isCancelled()) return Error::cancelled();
      if (t != Tok::ObjBegin) {
        if (!p_.skip(t)) return fail(p_.error());
        continue;
      }
      e.clear();
      while (true) {
        Tok k = p_.next();
        if (k == Tok::ObjEnd) break;
        if (k != Tok::Key) return fail(p_.error());
        std::string_view key = p_.text();
        enum { None, Ph, Cat, Name, Pid, Tid, Ts, Dur, Args, Id } which = None;
        if (key == "ph")
          which = Ph;
        else if (key == "cat")
          which = Cat;
        else if (key == "name")
          which = Name;
        else if (key == "pid")
          which = Pid;
        else if (key == "tid")
          which = Tid;
        else if (key == "ts")
          which = Ts;
        else if (key == "dur")
          which = Dur;
        else if (key == "args")
          which = Args;
        else if (key == "id")
          which = Id;
        Tok v = p_.next();
        if (v == Tok::Error) return fail(p_.error());
        switch (which) {
          case Ph:
            if (v == Tok::String) e.ph = std::string(p_.text());
            break;
          case Cat:
            if (v == Tok::String) {
              e.cat = lower(p_.text());
              catRaw_ = p_.text() == "Operator";  // the 2021 capitalised category
            }
            break;
          case Name:
            if (v == Tok::String) e.name = std::string(p_.text());
            break;
          case Pid:
            e.pid = intOf(v, p_.text());
            if (!e.pid && v == Tok::String) e.pidText = std::string(p_.text());
            break;
          case Tid:
            e.tid = intOf(v, p_.text());
            if (!e.tid && v == Tok::String) e.tidText = std::string(p_.text());
            break;
          case Ts:
            if (v == Tok::Number) e.hasTs = parseMicrosToNs(p_.text(), e.ts);
            if (!e.hasTs) e.badTime = "a ts that is not a number";
            break;
          case Dur:
            if (v != Tok::Number || !parseMicrosToNs(p_.text(), e.dur)) e.badTime = "a dur that is not a number";
            break;
          case Args:
            if (v == Tok::ObjBegin) {
              if (auto r = readArgs(e); !r) return r;
              continue;
            }
            break;
          case Id: e.id = intOf(v, p_.text()); break;
          case None: break;
        }
        if (!p_.skip(v)) return fail(p_.error());
      }
      if (!e.ph.empty()) ++eventObjects_;
      handle(e, catRaw_);
      catRaw_ = false;
    }
  }

  /// CPU-side thread for (pid, tid) of the trace.
  uint32_t thread(int64_t pid, int64_t tid) {
    auto key = std::make_pair(pid, tid);
    auto it = threadIdx_.find(key);
    if (it != threadIdx_.end()) return it->second;
    Thread th;
    th.process = process(pid);
    th.tid = static_cast<uint32_t>(tid) & 0xFFFFFFu;
    th.globalTid = GlobalId::make(0, 0, static_cast<uint32_t>(pid), static_cast<uint32_t>(tid));
    if (auto n = threadNames_.find(key); n != threadNames_.end()) th.name = n->second;
    auto idx = static_cast<uint32_t>(m_.threads.size());
    m_.threads.push_back(th);
    threadIdx_.emplace(key, idx);
    return idx;
  }

  uint32_t process(int64_t pid) {
    auto it = procIdx_.find(pid);
    if (it != procIdx_.end()) return it->second;
    Process p;
    p.pid = static_cast<uint32_t>(pid) & 0xFFFFFFu;
    p.globalPid = GlobalId::make(0, 0, static_cast<uint32_t>(pid), 0);
    if (auto n = procNames_.find(pid); n != procNames_.end()) p.name = n->second;
    auto idx = static_cast<uint32_t>(m_.processes.size());
    m_.processes.push_back(p);
    procIdx_.emplace(pid, idx);
    return idx;
  }

  static uint8_t copyKindOf(std::string_view name) {
    if (name.find("HtoD") != std::string_view::npos) return 1;
    if (name.find("DtoH") != std::string_view::npos) return 2;
    if (name.find("DtoD") != std::string_view::npos) return 8;
    if (name.find("HtoH") != std::string_view::npos) return 9;
    if (name.find("PtoP") != std::string_view::npos) return 10;
    return 0;
  }

  /// One complete event: metadata names a process or thread, a `fwdbwd` flow end is kept for
  /// bindFlows(), an "X" event with a valid interval becomes a GPU op, an API call, a range or a
  /// Python frame by its category (corrupt times: skipped and counted in skippedRows).
  void handle(const Event& e, bool operator2021) {
    if (e.ph == "M") {
      handleMetadata(e);
      return;
    }
    if ((e.ph == "s" || e.ph == "f") && e.cat == "fwdbwd") {
      if (e.pid && e.tid && e.id && e.hasTs && !e.badTime)
        flows_.push_back({thread(*e.pid, *e.tid), e.ts, *e.id, e.ph == "f"});
      return;
    }
    if (e.ph != "X") return;
    const std::string& c = e.cat;
    bool gpu = c == "kernel" || c == "gpu_memcpy" || c == "memcpy" || c == "gpu_memset" || c == "memset";
    // Corrupt times: the event is skipped and counted, never read as 0 or clamped.
    const char* why = e.badTime;
    if (!why && !e.hasTs) why = "no ts";
    int64_t start = e.ts, end = 0;
    if (!why && __builtin_add_overflow(e.ts, e.dur, &end)) why = "a time beyond 2^61 ns";
    if (!why)
      why = badInterval(start, end, gpu || c.find("runtime") != std::string::npos ? kMaxIntervalNs : kMaxTimestampNs);
    if (why) {
      m_.meta.skippedRows.add("trace event '" + e.name.substr(0, 60) + "'", why);
      return;
    }
    if (gpu) {
      addGpuOp(e, start, end);
      return;
    }
    // CPU-side events need a numeric pid and tid ("Spans"/"Traces" pseudo tracks are skipped).
    if (!e.pid || (!e.tid && c != "gpu_user_annotation")) return;
    if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime" || c == "driver" || c == "hip_runtime" ||
        c == "hip_driver") {
      addApiCall(e, start, end);
      return;
    }
    if (c == "cpu_op" || c == "operator" || c == "user_annotation" || c == "gpu_user_annotation") {
      addRange(e, start, end, operator2021);
      return;
    }
    if (c == "python_function") addPyFrame(e, start, end);
  }

  /// A metadata ("M") event: the name of a process or thread. A process or thread named twice
  /// (Kineto reuses a tid for another thread) keeps the name first in text order, whatever order
  /// the events come in.
  void handleMetadata(const Event& e) {
    if (!e.pid || e.argName.empty()) return;
    auto keep = [&](StrId& slot, bool fresh) {
      StrId n = m_.strings.intern(e.argName);
      if (fresh || e.argName < m_.str(slot)) slot = n;
    };
    if (e.name == "process_name") {
      auto [it, fresh] = procNames_.try_emplace(*e.pid, kEmptyStr);
      keep(it->second, fresh);
    } else if (e.name == "thread_name" && e.tid) {
      auto [it, fresh] = threadNames_.try_emplace({*e.pid, *e.tid}, kEmptyStr);
      keep(it->second, fresh);
    }
  }

  /// A kernel, memcpy or memset event over [start, end] as a GPU op with its detail row (a kernel
  /// with collective arguments also gets a collective row).
  void addGpuOp(const Event& e, int64_t start, int64_t end) {
    const std::string& c = e.cat;
    GpuOp op;
    op.start = start;
    op.end = end;
    op.correlationId = e.correlation.value_or(-1);
    op.deviceId = static_cast<int32_t>(e.device ? *e.device : e.pid.value_or(-1));
    op.streamId = static_cast<uint32_t>(e.stream ? *e.stream : e.tid.value_or(0));
    op.contextId = static_cast<uint32_t>(e.context.value_or(0));
    op.name = m_.strings.intern(e.name);
    if (c == "kernel") {
      op.kind = GpuOpKind::Kernel;
      KernelDetail k;
      k.demangledName = op.name;
      for (int i = 0; i < 3; ++i) {
        k.grid[i] = e.grid[i];
        k.block[i] = e.block[i];
      }
      k.registersPerThread = static_cast<int32_t>(e.regs.value_or(0));
      k.dynamicSharedMemory = static_cast<int32_t>(e.smem.value_or(0));  // Kineto reports one total
      if (!e.collName.empty() || e.inNelems || e.outNelems) {
        CollectiveDetail cd;
        cd.name = m_.strings.intern(e.collName);
        cd.inNelems = e.inNelems.value_or(-1);
        cd.outNelems = e.outNelems.value_or(-1);
        cd.groupSize = static_cast<int32_t>(std::clamp<int64_t>(e.groupSize.value_or(0), 0, INT32_MAX));
        cd.dtype = m_.strings.intern(e.collDtype);
        cd.processGroup = m_.strings.intern(e.pgName);
        k.collective = static_cast<uint32_t>(m_.collectives.size());
        m_.collectives.push_back(cd);
      }
      op.detail = static_cast<uint32_t>(m_.kernels.size());
      m_.kernels.push_back(k);
    } else if (c == "gpu_memcpy" || c == "memcpy") {
      op.kind = GpuOpKind::Memcpy;
      MemcpyDetail d;
      d.bytes = e.bytes.value_or(0);
      d.copyKind = copyKindOf(e.name);
      op.detail = static_cast<uint32_t>(m_.memcpys.size());
      m_.memcpys.push_back(d);
    } else {
      op.kind = GpuOpKind::Memset;
      MemsetDetail d;
      d.bytes = e.bytes.value_or(0);
      op.detail = static_cast<uint32_t>(m_.memsets.size());
      m_.memsets.push_back(d);
    }
    m_.gpuOps.push_back(op);
  }

  /// A runtime or driver event (pid and tid known) as an API call with its role.
  void addApiCall(const Event& e, int64_t start, int64_t end) {
    ApiCall a;
    a.start = start;
    a.end = end;
    a.correlationId = e.correlation.value_or(-1);
    a.name = m_.strings.intern(e.name);
    a.thread = thread(*e.pid, *e.tid);
    a.level = e.cat.find("driver") != std::string::npos ? ApiLevel::Driver : ApiLevel::Runtime;
    auto [it, fresh] = roles_.try_emplace(a.name, ApiRole::Other);
    if (fresh) it->second = classifyApi(e.name);
    a.role = it->second;
    m_.apiCalls.push_back(a);
  }

  /// A cpu_op / operator / user_annotation event (on its thread; `operator2021`: an operator
  /// named with '#' is a user annotation) or a gpu_user_annotation (on its device and stream) as a
  /// range, with its shapes, sequence number and call stack.
  void addRange(const Event& e, int64_t start, int64_t end, bool operator2021) {
    const std::string& c = e.cat;
    Range r;
    r.start = start;
    r.end = end;
    r.text = m_.strings.intern(e.name);
    if (c == "gpu_user_annotation") {
      r.kind = RangeKind::GpuUserAnnotation;
      r.deviceId = static_cast<int32_t>(e.device ? *e.device : e.pid.value_or(-1));
      r.streamId = static_cast<uint32_t>(e.stream ? *e.stream : e.tid.value_or(0));
    } else {
      r.kind = c == "user_annotation" ? RangeKind::UserAnnotation : RangeKind::CpuOp;
      if (operator2021 && e.name.find('#') != std::string::npos) r.kind = RangeKind::UserAnnotation;
      r.thread = thread(*e.pid, *e.tid);
      if (!e.inputDims.empty() && e.inputDims.find_first_not_of(';') != std::string::npos)
        r.shapes = m_.strings.intern(e.inputDims + "|" + e.inputTypes + "|" + e.concreteInputs);
      if (e.seq && *e.seq >= 0) r.seq = *e.seq;
      r.backwardNode = e.fwdThread && *e.fwdThread > 0;
    }
    m_.ranges.push_back(r);
    if (!e.callStack.empty() && r.thread != kNone) addCallStack(e.callStack, r);
  }

  /// A python_function event (pid and tid known) as a Python frame; its parent is bound later.
  void addPyFrame(const Event& e, int64_t start, int64_t end) {
    PyFrame f;
    f.start = start;
    f.end = end;
    f.thread = thread(*e.pid, *e.tid);
    f.name = m_.strings.intern(e.name);
    parseFrameName(e.name, f);
    f.pythonId = e.pyId.value_or(-1);
    if (e.pyParent) pendingParent_.emplace_back(static_cast<uint32_t>(m_.pyFrames.size()), *e.pyParent);
    if (f.pythonId >= 0) pyIdx_[f.pythonId] = static_cast<uint32_t>(m_.pyFrames.size());
    m_.pyFrames.push_back(f);
  }

  /// Each `fwdbwd` flow end -> the innermost cpu_op starting exactly at its ts on its thread.
  void bindFlows() {
    if (flows_.empty()) return;
    std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> at;  // (thread, start) -> range
    for (uint32_t r = 0; r < m_.ranges.size(); ++r) {
      const auto g = m_.ranges[r];
      if (g.kind != RangeKind::CpuOp) continue;
      auto [it, fresh] = at.try_emplace({g.thread, g.start}, r);
      if (!fresh) {  // the innermost: the shortest; equal ones by text, never by event order
        const auto h = m_.ranges[it->second];
        if (std::tuple(g.end - g.start, m_.str(g.text), g.seq) < std::tuple(h.end - h.start, m_.str(h.text), h.seq))
          it->second = r;
      }
    }
    for (const auto& f : flows_) {
      auto it = at.find({f.thread, f.ts});
      if (it == at.end()) continue;
      m_.ranges.put<&Range::fwdbwdFlow>(it->second, f.id);
      if (f.end) m_.ranges.put<&Range::backwardNode>(it->second, true);
    }
  }

  /// "path/file.py(123): func" -> file, line, function. Other names ("<built-in ...>",
  /// "nn.Module: Linear_0") keep file empty and line 0, function = the name.
  void parseFrameName(std::string_view s, PyFrame& f) {
    auto close = s.find("): ");
    auto open = close == std::string_view::npos ? std::string_view::npos : s.rfind('(', close);
    if (open != std::string_view::npos && open > 0 && close > open + 1) {
      int64_t line;
      if (parseInt64(s.substr(open + 1, close - open - 1), line) && line > 0 && line < INT32_MAX) {
        f.file = m_.strings.intern(s.substr(0, open));
        f.line = static_cast<int32_t>(line);
        f.function = m_.strings.intern(s.substr(close + 3));
        return;
      }
    }
    f.function = m_.strings.intern(s);
  }

  /// 2021 format: "a.py(1): f;b.py(2): g;..." innermost first -> frames spanning the operator,
  /// outermost first, each the parent of the next.
  void addCallStack(std::string_view stack, const Range& op) {
    std::vector<std::string_view> parts;
    size_t i = 0;
    while (i <= stack.size()) {
      size_t j = stack.find(';', i);
      if (j == std::string_view::npos) j = stack.size();
      if (j > i) parts.push_back(stack.substr(i, j - i));
      i = j + 1;
    }
    uint32_t parent = kNone;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      PyFrame f;
      f.start = op.start;
      f.end = op.end;
      f.thread = op.thread;
      f.name = m_.strings.intern(*it);
      parseFrameName(*it, f);
      f.parent = parent;
      parent = static_cast<uint32_t>(m_.pyFrames.size());
      m_.pyFrames.push_back(f);
    }
  }

  Result<ProfileModel> finish() {
    auto& meta = m_.meta;
    meta.format = SourceFormat::Kineto;
    meta.toolVersion = "kineto" + (meta.schemaVersion.empty() ? std::string() : " schema " + meta.schemaVersion);
    if (traceName_.find("emulated") != std::string::npos) meta.emulated = true;
    meta.files.push_back(name_);
    meta.fileRanks.push_back(rank_);
    meta.rankClockOffsetNs.push_back(0);
    meta.rankClockMethod.push_back("none: single file");
    bindFlows();
    for (auto [idx, parentId] : pendingParent_)
      if (auto it = pyIdx_.find(parentId); it != pyIdx_.end() && it->second != idx)
        m_.pyFrames.put<&PyFrame::parent>(idx, it->second);
    // Names that arrived after the first use.
    for (auto& [pid, idx] : procIdx_)
      if (auto n = procNames_.find(pid); n != procNames_.end()) m_.processes[idx].name = n->second;
    for (auto& [key, idx] : threadIdx_)
      if (auto n = threadNames_.find(key); n != threadNames_.end()) m_.threads[idx].name = n->second;
    // GPU ops belong to the process of their runtime call (correlation ids are per trace).
    std::unordered_map<int64_t, uint32_t> corrProc;
    for (const auto& a : m_.apiCalls)
      if (a.correlationId >= 0) corrProc.emplace(a.correlationId, m_.threads[a.thread].process);
    uint32_t mainProc = kNone;
    {
      std::vector<uint32_t> count(m_.processes.size(), 0);
      for (const auto& a : m_.apiCalls) ++count[m_.threads[a.thread].process];
      uint32_t best = 0;
      for (uint32_t i = 0; i < count.size(); ++i)  // equal counts: the lower process id, not the first met
        if (count[i] > best || (count[i] == best && best > 0 && mainProc != kNone &&
                                m_.processes[i].globalPid < m_.processes[mainProc].globalPid))
          best = count[i], mainProc = i;
      if (mainProc == kNone && !m_.processes.empty()) mainProc = 0;
    }
    for (size_t i = 0; i < m_.gpuOps.size(); ++i) {
      int64_t corr = m_.gpuOps.get<&GpuOp::correlationId>(i);
      auto it = corr >= 0 ? corrProc.find(corr) : corrProc.end();
      if (it != corrProc.end())
        m_.gpuOps.put<&GpuOp::process>(i, it->second);
      else {
        if (mainProc == kNone) mainProc = process(0);
        m_.gpuOps.put<&GpuOp::process>(i, mainProc);
      }
    }
    // GPUs seen only through their ops.
    for (const auto& op : m_.gpuOps) {
      if (std::none_of(m_.gpus.begin(), m_.gpus.end(), [&](const Gpu& g) { return g.deviceId == op.deviceId; })) {
        Gpu g;
        g.deviceId = op.deviceId;
        m_.gpus.push_back(g);
      }
    }
    std::sort(m_.gpus.begin(), m_.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.deviceId < b.deviceId; });
    // Rows carry the trace's rank (0 when the trace does not say).
    int32_t rank = rank_ >= 0 ? rank_ : 0;
    for (auto& p : m_.processes) p.rank = rank;
    for (auto& g : m_.gpus) g.rank = rank;
    for (size_t i = 0; i < m_.gpuOps.size(); ++i) m_.gpuOps.put<&GpuOp::rank>(i, rank);
    for (size_t i = 0; i < m_.apiCalls.size(); ++i) m_.apiCalls.put<&ApiCall::rank>(i, rank);
    for (size_t i = 0; i < m_.ranges.size(); ++i) m_.ranges.put<&Range::rank>(i, rank);
    for (size_t i = 0; i < m_.pyFrames.size(); ++i) m_.pyFrames.put<&PyFrame::rank>(i, rank);
    finalizeModel(m_);
    return std::move(m_);
  }

  JsonPull p_;
  std::string name_;
  bool sourceNamed_ = false;
  const ReadOptions& opts_;
  ProfileModel m_;
  bool sawEvents_ = false;
  bool catRaw_ = false;
  uint64_t eventObjects_ = 0;
  int32_t rank_ = -1;
  std::string traceName_;
  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& k) const {
      return std::hash<int64_t>()(k.first * 1000003 ^ k.second);
    }
  };
  std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> threadIdx_;
  std::unordered_map<std::pair<int64_t, int64_t>, StrId, PairHash> threadNames_;
  std::unordered_map<int64_t, uint32_t> procIdx_;
  std::unordered_map<int64_t, StrId> procNames_;
  std::unordered_map<StrId, ApiRole> roles_;
  std::unordered_map<int64_t, uint32_t> pyIdx_;
  std::vector<std::pair<uint32_t, int64_t>> pendingParent_;
  struct Flow {
    uint32_t thread;
    int64_t ts, id;
    bool end;  // "f": the backward node's end of the flow
  };
  std::vector<Flow> flows_;
};

}  // namespace

Result<ProfileModel> readKinetoJson(const std::filesystem::path& path, const ReadOptions& opts) {
  auto src = openMaybeGzip(path);
  if (!src) return src.error();
  KinetoReader reader(**src, path.string(), opts, true);
  auto r = reader.run();
  if (!r) return r.error();
  return r;
}

Result<ProfileModel> readKinetoJsonText(std::string_view text, std::string_view name, const ReadOptions& opts) {
  auto src = memorySource(text);
  KinetoReader reader(*src, std::string(name), opts, false);
  return reader.run();
}

}  // namespace kl::profile
