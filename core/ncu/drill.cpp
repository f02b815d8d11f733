#include "core/ncu/drill.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include "core/runner/command.h"
#include "core/runner/process.h"

namespace kl::ncu {
namespace {

std::string escapeNvtx(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '@' || c == '/' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string joinQuoted(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + runner::shellQuote(a);
  return s;
}

}  // namespace

const std::vector<std::string>& drillSections() {
  static const std::vector<std::string> s = {
      "SpeedOfLight", "MemoryWorkloadAnalysis",    "ComputeWorkloadAnalysis", "Occupancy",
      "LaunchStats",  "SpeedOfLight_RooflineChart"};
  return s;
}

std::string nvtxIncludeExpression(const std::string& range, const std::string& domain) {
  std::string e;
  if (!domain.empty()) e = escapeNvtx(domain) + "@";
  return e + escapeNvtx(range) + "/";
}

std::vector<std::string> drillProfileArgs(const DrillRequest& r) {
  std::vector<std::string> a = {r.ncu, "--nvtx", "--nvtx-include", nvtxIncludeExpression(r.range, r.domain)};
  if (r.useLaunchCount) {
    a.push_back("-c");
    a.push_back(std::to_string(r.launchCount));
  } else {
    a.push_back("--kernel-id");
    a.push_back(":::1");
  }
  for (const auto& s : drillSections()) {
    a.push_back("--section");
    a.push_back(s);
  }
  a.push_back("--force-overwrite");
  a.push_back("-o");
  a.push_back(r.reportBase);
  return a;
}

std::vector<std::string> drillExportArgs(const DrillRequest& r) {
  return {r.ncu, "--import", r.reportBase + ".ncu-rep", "--csv", "--page", "details", "--print-units", "base"};
}

std::string drillProfileCommand(const DrillRequest& r) { return joinQuoted(drillProfileArgs(r)) + " " + r.entry; }

std::string drillExportCommand(const DrillRequest& r) { return joinQuoted(drillExportArgs(r)); }

Result<DrillOutcome> runDrill(const DrillRequest& r, const std::filesystem::path& workdir, Catalog& catalog,
                              const ImportOptions& opt, const CancellationToken& cancel) {
  if (r.entry.empty()) return Error::invalid("drill: no entry command");
  if (r.range.empty()) return Error::invalid("drill: no NVTX range");
  DrillOutcome out;
  out.profileCommand = drillProfileCommand(r);
  out.exportCommand = drillExportCommand(r);
  if (!runner::findExecutable(r.ncu))
    return Error::notFound(r.ncu +
                           " not found on PATH; run the printed command on a machine with "
                           "Nsight Compute, then `kernlens ncu import` its CSV");
  std::filesystem::path base = workdir / r.reportBase;
  std::error_code ec;
  std::filesystem::create_directories(base.parent_path(), ec);
  out.csvPath = base.string() + ".details.csv";
  // Both commands run through the process runner: own process group, timeout, cancellation.
  auto shell = [&](const std::string& command, const std::filesystem::path& stdoutPath,
                   const char* what) -> Result<void> {
    runner::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.cwd = workdir;
    spec.stdoutPath = stdoutPath;
    spec.stderrPath = base.string() + ".log";
    spec.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(r.timeout);
    auto pr = runner::runProcess(spec, cancel);
    if (!pr) return pr.error();
    if (pr->cancelled) return Error::cancelled();
    if (!pr->ok())
      return Error::io(std::string(what) + " " + runner::describe(*pr) + " (log: " + spec.stderrPath.string() + ")");
    return {};
  };
  std::filesystem::remove(out.csvPath, ec);
  if (auto p = shell(out.profileCommand, base.string() + ".log", "ncu profiling run"); !p) return p.error();
  if (auto e = shell(out.exportCommand, out.csvPath, "ncu export"); !e) return e.error();
  std::ifstream in(out.csvPath, std::ios::binary);
  std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) return Error::io(out.csvPath.string() + ": cannot read");
  auto imp = catalog.importText(csv, out.csvPath.string(), opt);
  if (!imp) return imp.error();
  out.imported = std::move(*imp);
  return out;
}

}  // namespace kl::ncu
