#include "core/runner/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace kl::runner {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// A file descriptor closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Result<Fd> openLog(const std::filesystem::path& p) {
  if (p.empty()) return Fd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error::io(p.string() + ": cannot open log file: " + std::strerror(errno));
  return Fd(fd);
}

/// Follows a log file from a starting offset and hands out complete lines.
class LogTail {
 public:
  LogTail(std::filesystem::path p, const char* stream) : path_(std::move(p)), stream_(stream) {
    std::error_code ec;
    if (!path_.empty()) offset_ = std::filesystem::exists(path_, ec) ? std::filesystem::file_size(path_, ec) : 0;
  }
  void poll(const std::function<void(std::string_view, std::string_view)>& cb, bool final) {
    if (!cb || path_.empty()) return;
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
      cb(stream_, std::string_view(partial_).substr(start, nl - start));
    partial_.erase(0, start);
    if (final && !partial_.empty()) {
      cb(stream_, partial_);
      partial_.clear();
    }
  }

 private:
  std::filesystem::path path_;
  const char* stream_;
  uint64_t offset_ = 0;
  std::string partial_;
};

/// Whether any non-zombie process is in process group `pgid` (scans /proc).
bool groupAlive(pid_t pgid) {
  DIR* d = ::opendir("/proc");
  if (!d) return ::kill(-pgid, 0) == 0;
  bool alive = false;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string s;
    if (!std::getline(f, s)) continue;
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses: use the last ')'.
    auto close = s.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(s.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      alive = true;
      break;
    }
  }
  ::closedir(d);
  return alive;
}

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

std::optional<std::filesystem::path> findExecutable(std::string_view name) {
  if (name.empty()) return std::nullopt;
  auto usable = [](const std::filesystem::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path p(name);
    return usable(p) ? std::optional(p) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / std::string(name);
    if (usable(p)) return p;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

Result<ProcessResult> runProcess(const ProcessSpec& spec, const CancellationToken& cancel) {
  if (spec.argv.empty()) return Error::invalid("runProcess: empty command");
  auto exe = findExecutable(spec.argv[0]);
  if (!exe) return Error::notFound(spec.argv[0] + ": command not found");
  if (!spec.cwd.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(spec.cwd, ec))
      return Error::notFound(spec.cwd.string() + ": working directory does not exist");
  }

  // Everything the child needs, prepared before fork (only async-signal-safe calls after it).
  std::map<std::string, std::string> envMap;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    envMap[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& k : spec.unsetEnv) envMap.erase(k);
  for (const auto& [k, v] : spec.env) envMap[k] = v;
  std::vector<std::string> envStrings;
  envStrings.reserve(envMap.size());
  for (const auto& [k, v] : envMap) envStrings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : envStrings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argStrings = spec.argv;
  for (auto& s : argStrings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string exePath = exe->string();
  std::string cwd = spec.cwd.string();

  auto out = openLog(spec.stdoutPath);
  if (!out) return out.error();
  auto err = openLog(spec.stderrPath);
  if (!err) return err.error();
  Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) return Error::io(std::string("pipe: ") + std::strerror(errno));
  Fd errRead(pipeFds[0]), errWrite(pipeFds[1]);

  LogTail tailOut(spec.stdoutPath, "stdout"), tailErr(spec.stderrPath, "stderr");
  auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) return Error::io(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: new session => new process group whose id is our pid.
    ::setsid();
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      int e = errno;
      [[maybe_unused]] auto w = ::write(errWrite.get(), &e, sizeof e);
      ::_exit(127);
    }
    ::dup2(devnull.get(), 0);
    ::dup2(out->get(), 1);
    ::dup2(err->get(), 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(exePath.c_str(), argv.data(), envp.data());
    int e = errno;
    [[maybe_unused]] auto w = ::write(errWrite.get(), &e, sizeof e);
    ::_exit(127);
  }
  errWrite.reset();
  int childErrno = 0;
  ssize_t n;
  do n = ::read(errRead.get(), &childErrno, sizeof childErrno);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof childErrno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return Error::io("cannot run " + exePath + (cwd.empty() ? "" : " in " + cwd) + ": " +
                     std::strerror(childErrno));
  }

  ProcessResult res;
  res.pid = pid;
  res.timeoutLimit = spec.timeout;
  int status = 0;
  bool reaped = false;
  auto reap = [&](bool block) {
    if (reaped) return true;
    pid_t r;
    do r = ::waitpid(pid, &status, block ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == pid) reaped = true;
    return reaped;
  };
  // SIGTERM the group, wait for it to go away (reaping the leader), then SIGKILL.
  auto stopGroup = [&]() {
    ::kill(-pid, SIGTERM);
    auto deadline = Clock::now() + spec.killGrace;
    while (Clock::now() < deadline) {
      reap(false);
      if (reaped && !groupAlive(pid)) return;
      std::this_thread::sleep_for(milliseconds(20));
    }
    ::kill(-pid, SIGKILL);
    reap(true);
    for (int i = 0; i < 100 && groupAlive(pid); ++i) std::this_thread::sleep_for(milliseconds(20));
  };

  while (!reap(false)) {
    auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    if (cancel.isCancelled()) {
      res.cancelled = true;
      stopGroup();
      break;
    }
    if (spec.timeout.count() > 0 && elapsed >= spec.timeout) {
      res.timedOut = true;
      stopGroup();
      break;
    }
    tailOut.poll(spec.onOutput, false);
    tailErr.poll(spec.onOutput, false);
    if (spec.onTick) spec.onTick(elapsed);
    std::this_thread::sleep_for(milliseconds(20));
  }
  // The leader is gone; anything it left in its group (daemonised helpers, orphans) goes too.
  if (groupAlive(pid)) {
    res.killedLeftovers = true;
    stopGroup();
  }
  reap(true);
  res.wall = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  if (WIFEXITED(status)) {
    res.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.signal = WTERMSIG(status);
  }
  tailOut.poll(spec.onOutput, true);
  tailErr.poll(spec.onOutput, true);
  return res;
}

std::string tailLines(const std::filesystem::path& path, size_t maxLines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > 65536 ? size - 65536 : 0;
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string_view l(text.data() + start, nl - start);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
    if (!l.empty()) lines.push_back(l);
    start = nl + 1;
  }
  if (from > 0 && !lines.empty()) lines.erase(lines.begin());  // probably cut
  size_t first = lines.size() > maxLines ? lines.size() - maxLines : 0;
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    if (!out.empty()) out += '\n';
    out += lines[i];
  }
  return out;
}

int signalProcessesMatching(const std::function<bool(std::string_view)>& match, int sig) {
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  int count = 0;
  pid_t self = ::getpid();
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    pid_t p = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (p == self) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (!cmd.empty() && match(cmd) && ::kill(p, sig) == 0) ++count;
  }
  ::closedir(d);
  return count;
}

std::string describe(const ProcessResult& r) {
  if (r.cancelled) return "cancelled";
  if (r.timedOut) {
    auto ms = (r.timeoutLimit.count() > 0 ? r.timeoutLimit : r.wall).count();
    return "timed out after " + std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
  }
  if (r.signal) return "killed by signal " + std::to_string(r.signal) + " (" + signalName(r.signal) + ")";
  return "exit code " + std::to_string(r.exitCode);
}

}  // namespace kl::runner
