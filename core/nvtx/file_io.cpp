#include "core/nvtx/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kl::nvtx {

Result<std::string> readWholeFile(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error::io(path.string() + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::io(path.string() + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error::io(path.string() + ": read error");
  return ss.str();
}

namespace {

/// Closes a descriptor and removes the temporary file unless released.
class TempFile {
 public:
  TempFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool close() {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }
  void release() { path_.clear(); }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl = (dir / ("." + path.filename().string() + ".kl-tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return Error::io(path.string() + ": cannot create a temporary file in " + dir.string() + " (" +
                     std::strerror(errno) + ")");
  TempFile tmp(fd, tmpl);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) ::fchmod(tmp.fd(), st.st_mode & 07777);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(tmp.fd(), content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::io(path.string() + ": write failed (" + std::strerror(errno) + ")");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(tmp.fd()) != 0) return Error::io(path.string() + ": fsync failed (" + std::strerror(errno) + ")");
  if (!tmp.close()) return Error::io(path.string() + ": close failed");
  if (::rename(tmp.path().c_str(), path.c_str()) != 0)
    return Error::io(path.string() + ": cannot replace (" + std::strerror(errno) + ")");
  tmp.release();
  return {};
}

}  // namespace kl::nvtx
