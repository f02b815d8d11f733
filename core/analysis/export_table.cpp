#include "core/analysis/export_table.h"

#include <charconv>

#include "core/support/json_writer.h"

namespace kl::analysis {

const std::array<const char*, 15> kExportColumns = {"kind",
                                                    "name",
                                                    "short_name",
                                                    "start_ns",
                                                    "end_ns",
                                                    "duration_ns",
                                                    "device",
                                                    "stream",
                                                    "pid",
                                                    "tid",
                                                    "correlation_id",
                                                    "rank",
                                                    "nvtx_path",
                                                    "innermost_range",
                                                    "unattributed_reason"};

void appendCsvField(std::string& out, std::string_view s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!quote) {
    out.append(s);
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

namespace {

/// The values of one row; numbers kept as integers with a "known" flag.
struct Row {
  const char* kind;
  std::string_view name, shortName;
  int64_t start, end, dur;
  int64_t device, stream;
  bool havePid;
  int64_t pid;
  bool haveTid;
  int64_t tid;
  bool haveCorr;
  int64_t corr;
  int64_t rank;
  std::string path;
  std::string_view innermost, reason;
};

Row makeRow(const View& v, uint32_t i) {
  const auto& m = v.m;
  const auto& op = m.gpuOps[i];
  Row r{};
  r.kind = opKindName(op.kind);
  r.name = m.str(op.name);
  const auto* k = m.kernel(op);
  r.shortName = k ? m.str(k->shortName) : std::string_view();
  r.start = op.start;
  r.end = op.end;
  r.dur = op.duration();
  r.device = op.deviceId;
  r.stream = op.streamId;
  r.havePid = op.process != kNone && op.process < m.processes.size();
  r.pid = r.havePid ? m.processes[op.process].pid : 0;
  r.haveCorr = op.correlationId >= 0;
  r.corr = op.correlationId;
  r.rank = op.rank;
  if (v.attr) {
    const auto& a = v.attr->op(i);
    if (a.launch != kNone) {
      uint32_t t = m.apiCalls[a.launch].thread;
      if (t != kNone && t < m.threads.size()) {
        r.haveTid = true;
        r.tid = m.threads[t].tid;
      }
    }
    if (a.stackSize) {
      r.path = v.attr->path(m, i, " > ");
      r.innermost = m.str(m.ranges[v.attr->innermost(i)].text);
    }
    r.reason = attribution::unattributedName(a.reason);
  }
  return r;
}

void appendInt(std::string& out, int64_t x) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, res.ptr);
}

}  // namespace

void writeOpsCsv(std::ostream& out, const View& v) {
  std::string line;
  for (size_t c = 0; c < kExportColumns.size(); ++c) {
    if (c) line.push_back(',');
    line += kExportColumns[c];
  }
  line += "\r\n";
  out << line;
  for (uint32_t i : v.ops) {
    Row r = makeRow(v, i);
    line.clear();
    line += r.kind;
    line.push_back(',');
    appendCsvField(line, r.name);
    line.push_back(',');
    appendCsvField(line, r.shortName);
    for (int64_t x : {r.start, r.end, r.dur, r.device, r.stream}) {
      line.push_back(',');
      appendInt(line, x);
    }
    line.push_back(',');
    if (r.havePid) appendInt(line, r.pid);
    line.push_back(',');
    if (r.haveTid) appendInt(line, r.tid);
    line.push_back(',');
    if (r.haveCorr) appendInt(line, r.corr);
    line.push_back(',');
    appendInt(line, r.rank);
    line.push_back(',');
    appendCsvField(line, r.path);
    line.push_back(',');
    appendCsvField(line, r.innermost);
    line.push_back(',');
    appendCsvField(line, r.reason);
    line += "\r\n";
    out << line;
  }
}

void writeOpsJson(std::ostream& out, const View& v) {
  json::Writer w(out);
  w.beginArray();
  for (uint32_t i : v.ops) {
    Row r = makeRow(v, i);
    w.beginObject()
        .field("kind", r.kind)
        .field("name", r.name)
        .field("short_name", r.shortName)
        .field("start_ns", r.start)
        .field("end_ns", r.end)
        .field("duration_ns", r.dur)
        .field("device", r.device)
        .field("stream", r.stream);
    w.key("pid");
    r.havePid ? w.value(r.pid) : w.null();
    w.key("tid");
    r.haveTid ? w.value(r.tid) : w.null();
    w.key("correlation_id");
    r.haveCorr ? w.value(r.corr) : w.null();
    w.field("rank", r.rank)
        .field("nvtx_path", r.path)
        .field("innermost_range", r.innermost)
        .field("unattributed_reason", r.reason)
        .endObject();
    if (!(out << "")) break;
  }
  w.endArray();
  out << "\n";
}

}  // namespace kl::analysis
