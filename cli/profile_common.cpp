#include "cli/profile_common.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "core/analysis/export_table.h"
#include "core/profile/reader.h"
#include "core/runner/profile_inputs.h"
#include "core/support/escape.h"
#include "core/support/format.h"
#include "core/support/text_table.h"

namespace kl::cli {

std::vector<OptionSpec> profileOptions(std::vector<OptionSpec> extra) {
  std::vector<OptionSpec> o = {{"--format"}, {"--gpu"}, {"--trim", true, false, 2}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

std::string commonOptionsHelp(bool csv) {
  return std::string("  --format text|json") + (csv ? "|csv" : "") +
         "  output format (default text)\n"
         "  --gpu N              only GPU ops on device N (on every rank)\n"
         "  --trim START END     only rows that start in [START, END); times are relative to the\n"
         "                       first event of the profile, in ns or with a unit (150us, 2.5ms,\n"
         "                       1s); also written START:END\n"
         "FILE... is one profile (nsys .sqlite[.gz] export, nsys .nsys-rep/.qdrep report, or Kineto\n"
         ".json[.gz]), or several files or a directory holding the ranks of one run. A report is\n"
         "exported once with the installed nsys into .kernlens/nsys-export/ next to it (or the\n"
         "user cache) and the export is reused while the report is unchanged; KERNLENS_NSYS\n"
         "names the nsys to use.\n"
         "Exit status: 0 success, 1 bad input (one-line reason on stderr), 2 bad usage.\n";
}

int64_t parseDurationNs(const std::string& s, const std::string& what) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || (i == 0 && s[i] == '-')))
    ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  double v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || ec != std::errc() || p != num.data() + num.size())
    throw UsageError(what + " needs a time (ns, or with a unit ns/us/ms/s), got '" + s + "'");
  double mul = 1;
  if (unit.empty() || unit == "ns")
    mul = 1;
  else if (unit == "us" || unit == "\xC2\xB5s")
    mul = 1e3;
  else if (unit == "ms")
    mul = 1e6;
  else if (unit == "s")
    mul = 1e9;
  else
    throw UsageError(what + ": unknown time unit '" + unit + "' (ns, us, ms, s)");
  double ns = v * mul;
  if (!std::isfinite(ns) || std::fabs(ns) > 9.0e18) throw UsageError(what + " is out of range: '" + s + "'");
  return static_cast<int64_t>(std::llround(ns));
}

CommonArgs parseCommon(const Args& args, const std::vector<Format>& formats) {
  CommonArgs c;
  c.format = args.format(formats);
  if (auto g = args.getInt("--gpu")) {
    if (*g < 0 || *g > INT32_MAX) throw UsageError("option '--gpu' needs a device number >= 0");
    c.scope.device = static_cast<int32_t>(*g);
  }
  c.files = args.positional();
  if (args.has("--trim")) {
    // `--trim START END`, or `--trim=START:END` (one value).
    auto t = args.values("--trim");
    std::string start = t[0], end;
    if (t.size() == 2) {
      end = t[1];
    } else if (auto sep = start.find_first_of(":,"); sep != std::string::npos) {
      end = start.substr(sep + 1);
      start.resize(sep);
    } else {
      throw UsageError("option '--trim' needs START and END");
    }
    int64_t s = parseDurationNs(start, "--trim START");
    int64_t e = parseDurationNs(end, "--trim END");
    if (s < 0 || e <= s) throw UsageError("option '--trim' needs 0 <= START < END");
    c.scope.trimStart = s;
    c.scope.trimEnd = e;
  }
  return c;
}

namespace {

/// The core loader's options for this process: the environment (KERNLENS_NSYS, the shared export
/// cache), relative paths against the working directory, each export said on `err`.
runner::ProfileInputOptions inputOptions(std::ostream& err) {
  auto o = runner::ProfileInputOptions::fromEnvironment([](const char* name) { return std::getenv(name); });
  std::error_code ec;
  o.base = std::filesystem::current_path(ec);
  o.onExport = [&err](const runner::ExportedReport& e) {
    if (e.exported.reused)
      err << "kernlens: " << e.report.string() << ": using its cached SQLite export " << e.exported.sqlite.string()
          << "\n";
    else
      err << "kernlens: " << e.report.string() << ": exported to " << e.exported.sqlite.string() << " with nsys "
          << e.exported.nsysVersion << " (reused while the report is unchanged)\n";
  };
  return o;
}

}  // namespace

profile::ProfileModel readModel(const std::vector<std::string>& files, std::ostream& err,
                                const profile::ReadOptions& ro) {
  auto in =
      runner::resolveProfileInputs(std::vector<std::filesystem::path>(files.begin(), files.end()), inputOptions(err));
  if (!in) throw InputError(in.error().message);
  return orFail(runner::readProfileInputs(*in, ro));
}

std::unique_ptr<LoadedProfile> loadProfile(const std::vector<std::string>& given, std::ostream& err, LoadNeeds needs) {
  if (given.empty()) throw UsageError("missing profile file");
  auto lp = std::make_unique<LoadedProfile>();
  profile::ReadOptions ro;
  ro.kernelDetails = needs.kernelDetails;
  ro.placement = needs.placement;
  lp->model = readModel(given, err, ro);
  // Reader findings are said once, on stderr, by every command (never silently dropped).
  const auto& warns = lp->model.meta.warnings;
  for (size_t i = 0; i < warns.size() && i < 5; ++i) err << "kernlens: warning: " << warns[i] << "\n";
  if (warns.size() > 5)
    err << "kernlens: warning: ... and " << warns.size() - 5 << " more (kernlens info lists them)\n";
  if (auto w = lp->model.meta.skippedRows.warning(); !w.empty())
    err << "kernlens: warning: " << terminalSafe(w) << "\n";
  attribution::Options ao;
  ao.rangeStats = needs.rangeStats;
  lp->attr = orFail(attribution::attribute(lp->model, ao));
  for (const auto& f : given) {
    if (!lp->label.empty()) lp->label += ", ";
    lp->label += std::filesystem::path(f).filename().string();
  }
  return lp;
}

void printTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right, size_t maxWidth) {
  out << renderPlainTable(header, rows, right, maxWidth);
}

void printCsv(std::ostream& out, const std::vector<std::string>& header,
              const std::vector<std::vector<std::string>>& rows) {
  std::string line;
  auto emit = [&](const std::vector<std::string>& r) {
    line.clear();
    for (size_t i = 0; i < r.size(); ++i) {
      if (i) line.push_back(',');
      analysis::appendCsvField(line, r[i]);
    }
    line += "\r\n";
    out << line;
  };
  emit(header);
  for (const auto& r : rows) emit(r);
}

void noteEmulated(std::ostream& out, const profile::ProfileModel& m) {
  if (m.meta.emulated)
    out << "note: EMULATED profile (kernlens emulate backend): kernels and times are modelled, not measured\n";
}

OutputTarget::OutputTarget(const std::optional<std::string>& path, std::ostream& fallback) : os_(&fallback) {
  if (path && *path != "-") {
    path_ = *path;
    auto f = std::make_unique<std::ofstream>(*path, std::ios::binary | std::ios::trunc);
    if (!*f) throw InputError("cannot write '" + *path + "'");
    os_ = f.get();
    file_ = std::move(f);
  }
}

void OutputTarget::finish() {
  os_->flush();
  if (!*os_) throw InputError(path_.empty() ? "write to standard output failed" : "write to '" + path_ + "' failed");
}

std::string durationCell(int64_t ns, bool csv) {
  return csv ? std::to_string(ns) : formatDuration(static_cast<double>(ns));
}

}  // namespace kl::cli
