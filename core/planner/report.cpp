#include "core/planner/report.h"

#include <sstream>

#include "core/support/json_schema.h"
#include "core/support/json_writer.h"

namespace kl::planner {

std::string renderJson(const LoopResult& r) {
  std::ostringstream os;
  json::Writer w(os);
  w.beginObject();
  w.field("schema", json_schema::kProfile);
  w.field("converged", r.converged);
  w.field("stop_reason", std::string(stopReasonName(r.stopReason)));
  w.field("rounds", r.rounds);
  w.field("backend", r.backend);
  w.field("emulated", r.emulated);
  w.key("lines").beginArray();
  for (const auto& l : r.lines) {
    w.beginObject();
    w.field("file", l.path);
    w.field("line", l.line + 1);
    w.field("end_line", l.lastLine + 1);
    w.field("function", l.function);
    w.key("gpu_ns").value(static_cast<long long>(l.gpuNs));
    w.key("backward_gpu_ns").value(static_cast<long long>(l.backwardNs));
    if (std::string kinds = l.stepKind(); kinds.empty())
      w.key("step_kind").null();
    else
      w.field("step_kind", kinds);
    w.key("launches").value(static_cast<long long>(l.ops));
    w.field("invocations", l.invocations);
    w.field("atomic", l.atomic);
    if (l.atomicReason == attribution::AtomicReason::None)
      w.key("atomic_reason").null();
    else
      w.field("atomic_reason", attribution::atomicReasonName(l.atomicReason));
    // --kernel: the line launched none of the matching kernels (shown, left out of the counts).
    w.field("no_matching_kernel", l.noMatchingKernel);
    if (l.note.empty())
      w.key("note").null();
    else
      w.field("note", rewordForTest(l.note));
    if (l.suggestFocus.empty())
      w.key("suggest_focus").null();
    else
      w.field("suggest_focus", l.suggestFocus);
    w.key("kernels").beginArray();
    for (const auto& k : l.kernels) {
      w.beginObject();
      w.field("name", k.opName);
      w.field("backward", k.backward());
      w.field("pass", std::string(attribution::passName(k.pass)));
      if (k.backward()) w.field("forward_owner", !k.noForwardOwner);
      w.key("launches").value(static_cast<long long>(k.launches));
      w.key("gpu_ns").value(static_cast<long long>(k.totalNs));
      w.endObject();
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.key("unmapped").beginArray();
  for (const auto& u : r.unmapped) {
    w.beginObject();
    w.field("name", u.name);
    w.key("launches").value(static_cast<long long>(u.launches));
    w.key("gpu_ns").value(static_cast<long long>(u.gpuNs));
    w.field("reason", std::string(attribution::unmappedReasonName(u.reason)));
    w.endObject();
  }
  w.endArray();
  w.key("notes").beginArray();
  for (const auto& n : r.notes) w.value(renderNote(n));
  w.endArray();
  w.key("round_log").beginArray();
  for (const auto& rl : r.roundLog) {
    w.beginObject();
    w.field("round", rl.index);
    w.key("ranges").value(static_cast<long long>(rl.ranges));
    w.key("pushes").value(static_cast<long long>(rl.pushes));
    w.key("launches").value(static_cast<long long>(rl.launches));
    w.key("wall_ms").value(static_cast<long long>(rl.wallMs));
    w.field("profiler_version", rl.profilerVersion);
    w.field("gpu", rl.gpu);
    w.key("profiles").beginArray();
    for (const auto& p : rl.profiles) w.value(p);
    w.endArray();
    w.field("dir", rl.dir);
    w.key("notes").beginArray();
    for (const auto& n : rl.notes) w.value(renderNote(n));
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return os.str();
}

}  // namespace kl::planner
