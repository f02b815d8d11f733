#include "core/support/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace kl {
namespace {

Result<std::filesystem::path> realPath(const std::filesystem::path& p) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(p.c_str(), nullptr), &std::free);
  if (!r) {
    if (errno == ENOENT || errno == ENOTDIR) return Error::notFound(p.string() + ": no such file");
    return Error::io(p.string() + ": " + std::strerror(errno));
  }
  return std::filesystem::path(r.get());
}

}  // namespace

Result<std::filesystem::path> resolveInsideRoot(const std::filesystem::path& root, const std::filesystem::path& path) {
  if (path.string().find('\0') != std::string::npos) return Error::invalid("a path with a NUL byte");
  auto realRoot = realPath(root);
  if (!realRoot) return realRoot.error();
  auto real = realPath(path.is_absolute() ? path : root / path);
  if (!real) return real.error();
  auto rel = real->lexically_relative(*realRoot);
  if (rel.empty() || *rel.begin() == "..")
    return Error::invalid(path.string() + " resolves outside the workspace (to " + real->string() + ")");
  return *real;
}

Result<int> openRegularFile(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Error::notFound(path.string() + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error::invalid(path.string() + ": not a regular file (a FIFO, device, socket or directory is not read)");
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Result<std::string> readRegularFile(const std::filesystem::path& path, size_t maxBytes) {
  auto fd = openRegularFile(path);
  if (!fd) return fd.error();
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(*fd);
      return Error::io(path.string() + ": " + std::strerror(e));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > maxBytes) {
      ::close(*fd);
      return Error::invalid(path.string() + ": larger than " + std::to_string(maxBytes >> 20) + " MiB");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(*fd);
  return out;
}

Result<std::string> readWorkspaceFile(const std::filesystem::path& root, std::string_view relPath, size_t maxBytes) {
  auto p = resolveInsideRoot(root, std::filesystem::path(std::string(relPath)));
  if (!p) return p.error();
  return readRegularFile(*p, maxBytes);
}

}  // namespace kl
