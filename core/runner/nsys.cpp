#include "core/runner/nsys.h"

#include <charconv>
#include <fstream>

#include "core/runner/process.h"

namespace kl::runner {

Result<NsysVersion> parseNsysVersion(std::string_view out) {
  // The first token that looks like YYYY.N[.N[.N]].
  for (size_t i = 0; i + 4 < out.size(); ++i) {
    if (!(out[i] >= '0' && out[i] <= '9') || (i > 0 && out[i - 1] >= '0' && out[i - 1] <= '9')) continue;
    int parts[4] = {0, 0, 0, 0};
    size_t j = i;
    int np = 0;
    while (np < 4 && j < out.size() && out[j] >= '0' && out[j] <= '9') {
      auto [p, ec] = std::from_chars(out.data() + j, out.data() + out.size(), parts[np]);
      if (ec != std::errc()) break;
      j = static_cast<size_t>(p - out.data());
      ++np;
      if (j < out.size() && out[j] == '.' && j + 1 < out.size() && out[j + 1] >= '0' && out[j + 1] <= '9')
        ++j;
      else
        break;
    }
    if (np >= 2 && parts[0] >= 2018 && parts[0] < 2100) {
      NsysVersion v{parts[0], parts[1], parts[2], parts[3], {}};
      size_t end = j;
      while (end < out.size() && out[end] != ' ' && out[end] != '\n' && out[end] != '\r') ++end;
      v.text = std::string(out.substr(i, end - i));
      return v;
    }
  }
  std::string first(out.substr(0, out.find('\n')));
  return Error::invalid("cannot read the nsys version from '" + first + "'");
}

NsysCaps nsysCapsFrom(const NsysVersion& v, std::string_view profileHelp, std::string_view exportHelp) {
  NsysCaps c;
  c.version = v;
  c.reportExtension = (v.year < 2021 || (v.year == 2021 && v.minor < 4)) ? ".qdrep" : ".nsys-rep";
  c.cudaGraphTrace = profileHelp.find("--cuda-graph-trace") != std::string_view::npos;
  c.pytorchAutogradNvtx = profileHelp.find("autograd-nvtx") != std::string_view::npos;
  c.exportSqlite = exportHelp.empty() || exportHelp.find("sqlite") != std::string_view::npos;
  return c;
}

std::optional<std::filesystem::path> findNsys(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return findExecutable(*configured);
  if (auto p = findExecutable("nsys")) return p;
  return findExecutable("/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys");
}

namespace {
Result<std::string> captureOutput(const std::filesystem::path& exe, std::vector<std::string> args) {
  char tmpl[] = "/tmp/kernlens-nsys-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return Error::io("cannot create a temporary file");
  ::close(fd);
  std::filesystem::path tmp(tmpl);
  ProcessSpec spec;
  spec.argv.push_back(exe.string());
  for (auto& a : args) spec.argv.push_back(std::move(a));
  spec.stdoutPath = tmp;
  spec.stderrPath = tmp;
  spec.timeout = std::chrono::seconds(10);
  auto r = runProcess(spec);
  std::ifstream in(tmp, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  if (!r) return r.error();
  if (r->timedOut) return Error::io(exe.string() + " " + spec.argv[1] + ": timed out");
  return text;
}
}  // namespace

Result<NsysCaps> detectNsys(const std::optional<std::string>& configured) {
  auto exe = findNsys(configured);
  if (!exe)
    return Error::notFound(configured && !configured->empty()
                               ? "nsys not found at '" + *configured + "' (setting nsysPath)"
                               : std::string("nsys (Nsight Systems) not found on PATH; install it (Debian: "
                                             "scripts/install-deps.sh nsys) or use the emulate backend"));
  auto ver = captureOutput(*exe, {"--version"});
  if (!ver) return ver.error();
  auto v = parseNsysVersion(*ver);
  if (!v) return Error::invalid(exe->string() + ": " + v.error().message);
  auto ph = captureOutput(*exe, {"profile", "--help"});
  if (!ph) return ph.error();
  auto eh = captureOutput(*exe, {"export", "--help"});
  if (!eh) return eh.error();
  NsysCaps caps = nsysCapsFrom(*v, *ph, *eh);
  caps.exe = *exe;
  if (!caps.exportSqlite)
    return Error::unsupported(exe->string() + " " + v->text + ": `nsys export` has no sqlite type");
  return caps;
}

std::vector<std::string> nsysProfileArgs(const NsysCaps& caps, const std::string& outBase) {
  std::vector<std::string> a = {caps.exe.string(), "profile", "--trace=cuda,nvtx,osrt", "--sample=none",
                                "--cpuctxsw=none"};
  if (caps.cudaGraphTrace) a.push_back("--cuda-graph-trace=node");
  if (caps.pytorchAutogradNvtx) a.push_back("--pytorch=autograd-nvtx");
  a.push_back("--force-overwrite=true");
  a.push_back("-o");
  a.push_back(outBase);
  return a;
}

std::vector<std::string> nsysExportArgs(const NsysCaps& caps, const std::filesystem::path& report,
                                        const std::filesystem::path& sqlite) {
  std::vector<std::string> a = {caps.exe.string(), "export", "--type", "sqlite", "--force-overwrite=true"};
  a.push_back("--output");
  a.push_back(sqlite.string());
  a.push_back(report.string());
  return a;
}

}  // namespace kl::runner
