#include "core/runner/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/support/format.h"

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

namespace {

// ---- the supervisor ---------------------------------------------------------------------------
// Runs in the forked child of a possibly multi-threaded process, so it only makes
// async-signal-safe calls (raw syscalls, no allocation, no stdio); its tables are static (the
// child's private copy after fork).

constexpr int kMaxProcs = 65536;
pid_t gPids[kMaxProcs];
pid_t gPpids[kMaxProcs];
bool gMark[kMaxProcs];

/// Messages from the supervisor to kernlens on the report pipe.
struct Report {
  char kind;  // 'S' started (value = program pid), 'E' exec failed (value = errno),
              // 'X' finished (value = wait status, leftovers = descendants were stopped)
  int value;
  int leftovers;
};

void writeAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

long parseLong(const char*& p) {
  while (*p == ' ') ++p;
  long v = 0;
  bool neg = *p == '-';
  if (neg) ++p;
  while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  return neg ? -v : v;
}

/// The live (non-zombie) descendants of `root` into gPids[0..n) (returns n). As a child
/// subreaper, every descendant of the supervisor (also those that called setsid and whose
/// parents died) has it as an ancestor.
int descendants(pid_t root) {
  int dfd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return 0;
  int n = 0;
  alignas(8) char buf[8192];
  while (true) {
    long got = ::syscall(SYS_getdents64, dfd, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (*name < '0' || *name > '9' || n >= kMaxProcs) continue;
      char path[64] = "/proc/";
      size_t len = 6;
      for (const char* q = name; *q && len < 50; ++q) path[len++] = *q;
      const char* tail = "/stat";
      for (const char* q = tail; *q; ++q) path[len++] = *q;
      path[len] = 0;
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char st[512];
      ssize_t r = ::read(fd, st, sizeof st - 1);
      ::close(fd);
      if (r <= 0) continue;
      st[r] = 0;
      const char* close = nullptr;
      for (const char* q = st; *q; ++q)
        if (*q == ')') close = q;
      if (!close || close[1] != ' ') continue;
      char state = close[2];
      if (state == 'Z' || state == 'X') continue;
      const char* q = close + 3;
      long ppid = parseLong(q);
      const char* pn = name;
      gPids[n] = static_cast<pid_t>(parseLong(pn));
      gPpids[n] = static_cast<pid_t>(ppid);
      ++n;
    }
  }
  ::close(dfd);
  for (int i = 0; i < n; ++i) gMark[i] = gPpids[i] == root;
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < n; ++i) {
      if (gMark[i]) continue;
      for (int j = 0; j < n; ++j)
        if (gMark[j] && gPids[j] == gPpids[i]) {
          gMark[i] = changed = true;
          break;
        }
    }
  }
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (gMark[i]) gPids[k++] = gPids[i];
  return k;
}

void sleepMs(long ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1000000L
  };
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

long nowMs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/// Reaps every finished child (orphans included); records the program's status.
void reapAll(pid_t program, int* programStatus, bool* programDone) {
  while (true) {
    int st = 0;
    pid_t r = ::waitpid(-1, &st, WNOHANG);
    if (r <= 0) return;
    if (r == program) {
      *programStatus = st;
      *programDone = true;
    }
  }
}

/// Sends `sig` to every descendant, waits up to `graceMs` for them to go, then SIGKILLs what is
/// left until nothing is. Returns whether any descendant was found.
bool stopAll(pid_t self, pid_t program, int sig, long graceMs, int* programStatus, bool* programDone) {
  int n = descendants(self);
  if (n == 0) return false;
  for (int i = 0; i < n; ++i) ::kill(gPids[i], sig);
  long deadline = nowMs() + graceMs;
  while (nowMs() < deadline) {
    reapAll(program, programStatus, programDone);
    if (descendants(self) == 0) return true;
    sleepMs(20);
  }
  for (int round = 0; round < 500; ++round) {  // fork races: repeat until empty (~10 s at most)
    reapAll(program, programStatus, programDone);
    n = descendants(self);
    if (n == 0) break;
    for (int i = 0; i < n; ++i) ::kill(gPids[i], SIGKILL);
    sleepMs(20);
  }
  reapAll(program, programStatus, programDone);
  return true;
}

/// Closes every descriptor except those in keep[0..nkeep) (other threads' pipes must not leak
/// into the supervisor, or their supervisors would never see end of file).
void closeAllExcept(const int* keep, int nkeep) {
  auto kept = [&](int fd) {
    for (int i = 0; i < nkeep; ++i)
      if (keep[i] == fd) return true;
    return fd <= 2;
  };
  for (int pass = 0; pass < 64; ++pass) {  // 1024 per pass
    int dfd = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
      for (int fd = 3; fd < 65536; ++fd)
        if (!kept(fd)) ::close(fd);
      return;
    }
    alignas(8) char buf[4096];
    int toClose[1024];
    int nclose = 0;
    while (nclose < 1024) {
      long got = ::syscall(SYS_getdents64, dfd, buf, sizeof buf);
      if (got <= 0) break;
      for (long off = 0; off < got;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf + off);
        off += d->d_reclen;
        const char* p = d->d_name;
        if (*p < '0' || *p > '9') continue;
        int fd = static_cast<int>(parseLong(p));
        if (fd != dfd && !kept(fd) && nclose < 1024) toClose[nclose++] = fd;
      }
    }
    ::close(dfd);
    for (int i = 0; i < nclose; ++i) ::close(toClose[i]);
    if (nclose == 0) return;
  }
}

struct ChildSetup {
  const char* exe;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // nullptr = inherit
  int stdinFd, stdoutFd, stderrFd;
  int ctlRead, reportWrite;
  long graceMs;
  uint64_t maxLogBytes;  // per log file; 0 = unlimited
};

/// The program's stdout or stderr: a pipe the supervisor drains into the log file, up to a cap
/// (beyond it the output is counted and dropped, and the program never blocks on a full pipe).
struct Relay {
  int pipeRead = -1;
  int logFd = -1;
  uint64_t written = 0, cap = 0;
  bool capped = false;

  /// Reads what is there (non-blocking); false at end of file.
  bool pump() {
    char buf[65536];
    while (true) {
      ssize_t n = ::read(pipeRead, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return true;  // EAGAIN: drained for now
      if (n == 0) return false;
      size_t keep = static_cast<size_t>(n);
      if (cap && written + keep > cap) keep = written >= cap ? 0 : static_cast<size_t>(cap - written);
      if (keep) writeAll(logFd, buf, keep);
      written += keep;
      if (keep < static_cast<size_t>(n) && !capped) {
        capped = true;
        static const char note[] = "\n[kernlens: output beyond the log cap was discarded]\n";
        writeAll(logFd, note, sizeof note - 1);
      }
    }
  }
};

[[noreturn]] void supervise(const ChildSetup& c) {
  // A new session: the supervisor leads a process group of its own that the terminal's Ctrl-C
  // does not reach (kernlens decides what the program gets), and it adopts every orphaned
  // descendant (PR_SET_CHILD_SUBREAPER) so that none escapes by double-forking or setsid.
  ::setsid();
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, SIG_IGN);  // it ends via the pipe
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGCHLD, SIG_DFL);
  int keep[] = {c.stdinFd, c.stdoutFd, c.stderrFd, c.ctlRead, c.reportWrite};
  closeAllExcept(keep, 5);
  auto fail = [&](int e) {
    Report r{'E', e, 0};
    writeAll(c.reportWrite, &r, sizeof r);
    ::_exit(127);
  };
  int execPipe[2], outPipe[2], errPipe[2];
  if (::pipe2(execPipe, O_CLOEXEC) != 0 || ::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0)
    fail(errno);
  pid_t self = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) fail(errno);
  if (pid == 0) {
    // The program: in the supervisor's group; killed by the kernel if the supervisor dies.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(127);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(s, SIG_DFL);
    if (c.cwd && ::chdir(c.cwd) != 0) {
      int e = errno;
      writeAll(execPipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::dup2(c.stdinFd, 0);
    ::dup2(outPipe[1], 1);
    ::dup2(errPipe[1], 2);
    ::execve(c.exe, c.argv, c.envp);
    int e = errno;
    writeAll(execPipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(execPipe[1]);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  ::close(c.stdinFd);
  int childErrno = 0;
  ssize_t n;
  do n = ::read(execPipe[0], &childErrno, sizeof childErrno);
  while (n < 0 && errno == EINTR);
  ::close(execPipe[0]);
  if (n == static_cast<ssize_t>(sizeof childErrno)) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    fail(childErrno);
  }
  Report started{'S', pid, 0};
  writeAll(c.reportWrite, &started, sizeof started);

  Relay relays[2] = {{outPipe[0], c.stdoutFd, 0, c.maxLogBytes, false},
                     {errPipe[0], c.stderrFd, 0, c.maxLogBytes, false}};
  for (auto& r : relays) ::fcntl(r.pipeRead, F_SETFL, ::fcntl(r.pipeRead, F_GETFL) | O_NONBLOCK);
  auto pumpAll = [&] {
    for (auto& r : relays)
      if (r.pipeRead >= 0 && !r.pump()) {
        ::close(r.pipeRead);
        r.pipeRead = -1;
      }
  };
  int status = 0;
  bool done = false, leftovers = false;
  while (true) {
    struct pollfd pfd[3] = {{c.ctlRead, POLLIN, 0}, {relays[0].pipeRead, POLLIN, 0}, {relays[1].pipeRead, POLLIN, 0}};
    int pr = ::poll(pfd, 3, 20);
    if (pr > 0 && (pfd[1].revents || pfd[2].revents)) pumpAll();
    if (pr > 0 && pfd[0].revents) {
      char cmd[2] = {0, 0};
      ssize_t r = ::read(c.ctlRead, cmd, sizeof cmd);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        // kernlens is gone (exited, crashed or was killed with SIGKILL): nothing may outlive it.
        stopAll(self, pid, SIGTERM, c.graceMs, &status, &done);
        pumpAll();
        ::_exit(0);
      }
      int sig = r == 2 && cmd[1] > 0 ? cmd[1] : SIGTERM;
      stopAll(self, pid, sig, c.graceMs, &status, &done);
      break;
    }
    reapAll(pid, &status, &done);
    if (done) {
      // The leader is gone; anything it left behind (daemonised helpers, orphans) goes too.
      leftovers = stopAll(self, pid, SIGTERM, c.graceMs, &status, &done);
      break;
    }
  }
  while (!done) {  // the program is stopped; collect its status
    int st = 0;
    pid_t r = ::waitpid(pid, &st, 0);
    if (r == pid) {
      status = st;
      done = true;
    } else if (r < 0 && errno != EINTR) {
      status = SIGKILL;  // reads as "killed by SIGKILL"
      done = true;
    }
  }
  pumpAll();  // every writer is gone: what is left in the pipes, then end of file
  Report fin{'X', status, leftovers ? 1 : 0};
  writeAll(c.reportWrite, &fin, sizeof fin);
  ::_exit(0);
}

/// Reads one report; false at end of file (the supervisor died without reporting).
bool readReport(int fd, Report& r) {
  size_t got = 0;
  char* p = reinterpret_cast<char*>(&r);
  while (got < sizeof r) {
    ssize_t n = ::read(fd, p + got, sizeof r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<ProcessResult> runProcess(const ProcessSpec& spec, const CancellationToken& cancel) {
  if (spec.argv.empty()) return Error::invalid("runProcess: empty command");
  auto exe = findExecutable(spec.argv[0]);
  if (!exe) return Error::notFound(spec.argv[0] + ": command not found");
  if (!spec.cwd.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(spec.cwd, ec))
      return Error::notFound(spec.cwd.string() + ": working directory does not exist");
  }

  // Everything the children need, prepared before fork (only async-signal-safe calls after it).
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
  int ctlFds[2], repFds[2];
  if (::pipe2(ctlFds, O_CLOEXEC) != 0) return Error::io(std::string("pipe: ") + std::strerror(errno));
  Fd ctlRead(ctlFds[0]), ctlWrite(ctlFds[1]);
  if (::pipe2(repFds, O_CLOEXEC) != 0) return Error::io(std::string("pipe: ") + std::strerror(errno));
  Fd repRead(repFds[0]), repWrite(repFds[1]);
  ChildSetup setup{exePath.c_str(), argv.data(),
                   envp.data(),     cwd.empty() ? nullptr : cwd.c_str(),
                   devnull.get(),   out->get(),
                   err->get(),      ctlRead.get(),
                   repWrite.get(),  static_cast<long>(spec.killGrace.count()),
                   spec.maxLogBytes};

  LogTail tailOut(spec.stdoutPath, "stdout"), tailErr(spec.stderrPath, "stderr");
  auto t0 = Clock::now();
  pid_t sup = ::fork();
  if (sup < 0) return Error::io(std::string("fork: ") + std::strerror(errno));
  if (sup == 0) supervise(setup);
  ctlRead.reset();
  repWrite.reset();
  out->reset();
  err->reset();
  auto reapSupervisor = [&]() {
    int st = 0;
    pid_t r;
    do r = ::waitpid(sup, &st, 0);
    while (r < 0 && errno == EINTR);
  };
  Report first{};
  if (!readReport(repRead.get(), first) || first.kind == 'E') {
    reapSupervisor();
    std::string why = first.kind == 'E' ? std::strerror(first.value) : "the supervisor ended unexpectedly";
    return Error::io("cannot run " + exePath + (cwd.empty() ? "" : " in " + cwd) + ": " + why);
  }

  ProcessResult res;
  res.pid = first.value;
  res.timeoutLimit = spec.timeout;
  Report fin{};
  bool finished = false;
  bool stopSent = false;
  auto stop = [&](int sig) {
    char cmd[2] = {'T', static_cast<char>(sig)};
    writeAll(ctlWrite.get(), cmd, sizeof cmd);
    stopSent = true;
  };
  while (!finished) {
    struct pollfd pfd {
      repRead.get(), POLLIN, 0
    };
    int pr = ::poll(&pfd, 1, 20);
    if (pr > 0) {
      finished = true;
      if (!readReport(repRead.get(), fin)) fin = Report{'?', SIGKILL, 0};
      break;
    }
    auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    if (!stopSent && cancel.isCancelled()) {
      res.cancelled = true;
      int sig = cancel.signal();
      stop(sig > 0 ? sig : SIGTERM);
    } else if (!stopSent && spec.timeout.count() > 0 && elapsed >= spec.timeout) {
      res.timedOut = true;
      stop(SIGTERM);
    }
    tailOut.poll(spec.onOutput, false);
    tailErr.poll(spec.onOutput, false);
    if (spec.onTick) spec.onTick(elapsed);
  }
  reapSupervisor();
  res.killedLeftovers = fin.kind == 'X' && fin.leftovers != 0 && !stopSent;
  res.wall = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  int status = fin.value;
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
    return "timed out after " + formatDuration(static_cast<double>(ms) * 1e6);
  }
  if (r.signal) return "killed by signal " + std::to_string(r.signal) + " (" + signalName(r.signal) + ")";
  return "exit code " + std::to_string(r.exitCode);
}

}  // namespace kl::runner
