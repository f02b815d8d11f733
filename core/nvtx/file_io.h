// File I/O for the annotation commands: whole-file reads and atomic replacement (a temporary
// file in the same directory, fsync, rename), so an interrupted write never leaves a half-written
// user file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kl::nvtx {

/// The bytes of `path`; Error::Io naming the file when it cannot be read.
Result<std::string> readWholeFile(const std::filesystem::path& path);

/// Replaces `path` with `content` atomically. An existing file keeps its permission bits. On any
/// failure the temporary file is removed and `path` is unchanged.
Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view content);

}  // namespace kl::nvtx
