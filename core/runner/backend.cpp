#include "core/runner/backend.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/profile/json_pull.h"

namespace kl::runner {

const char* backendName(BackendKind k) {
  switch (k) {
    case BackendKind::Nsys: return "nsys";
    case BackendKind::Torch: return "torch";
    case BackendKind::Emulate: return "emulate";
  }
  return "emulate";
}

Result<BackendKind> parseBackend(std::string_view s) {
  if (s == "nsys") return BackendKind::Nsys;
  if (s == "torch") return BackendKind::Torch;
  if (s == "emulate") return BackendKind::Emulate;
  return Error::invalid("unknown backend '" + std::string(s) + "' (use nsys, torch or emulate)");
}

std::vector<std::string> Backend::probeCommand(const ProbeOptions& p, BackendKind backend, const RoundPaths& paths,
                                               const std::optional<std::string>& out,
                                               const std::vector<std::string>& entry) {
  std::string pythonPath = p.probeDir.string();
  if (const char* cur = std::getenv("PYTHONPATH"); cur && *cur) pythonPath += std::string(":") + cur;
  std::vector<std::string> a = {"env",       "PYTHONPATH=" + pythonPath, p.python, "-m", "kernlens_probe",
                                "--backend", backendName(backend)};
  if (!paths.overlayDir.empty()) a.insert(a.end(), {"--overlay", paths.overlayDir.string()});
  if (!paths.lineRanges.empty()) a.insert(a.end(), {"--line-ranges", paths.lineRanges.string()});
  if (!paths.callsFile.empty()) a.insert(a.end(), {"--discover-calls", paths.callsFile.string()});
  if (!paths.autogradRanges) a.insert(a.end(), {"--autograd-nvtx", "off"});
  a.insert(a.end(), {"--workspace", p.workspace.string(), "--status", (paths.outDir / "status{rank}.json").string()});
  if (out) a.insert(a.end(), {"--out", *out});
  if (backend == BackendKind::Emulate) a.insert(a.end(), {"--gpu", p.gpu});
  a.push_back("--");
  a.insert(a.end(), entry.begin(), entry.end());
  return a;
}

namespace {

/// Files of `dir` whose name starts with `prefix` and ends with `suffix`, sorted.
std::vector<std::filesystem::path> listOutputs(const std::filesystem::path& dir, std::string_view prefix,
                                               std::string_view suffix) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string n = it->path().filename().string();
    if (n.size() >= prefix.size() + suffix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string logHint(const RoundPaths& p) {
  std::string tail = tailLines(p.stderrLog, 5);
  return (tail.empty() ? "" : ":\n" + tail) + "\n(log: " + p.stderrLog.string() + ")";
}

Result<std::vector<std::filesystem::path>> checkOutputs(std::vector<std::filesystem::path> files,
                                                        const RoundPaths& paths, std::string_view what) {
  if (files.empty()) {
    ProbeStatus st = readProbeStatus(paths.outDir / "status.json");
    std::string why = !st.exportError.empty()  ? " (probe: " + st.exportError + ")"
                      : !st.probeError.empty() ? " (probe: " + st.probeError + ")"
                                               : "";
    return Error::io("no " + std::string(what) + " was written in " + paths.outDir.string() + why + logHint(paths));
  }
  for (const auto& f : files) {
    std::error_code ec;
    if (std::filesystem::file_size(f, ec) == 0 || ec)
      return Error::io(f.string() + ": the " + std::string(what) + " is empty" + logHint(paths));
  }
  return files;
}

class NsysBackend : public Backend {
 public:
  NsysBackend(NsysCaps caps, ProbeOptions probe) : caps_(std::move(caps)), probe_(std::move(probe)) {}
  BackendKind kind() const override { return BackendKind::Nsys; }
  std::string profilerVersion() const override { return "nsys " + caps_.version.text; }
  std::vector<std::string> command(const RoundPaths& paths, const std::vector<std::string>& entry) const override {
    NsysCaps caps = caps_;
    caps.pytorchAutogradNvtx = caps_.pytorchAutogradNvtx && paths.autogradRanges;
    auto a = nsysProfileArgs(caps, (paths.outDir / ("round" + std::to_string(paths.index) + "{rank}")).string());
    auto p = probeCommand(probe_, BackendKind::Nsys, paths, std::nullopt, entry);
    if (caps.pytorchAutogradNvtx) {  // nsys writes the sequence ranges: the probe must not as well
      auto sep = std::find(p.begin(), p.end(), std::string("--"));
      p.insert(sep, {"--autograd-nvtx", "off"});
    }
    a.insert(a.end(), p.begin(), p.end());
    return a;
  }
  Result<std::vector<std::filesystem::path>> collect(const RoundPaths& paths,
                                                     const CancellationToken& cancel) const override {
    auto reports = listOutputs(paths.outDir, "round", caps_.reportExtension);
    if (reports.empty()) {
      std::string extra;
      if (!listOutputs(paths.outDir, "round", ".qdstrm").empty() ||
          !listOutputs("/tmp", "nsys-report-", ".qdstrm").empty())
        extra =
            " (nsys left a .qdstrm: its QdstrmImporter was not found — Debian 2022.4 needs "
            "scripts/install-deps.sh nsys for the host-linux-x64 link)";
      return Error::io("nsys wrote no report (" + caps_.reportExtension + ") in " + paths.outDir.string() + extra +
                       logHint(paths));
    }
    std::vector<std::filesystem::path> out;
    for (const auto& rep : reports) {
      if (cancel.isCancelled()) return Error::cancelled();
      auto sqlite = rep;
      sqlite.replace_extension(".sqlite");
      ProcessSpec spec;
      spec.argv = nsysExportArgs(caps_, rep, sqlite);
      spec.stdoutPath = paths.roundDir / "export.log";
      spec.stderrPath = paths.roundDir / "export.log";
      spec.timeout = std::chrono::seconds(300);
      auto r = runProcess(spec, cancel);
      if (!r) return r.error();
      if (r->cancelled) return Error::cancelled();
      if (!r->ok())
        return Error::io("nsys export of " + rep.filename().string() + " failed (" + describe(*r) + "):\n" +
                         tailLines(spec.stderrPath, 5) + "\n(log: " + spec.stderrPath.string() + ")");
      out.push_back(sqlite);
    }
    return checkOutputs(std::move(out), paths, "nsys SQLite export");
  }
  void afterKill(int leaderPid) const override {
    // A hung 2022.4 CLI leaves its agent ("--session-name=profile-<prog>-<cli pid>") outside the
    // process group (reference/nsys-on-cpu.md §7): stop exactly that one by its session name.
    const std::string suffix = "-" + std::to_string(leaderPid);
    auto isAgent = [&](std::string_view cmd) {
      size_t p = cmd.find("--session-name=profile-");
      if (p == std::string_view::npos) return false;
      std::string_view tok = cmd.substr(p, cmd.find(' ', p) - p);
      return tok.size() > suffix.size() && tok.substr(tok.size() - suffix.size()) == suffix;
    };
    if (signalProcessesMatching(isAgent, SIGTERM) > 0) {
      ::usleep(500 * 1000);
      signalProcessesMatching(isAgent, SIGKILL);
    }
  }

 private:
  NsysCaps caps_;
  ProbeOptions probe_;
};

class ProbeBackend : public Backend {
 public:
  ProbeBackend(BackendKind k, ProbeOptions probe) : kind_(k), probe_(std::move(probe)) {}
  BackendKind kind() const override { return kind_; }
  std::string profilerVersion() const override {
    return kind_ == BackendKind::Torch ? "torch.profiler via kernlens_probe" : "kernlens-emulate (emulated)";
  }
  std::vector<std::string> command(const RoundPaths& paths, const std::vector<std::string>& entry) const override {
    std::string out = (paths.outDir / (std::string("profile{rank}") + ext())).string();
    return probeCommand(probe_, kind_, paths, out, entry);
  }
  Result<std::vector<std::filesystem::path>> collect(const RoundPaths& paths, const CancellationToken&) const override {
    auto files = listOutputs(paths.outDir, "profile", ext());
    return checkOutputs(std::move(files), paths, kind_ == BackendKind::Torch ? "Kineto trace" : "emulated export");
  }

 private:
  const char* ext() const { return kind_ == BackendKind::Torch ? ".json" : ".sqlite"; }
  BackendKind kind_;
  ProbeOptions probe_;
};

}  // namespace

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind, const BackendOptions& opts) {
  if (opts.probe.probeDir.empty() || !std::filesystem::is_directory(opts.probe.probeDir / "kernlens_probe"))
    return Error::notFound(
        "the kernlens probe was not found (looked for " +
        (opts.probe.probeDir.empty()
             ? std::string("<binary dir>/share/kernlens/probe or <binary dir>/../share/kernlens/probe")
             : opts.probe.probeDir.string()) +
        "/kernlens_probe); set KERNLENS_PROBE_DIR");
  if (!findExecutable(opts.probe.python))
    return Error::notFound("python interpreter '" + opts.probe.python + "' not found (setting python)");
  if (kind == BackendKind::Nsys) {
    auto caps = detectNsys(opts.nsysPath);
    if (!caps) return caps.error();
    return std::unique_ptr<Backend>(new NsysBackend(std::move(*caps), opts.probe));
  }
  return std::unique_ptr<Backend>(new ProbeBackend(kind, opts.probe));
}

BackendKind defaultBackend(const std::optional<std::string>& nsysPath) {
  return findNsys(nsysPath) ? BackendKind::Nsys : BackendKind::Emulate;
}

std::optional<std::filesystem::path> findProbeDir() {
  if (const char* env = std::getenv("KERNLENS_PROBE_DIR"); env && *env) return std::filesystem::path(env);
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  const auto exeDir = std::filesystem::path(buf).parent_path();
  // The build tree keeps the probe beside the binary; an install keeps it under <prefix>/share.
  for (const auto& dir :
       {exeDir / "share" / "kernlens" / "probe", exeDir.parent_path() / "share" / "kernlens" / "probe"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir / "kernlens_probe", ec)) return dir.lexically_normal();
  }
  return std::nullopt;
}

namespace {
class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string s) : s_(std::move(s)) {}
  Result<size_t> read(char* buf, size_t cap) override {
    size_t n = std::min(cap, s_.size() - pos_);
    std::memcpy(buf, s_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string s_;
  size_t pos_ = 0;
};
}  // namespace

ProbeStatus readProbeStatus(const std::filesystem::path& path) {
  ProbeStatus st;
  std::ifstream in(path, std::ios::binary);
  if (!in) return st;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StringSource src(std::move(text));
  profile::JsonPull p(src);
  using Tok = profile::JsonPull::Tok;
  if (p.next() != Tok::ObjBegin) return st;
  std::string key, parent;
  for (Tok t = p.next(); t != Tok::End && t != Tok::Error; t = p.next()) {
    if (t == Tok::Key) {
      key = std::string(p.text());
      Tok v = p.next();
      size_t depth = p.depth();
      if (v == Tok::ObjBegin && depth == 2 && key == "summary") {
        parent = "summary";
        continue;
      }
      if (v == Tok::ObjBegin && parent == "summary" && key == "unmodelled_ops") {
        for (Tok k = p.next(); k == Tok::Key; k = p.next()) {
          std::string op(p.text());
          Tok n = p.next();
          int64_t count = 0;
          if (n == Tok::Number && profile::parseInt64(p.text(), count))
            st.unmodelledOps.emplace_back(op, count);
          else if (n == Tok::ObjBegin || n == Tok::ArrBegin) {
            if (!p.skip(n)) return st;
          }
        }
        continue;
      }
      if (v == Tok::ArrBegin && depth == 2 && key == "notes") {
        Tok n = p.next();
        for (; n == Tok::String; n = p.next()) st.notes.emplace_back(p.text());
        if (n == Tok::ArrEnd) continue;
        if (n == Tok::ObjBegin || n == Tok::ArrBegin) {
          if (!p.skip(n)) return st;
        }
        continue;
      }
      std::string val = v == Tok::String || v == Tok::Number ? std::string(p.text()) : "";
      if (parent == "summary" && depth == 2 && key == "kernels" && v == Tok::Number) {
        profile::parseInt64(val, st.kernels);
      } else if (depth == 1) {
        if (key == "exit_code" && v == Tok::Number)
          profile::parseInt64(val, st.exitCode);
        else if (key == "probe_error")
          st.probeError = val;
        else if (key == "entry_error")
          st.entryError = val;
        else if (key == "export_error")
          st.exportError = val;
        else if (key == "nvtx_provider")
          st.nvtxProvider = val;
      }
      if (v == Tok::ObjBegin || v == Tok::ArrBegin) {
        if (!p.skip(v)) return st;
      }
    } else if (t == Tok::ObjEnd) {
      parent.clear();
    }
  }
  st.found = true;
  return st;
}

}  // namespace kl::runner
