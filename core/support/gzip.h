// gzip input: whole-file decompression and a streaming reader. Both accept plain
// (uncompressed) input transparently, so callers can detect formats by content.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kl {

/// True if `head` starts with the gzip magic bytes 1f 8b.
bool isGzipMagic(std::string_view head);

/// Reads a whole file, decompressing it if it is gzip (concatenated members are supported).
/// Fails with a one-line reason on I/O errors, truncated or corrupt gzip data, or when the
/// result would exceed `maxBytes`.
Result<std::string> readMaybeGzipFile(const std::filesystem::path& path, size_t maxBytes = size_t{64} << 30);
/// Decompresses an in-memory gzip buffer (or returns it unchanged if not gzip).
Result<std::string> gunzip(std::string_view data, size_t maxBytes = size_t{64} << 30);

/// Streaming reader: read() fills `buf` with up to `cap` bytes of (decompressed) content.
/// Returns 0 at end of input; an error for corrupt/truncated gzip or I/O failure.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual Result<size_t> read(char* buf, size_t cap) = 0;
};

/// Opens `path`; gzip content is decompressed on the fly.
Result<std::unique_ptr<ByteSource>> openMaybeGzip(const std::filesystem::path& path);
/// A source over memory (gzip or plain). The view must outlive the source.
std::unique_ptr<ByteSource> memorySource(std::string_view data);

}  // namespace kl
