#include "core/ncu/drill.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

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
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shellQuote(a);
  return s;
}

int exitStatus(int raw) {
  if (raw == -1) return -1;
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  return 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
}

}  // namespace

const std::vector<std::string>& drillSections() {
  static const std::vector<std::string> s = {"SpeedOfLight",      "MemoryWorkloadAnalysis",
                                             "ComputeWorkloadAnalysis", "Occupancy",
                                             "LaunchStats",       "SpeedOfLight_RooflineChart"};
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
  return {r.ncu, "--import", r.reportBase + ".ncu-rep", "--csv", "--page", "details",
          "--print-units", "base"};
}

std::string shellQuote(const std::string& w) {
  if (w.empty()) return "''";
  bool plain = true;
  for (char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./:=,+%@").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return w;
  std::string out = "'";
  for (char c : w) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  return out + "'";
}

std::string drillProfileCommand(const DrillRequest& r) {
  return joinQuoted(drillProfileArgs(r)) + " " + r.entry;
}

std::string drillExportCommand(const DrillRequest& r) { return joinQuoted(drillExportArgs(r)); }

std::optional<std::filesystem::path> findOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string p(path);
  size_t start = 0;
  while (start <= p.size()) {
    size_t colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    std::filesystem::path cand = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(cand, ec) && ::access(cand.c_str(), X_OK) == 0) return cand;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

Result<DrillOutcome> runDrill(const DrillRequest& r, const std::filesystem::path& workdir,
                              Catalog& catalog, const ImportOptions& opt) {
  if (r.entry.empty()) return Error::invalid("drill: no entry command");
  if (r.range.empty()) return Error::invalid("drill: no NVTX range");
  DrillOutcome out;
  out.profileCommand = drillProfileCommand(r);
  out.exportCommand = drillExportCommand(r);
  if (!findOnPath(r.ncu))
    return Error::notFound(r.ncu + " not found on PATH; run the printed command on a machine with "
                           "Nsight Compute, then `kernlens ncu import` its CSV");
  std::filesystem::path base = workdir / r.reportBase;
  std::error_code ec;
  std::filesystem::create_directories(base.parent_path(), ec);
  const std::string cd = "cd " + shellQuote(workdir.string()) + " && ";
  int st = exitStatus(std::system((cd + out.profileCommand).c_str()));
  if (st != 0) return Error::io("ncu profiling run failed (exit status " + std::to_string(st) + ")");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen((cd + out.exportCommand).c_str(), "r"), ::pclose);
  if (!pipe) return Error::io("cannot run: " + out.exportCommand);
  std::string csv;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0) csv.append(buf, n);
  int est = exitStatus(::pclose(pipe.release()));
  if (est != 0) return Error::io("ncu export failed (exit status " + std::to_string(est) + ")");
  out.csvPath = base.string() + ".details.csv";
  std::ofstream f(out.csvPath, std::ios::binary);
  f << csv;
  if (!f) return Error::io(out.csvPath.string() + ": cannot write");
  auto imp = catalog.importText(csv, out.csvPath.string(), opt);
  if (!imp) return imp.error();
  out.imported = std::move(*imp);
  return out;
}

}  // namespace kl::ncu
