// Overlay: the instrumented copies of the workspace files a profiling run uses. The runner
// serves `text` in place of the file on disk (the probe's import hook); the user's files are never
// written. Each file carries the map from instrumented lines back to original lines and the
// requests that reproduce it (what keep() needs to turn the run's annotations into an edit).
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/nvtx/engine.h"

namespace kl::nvtx {

/// "Wrap these statement sets / these function bodies in file F": one entry per file.
struct FilePlan {
  std::string relPath;               // workspace-relative, '/'-separated
  std::vector<RangeRequest> ranges;  // lines of the file as it is on disk
};

struct OverlayFile {
  std::string relPath;
  std::string original;                // strip(file on disk): what the names' lines refer to
  std::string text;                    // instrumented text to serve
  LineMap lines;                       // instrumented line -> original line
  std::vector<PlacedRange> ranges;     // every managed range in `text` (kept ones included)
  std::vector<RangeRequest> requests;  // reproduce `text` from `original`
  std::vector<Skipped> skipped;
  /// Original lines -> lines of the file on disk (differs only when the file on disk already
  /// holds kept kernlens ranges).
  LineMap diskLines;  // disk line -> original line
};

struct Overlay {
  std::map<std::string, OverlayFile> files;  // by relPath
  const OverlayFile* find(const std::string& relPath) const {
    auto it = files.find(relPath);
    return it == files.end() ? nullptr : &it->second;
  }
};

struct OverlayOptions {
  bool skipUnwrappable = true;  // a request that cannot be placed is reported, not fatal
  bool verify = true;
};

/// Instruments one file given as text (as on disk; kept kernlens ranges are stripped first and
/// re-applied with the new ones).
Result<OverlayFile> instrumentFile(std::string relPath, std::string diskText, std::span<const RangeRequest> requests,
                                   const OverlayOptions& options = {});

/// Reads every planned file under `root` and instruments it. Errors name the file: unreadable,
/// outside the workspace, syntax errors, or (with skipUnwrappable off) an unplaceable request.
Result<Overlay> buildOverlay(const std::filesystem::path& root, std::span<const FilePlan> plan,
                             const OverlayOptions& options = {});

}  // namespace kl::nvtx
