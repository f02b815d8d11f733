// Matching paths recorded in a profile ("/home/u/proj/model.py", "model.py", a kl: range's
// workspace-relative path from another checkout) to files of THIS workspace, by the longest
// common suffix of path components.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::results {

/// Workspace-relative '/'-separated paths of the Python files under `root` (skips hidden
/// directories, node_modules, __pycache__, build*/ and .kernlens/; stops after `limit` files).
std::vector<std::string> scanPythonFiles(const std::filesystem::path& root, size_t limit = 20000);

class PathMatcher {
 public:
  /// `candidates`: workspace-relative paths ('/'-separated).
  explicit PathMatcher(std::vector<std::string> candidates);
  /// The candidate sharing the most trailing components with `recorded` ('/' or '\\'
  /// separated, absolute or relative; "./" and empty segments ignored). At least the file name
  /// must match; a tie between several best candidates is ambiguous → nullopt. An exact match of
  /// the whole relative path always wins.
  std::optional<std::string> match(std::string_view recorded) const;
  const std::vector<std::string>& candidates() const { return candidates_; }

 private:
  std::vector<std::string> candidates_;
  std::vector<std::vector<std::string>> parts_;  // per candidate, components reversed
};

/// Components of a path split on '/' and '\\', without empty and "." segments.
std::vector<std::string> pathComponents(std::string_view path);

}  // namespace kl::results
