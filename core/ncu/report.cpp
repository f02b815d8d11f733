#include "core/ncu/report.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/ncu/csv.h"
#include "core/ncu/units.h"

namespace kl::ncu {
namespace {

std::string_view lineAt(std::string_view text, size_t pos) {
  size_t end = text.find('\n', pos);
  std::string_view l = text.substr(pos, end == std::string_view::npos ? text.size() - pos : end - pos);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

bool blank(std::string_view l) {
  return std::all_of(l.begin(), l.end(), [](char c) { return c == ' ' || c == '\t'; });
}

/// Column index by header name.
struct Header {
  std::vector<std::string> names;
  int col(std::string_view n) const {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) return static_cast<int>(i);
    return -1;
  }
  bool has(std::string_view n) const { return col(n) >= 0; }
};

std::string field(const CsvRecord& r, int col) {
  if (col < 0 || static_cast<size_t>(col) >= r.fields.size()) return {};
  return r.fields[static_cast<size_t>(col)];
}

std::optional<NcuFormat> detect(const Header& h) {
  if ((h.has("Time (%)") || h.has("Time(%)")) && h.has("Instances") && h.has("Name")) return NcuFormat::NsysKernSum;
  if (h.has("Invocations") && h.has("Metric Name") && h.has("Average") && h.has("Kernel Name"))
    return NcuFormat::Summary;
  if (h.has("ID") && h.has("Kernel Name")) {
    if (h.has("Metric Name") && h.has("Metric Value"))
      return h.has("Kernel Time") ? NcuFormat::LegacyDetails : NcuFormat::Details;
    if (!h.has("Metric Name")) return NcuFormat::Raw;
  }
  return std::nullopt;
}

int64_t toInt(const std::string& s, int64_t fallback = 0) {
  auto v = parseNumber(s);
  return v ? static_cast<int64_t>(*v) : fallback;
}

Metric makeMetric(std::string section, std::string body, std::string name, const std::string& unit,
                  const std::string& text) {
  Metric m;
  m.section = std::move(section);
  m.bodyLabel = std::move(body);
  m.name = std::move(name);
  m.rawUnit = unit;
  m.text = text;
  UnitScale s = normaliseUnit(unit);
  m.unit = s.base;
  if (auto v = parseNumber(text)) m.value = *v * s.factor;
  return m;
}

void fillIdentity(NcuLaunch& l, const Header& h, const CsvRecord& r) {
  l.id = h.has("ID") ? toInt(field(r, h.col("ID")), -1) : -1;
  l.kernelName = field(r, h.col("Kernel Name"));
  l.processId = toInt(field(r, h.col("Process ID")));
  l.processName = field(r, h.col("Process Name"));
  l.device = field(r, h.col("Device"));
  l.cc = field(r, h.col("CC"));
  l.context = field(r, h.col("Context"));
  l.stream = field(r, h.col("Stream"));
  l.kernelTime = field(r, h.col("Kernel Time"));
  if (h.has("Grid Size")) l.grid = parseDim3(field(r, h.col("Grid Size")));
  if (h.has("Block Size")) l.block = parseDim3(field(r, h.col("Block Size")));
}

// Legacy layouts carry grid/block only as Launch Statistics metrics.
void gridFromMetrics(NcuLaunch& l) {
  auto dim = [&](const char* label, const char* name) -> std::optional<Dim3> {
    const Metric* m = l.find(label, "Launch Statistics");
    if (!m) m = l.find(name);
    if (m && m->value) return Dim3{static_cast<int64_t>(*m->value), 1, 1};
    return std::nullopt;
  };
  if (!l.grid) l.grid = dim("Grid Size", "launch__grid_size");
  if (!l.block) l.block = dim("Block Size", "launch__block_size");
}

const std::vector<std::string> kIdColumns = {"ID",          "Process ID",  "Process Name", "Host Name",
                                             "Kernel Name", "Kernel Time", "Context",      "Stream",
                                             "Block Size",  "Grid Size",   "Device",       "CC"};

}  // namespace

std::string_view formatName(NcuFormat f) {
  switch (f) {
    case NcuFormat::Details: return "details";
    case NcuFormat::Raw: return "raw";
    case NcuFormat::Summary: return "summary";
    case NcuFormat::LegacyDetails: return "legacy-details";
    case NcuFormat::NsysKernSum: return "nsys-kern-sum";
  }
  return "?";
}

const Metric* NcuLaunch::find(std::string_view name, std::string_view sectionPrefix) const {
  for (const Metric& m : metrics)
    if (m.name == name && m.section.compare(0, sectionPrefix.size(), sectionPrefix) == 0) return &m;
  return nullptr;
}

std::optional<Dim3> parseDim3(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != '(' && c != ')' && c != ' ') s.push_back(c);
  if (s.empty()) return std::nullopt;
  Dim3 d{1, 1, 1};
  size_t i = 0, start = 0;
  while (start <= s.size() && i < 3) {
    size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto v = parseNumber(part);
    if (!v || *v < 0) return std::nullopt;
    d[i++] = static_cast<int64_t>(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return d;
}

std::string formatDim3(const Dim3& d) {
  return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

namespace {

/// Where parseNcuCsv() is in the text, and the tool messages it has met: "==ERROR==" lines in
/// `errors`, other tool messages in the report's diagnostics.
struct CsvCursor {
  std::string_view text;
  size_t pos = 0, line = 0;
  std::vector<std::string> errors;

  /// Files a tool message line; false for any other line.
  bool toolMessage(std::string_view l, NcuReport& rep) {
    if (!isToolMessageLine(l)) return false;
    (l.rfind("==ERROR==", 0) == 0 ? errors : rep.diagnostics).emplace_back(l);
    return true;
  }
  void skipLine() {
    size_t nl = text.find('\n', pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line;
  }
};

/// Step 1: the header; everything before it is program output or tool messages. Leaves the cursor
/// after it; nullopt when no line is the header of a table parseNcuCsv knows.
std::optional<NcuFormat> findHeader(CsvCursor& cur, NcuReport& rep, Header& header) {
  while (cur.pos < cur.text.size()) {
    std::string_view l = lineAt(cur.text, cur.pos);
    const bool tool = cur.toolMessage(l, rep);
    if (!blank(l) && !tool && l.find(',') != std::string_view::npos) {
      size_t p = cur.pos, ln = cur.line;
      CsvRecord r = parseCsvRecord(cur.text, p, ln);
      Header h{r.fields};
      if (auto f = detect(h)) {
        header = std::move(h);
        cur.pos = p;
        cur.line = ln;
        return f;
      }
    }
    cur.skipLine();
  }
  return std::nullopt;
}

/// Step 2: the records after the header, each padded to the header's width; blank lines and tool
/// messages skipped, lines of fewer than two fields (program output after the table) counted in a
/// diagnostic after the tool messages.
std::vector<CsvRecord> readRecords(CsvCursor& cur, NcuReport& rep, const Header& header) {
  std::vector<CsvRecord> rows;
  size_t skipped = 0;
  while (cur.pos < cur.text.size()) {
    std::string_view l = lineAt(cur.text, cur.pos);
    if (blank(l) || isToolMessageLine(l)) {
      cur.toolMessage(l, rep);
      cur.skipLine();
      continue;
    }
    CsvRecord r = parseCsvRecord(cur.text, cur.pos, cur.line);
    if (r.fields.size() < 2) {  // program output after the table
      ++skipped;
      continue;
    }
    if (r.fields.size() < header.names.size()) r.fields.resize(header.names.size());
    rows.push_back(std::move(r));
  }
  for (auto& e : cur.errors) rep.diagnostics.push_back(e);
  if (skipped) rep.diagnostics.push_back(std::to_string(skipped) + " non-CSV line(s) skipped");
  return rows;
}

/// A details page (ncu --page details, or the legacy one): one launch per (ID, process, kernel),
/// its metrics and rule results, its grid from its metrics.
void readDetails(const Header& h, const std::vector<CsvRecord>& rows, NcuReport& rep) {
  std::map<std::string, size_t> byKey;
  int cSec = h.col("Section Name"), cBody = h.col("Body Item Label"), cName = h.col("Metric Name"),
      cUnit = h.col("Metric Unit"), cVal = h.col("Metric Value"), cRule = h.col("Rule Name");
  for (const CsvRecord& r : rows) {
    std::string key =
        field(r, h.col("ID")) + '\x1f' + field(r, h.col("Process ID")) + '\x1f' + field(r, h.col("Kernel Name"));
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      NcuLaunch l;
      fillIdentity(l, h, r);
      it = byKey.emplace(key, rep.launches.size()).first;
      rep.launches.push_back(std::move(l));
    }
    NcuLaunch& l = rep.launches[it->second];
    std::string rule = field(r, cRule);
    if (!rule.empty()) {
      RuleResult rr;
      rr.section = field(r, cSec);
      rr.name = rule;
      rr.type = field(r, h.col("Rule Type"));
      rr.description = field(r, h.col("Rule Description"));
      rr.speedupType = field(r, h.col("Estimated Speedup Type"));
      rr.speedup = parseNumber(field(r, h.col("Estimated Speedup")));
      l.rules.push_back(std::move(rr));
      continue;
    }
    std::string name = field(r, cName);
    if (name.empty()) continue;
    l.metrics.push_back(makeMetric(field(r, cSec), field(r, cBody), std::move(name), field(r, cUnit), field(r, cVal)));
  }
  for (auto& l : rep.launches) gridFromMetrics(l);
}

/// A raw page: one launch per row, every non-identity column a metric (units from the first row
/// when its ID is empty).
void readRaw(const Header& h, const std::vector<CsvRecord>& rows, NcuReport& rep) {
  size_t first = 0;
  std::vector<std::string> units(h.names.size());
  // Row 1 holds units when its ID column is empty.
  if (!rows.empty() && field(rows[0], h.col("ID")).empty()) {
    units = rows[0].fields;
    first = 1;
  }
  for (size_t i = first; i < rows.size(); ++i) {
    NcuLaunch l;
    fillIdentity(l, h, rows[i]);
    for (size_t c = 0; c < h.names.size(); ++c) {
      if (std::find(kIdColumns.begin(), kIdColumns.end(), h.names[c]) != kIdColumns.end()) continue;
      l.metrics.push_back(
          makeMetric("", "", h.names[c], c < units.size() ? units[c] : "", field(rows[i], static_cast<int>(c))));
    }
    gridFromMetrics(l);
    rep.launches.push_back(std::move(l));
  }
}

/// A summary (--print-summary per-kernel): one launch per (process, kernel, block, grid, device)
/// with its invocations; each metric its average, minimum and maximum.
void readSummary(const Header& h, const std::vector<CsvRecord>& rows, NcuReport& rep) {
  std::map<std::string, size_t> byKey;
  int cSec = h.col("Section Name"), cName = h.col("Metric Name"), cUnit = h.col("Metric Unit");
  for (const CsvRecord& r : rows) {
    std::string key = field(r, h.col("Process ID")) + '\x1f' + field(r, h.col("Kernel Name")) + '\x1f' +
                      field(r, h.col("Block Size")) + '\x1f' + field(r, h.col("Grid Size")) + '\x1f' +
                      field(r, h.col("Device"));
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      NcuLaunch l;
      fillIdentity(l, h, r);
      l.invocations = toInt(field(r, h.col("Invocations")), 1);
      it = byKey.emplace(key, rep.launches.size()).first;
      rep.launches.push_back(std::move(l));
    }
    NcuLaunch& l = rep.launches[it->second];
    std::string name = field(r, cName);
    if (name.empty()) continue;
    std::string unit = field(r, cUnit);
    Metric m = makeMetric(field(r, cSec), "", std::move(name), unit, field(r, h.col("Average")));
    UnitScale s = normaliseUnit(unit);
    if (auto v = parseNumber(field(r, h.col("Minimum")))) m.minimum = *v * s.factor;
    if (auto v = parseNumber(field(r, h.col("Maximum")))) m.maximum = *v * s.factor;
    l.metrics.push_back(std::move(m));
  }
}

/// An nsys cuda_gpu_kern_sum table: one launch per named kernel with its instances and its
/// duration (average, minimum, maximum), total time and share of the time.
void readNsysKernSum(const Header& h, const std::vector<CsvRecord>& rows, NcuReport& rep) {
  auto col = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (int c = h.col(n); c >= 0) return c;
    return -1;
  };
  int cPct = col({"Time (%)", "Time(%)"}), cTotal = col({"Total Time (ns)", "Total Time"}), cInst = col({"Instances"}),
      cAvg = col({"Avg (ns)", "Average (ns)", "Average"}), cMin = col({"Min (ns)", "Minimum (ns)", "Minimum"}),
      cMax = col({"Max (ns)", "Maximum (ns)", "Maximum"}), cName = col({"Name"});
  for (const CsvRecord& r : rows) {
    NcuLaunch l;
    l.kernelName = field(r, cName);
    if (l.kernelName.empty()) continue;
    l.invocations = toInt(field(r, cInst), 1);
    Metric d = makeMetric("nsys", "", "Duration", "ns", field(r, cAvg));
    if (auto v = parseNumber(field(r, cMin))) d.minimum = *v;
    if (auto v = parseNumber(field(r, cMax))) d.maximum = *v;
    l.metrics.push_back(std::move(d));
    l.metrics.push_back(makeMetric("nsys", "", "Total Time", "ns", field(r, cTotal)));
    l.metrics.push_back(makeMetric("nsys", "", "Time (%)", "%", field(r, cPct)));
    rep.launches.push_back(std::move(l));
  }
}

}  // namespace

Result<NcuReport> parseNcuCsv(std::string_view text, std::string_view sourceName) {
  const std::string src = sourceName.empty() ? std::string("input") : std::string(sourceName);
  NcuReport rep;
  CsvCursor cur{text};
  Header header;
  // 1. Find the header; everything before it is program output or tool messages.
  const std::optional<NcuFormat> fmt = findHeader(cur, rep, header);
  if (!fmt) {
    if (!cur.errors.empty()) return Error::invalid(src + ": no ncu data, ncu reported an error: " + cur.errors.front());
    return Error::invalid(src + ": no Nsight Compute or nsys CSV table found");
  }
  rep.format = *fmt;
  // 2. Records.
  const std::vector<CsvRecord> rows = readRecords(cur, rep, header);
  // 3. Launches, by the table's format.
  switch (*fmt) {
    case NcuFormat::Details:
    case NcuFormat::LegacyDetails: readDetails(header, rows, rep); break;
    case NcuFormat::Raw: readRaw(header, rows, rep); break;
    case NcuFormat::Summary: readSummary(header, rows, rep); break;
    case NcuFormat::NsysKernSum: readNsysKernSum(header, rows, rep); break;
  }
  if (rep.launches.empty()) {
    if (!cur.errors.empty()) return Error::invalid(src + ": no ncu data, ncu reported an error: " + cur.errors.front());
    return Error::invalid(src + ": the " + std::string(formatName(*fmt)) + " table has a header but no kernel rows");
  }
  return rep;
}

Result<NcuReport> readNcuFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::io(path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error::io(path.string() + ": read error");
  return parseNcuCsv(ss.str(), path.string());
}

}  // namespace kl::ncu
