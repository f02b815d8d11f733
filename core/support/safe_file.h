// Reading files named by untrusted input (a profile's source paths, an editor's request) without
// leaving the workspace and without blocking: symlinks are resolved (realpath) and the target
// must stay under the workspace root; only regular files are read, opened O_NONBLOCK and checked
// with fstat, so a FIFO, device or socket is refused instead of hanging the reader.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kl {

/// `path` (absolute, or relative to `root`) with every symlink resolved; Error::Invalid when the
/// result is not under realpath(root) ("... resolves outside the workspace"), Error::NotFound
/// when it does not exist.
Result<std::filesystem::path> resolveInsideRoot(const std::filesystem::path& root, const std::filesystem::path& path);

/// Opens `path` for reading with O_NONBLOCK and returns the descriptor (blocking mode restored)
/// when it is a regular file; Error::Invalid for anything else ("not a regular file").
Result<int> openRegularFile(const std::filesystem::path& path);

/// The contents of a regular file, at most `maxBytes` (Error::Invalid beyond).
Result<std::string> readRegularFile(const std::filesystem::path& path, size_t maxBytes = size_t{64} << 20);

/// resolveInsideRoot + readRegularFile: a workspace file named by a profile or a request.
Result<std::string> readWorkspaceFile(const std::filesystem::path& root, std::string_view relPath,
                                      size_t maxBytes = size_t{64} << 20);

}  // namespace kl
