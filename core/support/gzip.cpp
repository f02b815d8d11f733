#include "core/support/gzip.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/support/safe_file.h"

namespace kl {

bool isGzipMagic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

/// Raw bytes of a file.
class FileSource : public ByteSource {
 public:
  FileSource(std::FILE* f, std::string name) : f_(f), name_(std::move(name)) {}
  Result<size_t> read(char* buf, size_t cap) override {
    size_t n = std::fread(buf, 1, cap, f_.get());
    if (n == 0 && std::ferror(f_.get())) return Error::io(name_ + ": read error");
    return n;
  }

 private:
  std::unique_ptr<std::FILE, FileCloser> f_;
  std::string name_;
};

/// Raw bytes of a memory buffer.
class MemSource : public ByteSource {
 public:
  explicit MemSource(std::string_view d) : d_(d) {}
  Result<size_t> read(char* buf, size_t cap) override {
    size_t n = std::min(cap, d_.size() - pos_);
    if (n) std::memcpy(buf, d_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view d_;
  size_t pos_ = 0;
};

/// Replays `prefix` (bytes already consumed for sniffing), then the inner source.
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  Result<size_t> read(char* buf, size_t cap) override {
    if (pos_ < prefix_.size()) {
      size_t n = std::min(cap, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->read(buf, cap);
  }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

/// Inflates gzip data (one or more members) from an inner raw source.
class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(1 << 16) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;
  }
  ~GzipSource() override {
    if (ok_) inflateEnd(&z_);
  }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  Result<size_t> read(char* buf, size_t cap) override {
    if (!ok_) return Error::io(name_ + ": zlib initialisation failed");
    if (done_ || cap == 0) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(cap, 1u << 30));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0 && !eof_) {
        auto n = inner_->read(reinterpret_cast<char*>(in_.data()), in_.size());
        if (!n) return n.error();
        if (*n == 0) eof_ = true;
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(*n);
      }
      if (z_.avail_in == 0 && eof_) {
        if (!memberEnded_) return Error::invalid(name_ + ": truncated gzip data");
        done_ = true;
        break;
      }
      if (memberEnded_) {
        // Another member follows; skip trailing zero padding some tools write.
        if (z_.next_in[0] == 0) {
          ++z_.next_in;
          --z_.avail_in;
          continue;
        }
        if (inflateReset(&z_) != Z_OK) return Error::invalid(name_ + ": corrupt gzip data");
        memberEnded_ = false;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        memberEnded_ = true;
      } else if (rc == Z_BUF_ERROR) {
        if (z_.avail_in == 0 && eof_) return Error::invalid(name_ + ": truncated gzip data");
      } else if (rc != Z_OK) {
        return Error::invalid(name_ + ": corrupt gzip data (" + (z_.msg ? z_.msg : "inflate error") + ")");
      }
    }
    return static_cast<size_t>(reinterpret_cast<char*>(z_.next_out) - buf);
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  std::vector<unsigned char> in_;
  z_stream z_;
  bool ok_ = false;
  bool eof_ = false;
  bool memberEnded_ = false;
  bool done_ = false;
};

/// Sniffs the first bytes of `raw` and wraps it in a GzipSource when needed.
Result<std::unique_ptr<ByteSource>> wrap(std::unique_ptr<ByteSource> raw, const std::string& name) {
  std::string head(2, '\0');
  size_t got = 0;
  while (got < 2) {
    auto n = raw->read(head.data() + got, 2 - got);
    if (!n) return n.error();
    if (*n == 0) break;
    got += *n;
  }
  head.resize(got);
  auto prefixed = std::make_unique<PrefixedSource>(head, std::move(raw));
  if (isGzipMagic(head)) return std::unique_ptr<ByteSource>(std::make_unique<GzipSource>(std::move(prefixed), name));
  return std::unique_ptr<ByteSource>(std::move(prefixed));
}

Result<std::string> drain(ByteSource& src, size_t maxBytes, const std::string& name) {
  std::string out;
  size_t chunk = 1 << 20;
  while (true) {
    size_t old = out.size();
    if (old >= maxBytes + 1) return Error::invalid(name + ": content larger than the limit");
    out.resize(old + chunk);
    auto n = src.read(out.data() + old, chunk);
    if (!n) return n.error();
    out.resize(old + *n);
    if (*n == 0) break;
    if (chunk < (size_t{64} << 20)) chunk *= 2;
  }
  if (out.size() > maxBytes) return Error::invalid(name + ": content larger than the limit");
  return out;
}

}  // namespace

Result<std::unique_ptr<ByteSource>> openMaybeGzip(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error::invalid(path.string() + ": is a directory");
  auto fd = openRegularFile(path);  // a FIFO or device would block the reader
  if (!fd) return fd.error();
  std::FILE* f = ::fdopen(*fd, "rb");
  if (!f) {
    ::close(*fd);
    return Error::io(path.string() + ": cannot open (" + std::strerror(errno) + ")");
  }
  return wrap(std::make_unique<FileSource>(f, path.string()), path.string());
}

std::unique_ptr<ByteSource> memorySource(std::string_view data) {
  auto raw = std::make_unique<MemSource>(data);
  if (isGzipMagic(data)) return std::make_unique<GzipSource>(std::move(raw), "gzip data");
  return raw;
}

Result<std::string> readMaybeGzipFile(const std::filesystem::path& path, size_t maxBytes) {
  auto src = openMaybeGzip(path);
  if (!src) return src.error();
  return drain(**src, maxBytes, path.string());
}

Result<std::string> gunzip(std::string_view data, size_t maxBytes) {
  auto src = memorySource(data);
  return drain(*src, maxBytes, "gzip data");
}

}  // namespace kl
