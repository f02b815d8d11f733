#include "core/runner/nsys_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/runner/nsys.h"
#include "core/runner/process.h"
#include "core/support/safe_file.h"

namespace kl::runner {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kReportMagic = "NVIDIA Tegra Profiler Report";

bool hasReportExtension(const fs::path& p) {
  auto ext = p.extension().string();
  return ext == ".nsys-rep" || ext == ".qdrep";
}

struct Stamp {
  uint64_t size = 0;
  int64_t mtimeNs = 0;
  std::string text() const { return "size=" + std::to_string(size) + " mtime_ns=" + std::to_string(mtimeNs) + "\n"; }
};

Result<Stamp> stampOf(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return Error::notFound(p.string() + ": cannot read the report");
  if (!S_ISREG(st.st_mode)) return Error::invalid(p.string() + ": not a regular file");
  Stamp s;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return s;
}

std::string readSmall(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

/// 64-bit FNV-1a as 16 hex digits (cache keys only; not security relevant).
std::string hashHex(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// Creates `dir` and checks that a file can be created in it.
bool usableDir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) return false;
  return ::access(dir.c_str(), W_OK | X_OK) == 0;
}

std::string lastErrorLine(const std::string& text) {
  // nsys draws progress bars with '\r'; take the last non-empty line of either kind.
  std::string best;
  std::string cur;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (cur.find_first_not_of(" \t") != std::string::npos) best = cur;
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (cur.find_first_not_of(" \t") != std::string::npos) best = cur;
  if (best.size() > 300) best = best.substr(0, 300) + "...";
  return best;
}

}  // namespace

bool isNsysReport(const fs::path& path) {
  // Only a regular file is opened: a FIFO or device would block here.
  auto fd = openRegularFile(path);
  if (!fd) return false;
  std::string head(kReportMagic.size(), '\0');
  ssize_t got = ::read(*fd, head.data(), head.size());
  ::close(*fd);
  if (got == static_cast<ssize_t>(head.size())) return head == kReportMagic;
  return hasReportExtension(path);
}

fs::path defaultReportCacheDir(const fs::path& report) {
  return report.lexically_normal().parent_path() / ".kernlens" / "nsys-export";
}

Result<ReportExport> exportNsysReport(const fs::path& report, const ReportExportOptions& opts) {
  auto stamp = stampOf(report);
  if (!stamp) return stamp.error();
  std::error_code ec;
  const fs::path abs = report.lexically_normal();  // the front end passes it absolute
  const fs::path ownDir = defaultReportCacheDir(report);
  std::vector<fs::path> dirs = opts.cacheDirs;
  if (dirs.empty()) dirs.push_back(ownDir);
  auto keyFor = [&](const fs::path& dir) {
    std::string name = abs.filename().string();
    return dir == ownDir ? name : hashHex(abs.string()) + "-" + name;
  };

  // A cached export with a matching stamp, in any candidate directory.
  for (const auto& dir : dirs) {
    fs::path sqlite = dir / (keyFor(dir) + ".sqlite");
    fs::path stampFile = dir / (keyFor(dir) + ".sqlite.stamp");
    if (fs::is_regular_file(sqlite, ec) && fs::is_regular_file(stampFile, ec) && readSmall(stampFile) == stamp->text())
      return ReportExport{sqlite, true, {}};
  }

  fs::path dir;
  for (const auto& d : dirs)
    if (usableDir(d)) {
      dir = d;
      break;
    }
  if (dir.empty())
    return Error::io(report.string() + ": no writable directory for its SQLite export (tried " + dirs.front().string() +
                     (dirs.size() > 1 ? " and others" : "") + ")");

  auto exe = findNsys(opts.nsys);
  if (!exe)
    return Error::notFound(report.string() +
                           ": reading a .nsys-rep needs Nsight Systems' `nsys` (not found on PATH); install "
                           "it (Debian: scripts/install-deps.sh nsys) or pass an export made with "
                           "`nsys export --type sqlite`");
  NsysCaps caps;
  caps.exe = *exe;
  // The version is for messages only: any nsys that can read the report exports it.
  {
    fs::path vlog = dir / (".version." + std::to_string(::getpid()) + ".log");
    ProcessSpec vs;
    vs.argv = {exe->string(), "--version"};
    vs.stdoutPath = vs.stderrPath = vlog;
    vs.timeout = std::chrono::seconds(20);
    if (auto r = runProcess(vs, opts.cancel); r && r->ok())
      if (auto v = parseNsysVersion(readSmall(vlog))) caps.version = *v;
    fs::remove(vlog, ec);
  }
  const std::string who = "nsys" + (caps.version.text.empty() ? std::string() : " " + caps.version.text);

  const std::string key = keyFor(dir);
  fs::path target = dir / (key + ".sqlite");
  fs::path stampFile = dir / (key + ".sqlite.stamp");
  const std::string tag = ".tmp" + std::to_string(::getpid());
  fs::path tmp = dir / (key + tag + ".sqlite");
  fs::path log = dir / (key + tag + ".log");
  fs::remove(tmp, ec);
  ProcessSpec spec;
  spec.argv = nsysExportArgs(caps, abs, tmp);
  spec.stdoutPath = log;
  spec.stderrPath = log;
  spec.timeout = opts.timeout;
  auto r = runProcess(spec, opts.cancel);
  std::string out = readSmall(log);
  fs::remove(log, ec);
  auto cleanup = [&] { fs::remove(tmp, ec); };
  if (!r) {
    cleanup();
    return Error::io(report.string() + ": cannot run " + exe->string() + ": " + r.error().message);
  }
  if (r->cancelled) {
    cleanup();
    return Error::cancelled();
  }
  if (!r->ok() || !fs::is_regular_file(tmp, ec) || fs::file_size(tmp, ec) == 0) {
    cleanup();
    std::string why = lastErrorLine(out);
    return Error::invalid(report.string() + ": " + who + " could not export it (" + describe(*r) +
                          (why.empty() ? std::string() : ": " + why) +
                          "); a report recorded by a newer Nsight Systems needs that nsys or newer");
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    cleanup();
    return Error::io(target.string() + ": cannot move the export into place: " + ec.message());
  }
  {
    std::ofstream s(stampFile, std::ios::binary | std::ios::trunc);
    s << stamp->text();
  }
  // The report may have changed while it was exported: then the stamp no longer matches and the
  // next run exports again (never a stale export under a fresh stamp).
  if (auto now = stampOf(report); !now || now->text() != stamp->text()) fs::remove(stampFile, ec);
  return ReportExport{target, false, caps.version.text};
}

}  // namespace kl::runner
