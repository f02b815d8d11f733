#include "core/runner/profile_inputs.h"

#include <algorithm>
#include <cstring>

namespace kl::runner {

namespace fs = std::filesystem;

namespace {

fs::path against(const fs::path& base, const fs::path& p) { return base.empty() || p.is_absolute() ? p : base / p; }

bool isReportName(const fs::path& p) {
  auto ext = p.extension().string();
  return ext == ".nsys-rep" || ext == ".qdrep";
}

Result<fs::path> exportOne(const fs::path& report, const ProfileInputOptions& o, ProfileInputs& out) {
  ReportExportOptions ro;
  ro.nsys = o.nsys;
  ro.cancel = o.cancel;
  ro.cacheDirs = {defaultReportCacheDir(report)};
  ro.cacheDirs.insert(ro.cacheDirs.end(), o.sharedCacheDirs.begin(), o.sharedCacheDirs.end());
  auto r = exportNsysReport(report, ro);
  if (!r) return r.error();
  out.exports.push_back({report, *r});
  if (o.onExport) o.onExport(out.exports.back());
  return r->sqlite;
}

/// A folder holding reports: its own profiles, then the exports of its reports (those without a
/// same-stem .sqlite beside them). False when it holds no such report (it passes through).
Result<bool> resolveFolder(const fs::path& given, const ProfileInputOptions& o, ProfileInputs& out) {
  std::error_code ec;
  fs::path dir = against(o.base, given);
  std::vector<fs::path> reps;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto& p = e.path();
    if (!e.is_regular_file() || !isReportName(p)) continue;
    auto sib = p;
    sib.replace_extension(".sqlite");
    if (fs::exists(sib, ec)) continue;  // its export is read from the folder
    reps.push_back(p);
  }
  std::sort(reps.begin(), reps.end());
  if (reps.empty()) return false;
  std::vector<fs::path> own;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto n = e.path().filename().string();
    for (const char* x : {".sqlite", ".sqlite.gz", ".json", ".json.gz"})
      if (e.is_regular_file() && n.size() > std::strlen(x) && n.ends_with(x)) own.push_back(given / n);
  }
  std::sort(own.begin(), own.end());
  out.files.insert(out.files.end(), own.begin(), own.end());
  for (const auto& p : reps) {
    auto sqlite = exportOne(p, o, out);
    if (!sqlite) return sqlite.error();
    out.files.push_back(*sqlite);
  }
  return true;
}

}  // namespace

ProfileInputOptions ProfileInputOptions::fromEnvironment(const std::function<const char*(const char*)>& env) {
  ProfileInputOptions o;
  if (const char* n = env("KERNLENS_NSYS"); n && *n) o.nsys = n;
  if (const char* x = env("XDG_CACHE_HOME"); x && *x)
    o.sharedCacheDirs.push_back(fs::path(x) / "kernlens" / "nsys-export");
  else if (const char* h = env("HOME"); h && *h)
    o.sharedCacheDirs.push_back(fs::path(h) / ".cache" / "kernlens" / "nsys-export");
  return o;
}

Result<ProfileInputs> resolveProfileInputs(const std::vector<fs::path>& given, const ProfileInputOptions& o) {
  ProfileInputs out;
  for (const auto& f : given) {
    if (o.cancel.isCancelled()) return Error::cancelled();
    std::error_code ec;
    fs::path at = against(o.base, f);
    if (fs::is_directory(at, ec)) {
      auto folder = resolveFolder(f, o, out);
      if (!folder) return folder.error();
      if (!*folder) out.files.push_back(f);
    } else if (isNsysReport(at)) {
      auto sqlite = exportOne(at, o, out);
      if (!sqlite) return sqlite.error();
      out.files.push_back(*sqlite);
    } else {
      out.files.push_back(f);
    }
  }
  return out;
}

Result<profile::ProfileModel> readProfileInputs(const ProfileInputs& in, const profile::ReadOptions& ro) {
  if (in.files.empty()) return Error::invalid("no profile file");
  std::error_code ec;
  if (in.files.size() == 1 && !fs::is_directory(in.files[0], ec)) return profile::readProfile(in.files[0], ro);
  return profile::readProfiles(in.files, ro);
}

Result<profile::ProfileModel> loadProfileModel(const std::vector<fs::path>& given, const ProfileInputOptions& opts,
                                               profile::ReadOptions ro) {
  auto in = resolveProfileInputs(given, opts);
  if (!in) return in.error();
  ro.cancel = opts.cancel;
  return readProfileInputs(*in, ro);
}

}  // namespace kl::runner
