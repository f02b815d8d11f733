// Writes an nvtx::Overlay as the probe's overlay directory (docs/probe.md §2):
//   DIR/overlay.json  {"version": 1, "workspace": "<abs root>", "files": {"<rel>": "files/<rel>"}}
//   DIR/files/<rel>   the instrumented texts
// The user's files are never written.
#pragma once

#include <filesystem>

#include "core/nvtx/overlay.h"
#include "core/support/result.h"

namespace kl::runner {

Result<void> writeOverlayDir(const nvtx::Overlay& overlay, const std::filesystem::path& workspace,
                             const std::filesystem::path& dir);

}  // namespace kl::runner
