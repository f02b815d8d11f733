// Git provenance of a workspace through libgit2 (RAII handles): HEAD commit, branch, and whether
// the working tree has changes (untracked files ignored). A workspace that is not inside a git
// repository is fine: `isRepo` is false.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kl::store {

struct GitInfo {
  bool isRepo = false;
  std::string commit;  // 40 hex digits; "" when the repository has no commit yet
  std::string branch;  // "main"; "" when detached or unborn
  bool dirty = false;  // tracked files modified/staged/deleted
  std::string error;   // a non-fatal reason when libgit2 failed (provenance is best effort)
};

/// Provenance for `workspace` (searches parent directories for the repository).
GitInfo gitInfo(const std::filesystem::path& workspace);

/// Git's blob id of `bytes` (SHA-1 of "blob <size>\0<bytes>", 40 hex digits): the snapshot key.
std::string blobId(std::string_view bytes);

}  // namespace kl::store
