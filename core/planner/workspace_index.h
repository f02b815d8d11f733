// WorkspaceIndex: the Python files of a workspace as the planner sees them — parsed lazily through
// tree-sitter (core/python), each file's ORIGINAL text (kernlens ranges stripped, so lines match
// range names), and import resolution from dotted module names to workspace files.
//
// Module search: a dotted name `a.b` is looked up as <root>/a/b.py or <root>/a/b/__init__.py for
// each search root, in order: the importing file's directory (script-style imports), the extra
// roots (the entry script's directory: Python's sys.path[0]), the workspace root. Relative
// imports (`.x`, `..x`) are resolved against the importing file's package directory. Only files
// under the workspace root are ever returned. Not thread-safe (the loop owns one).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/python/source_file.h"
#include "core/support/result.h"

namespace kl::planner {

/// A function in the workspace: file + qualname (+ def line, 0-based, to pick among redefinitions).
struct FunctionRef {
  std::string path;      // workspace-relative, '/'-separated
  std::string qualName;  // python::Function::qualName
  uint32_t defLine = 0;  // 0-based line of `def`
  friend bool operator==(const FunctionRef&, const FunctionRef&) = default;
  friend auto operator<=>(const FunctionRef&, const FunctionRef&) = default;
};

/// A class in the workspace.
struct ClassRef {
  std::string path;
  std::string qualName;
  friend bool operator==(const ClassRef&, const ClassRef&) = default;
  friend auto operator<=>(const ClassRef&, const ClassRef&) = default;
};

class WorkspaceIndex {
 public:
  /// `root` and `extraRoots` are absolute (relative paths are not resolved against the working
  /// directory).
  explicit WorkspaceIndex(std::filesystem::path root, std::vector<std::filesystem::path> extraRoots = {});

  const std::filesystem::path& root() const { return root_; }

  /// The parsed original text of `relPath`; Error::NotFound / Io / Invalid (outside the root).
  /// Cached; a file that failed once keeps failing with the same error.
  Result<python::SourceFilePtr> file(const std::string& relPath);

  /// Adds an in-memory file (tests, unsaved buffers): replaces any cached parse.
  Result<void> addFile(const std::string& relPath, std::string text);

  /// The workspace file a module import refers to, seen from `fromPath` (a workspace-relative
  /// file). `dotted` may be relative (".block", "..pkg.mod"). nullopt when not in the workspace.
  std::optional<std::string> moduleFile(std::string_view dotted, const std::string& fromPath);

  /// Splits an import target ("tinyformer.TinyFormer", ".block.Block") into the longest prefix
  /// that is a workspace module and the remaining attribute chain ("TinyFormer").
  std::optional<std::pair<std::string, std::string>> splitImport(std::string_view target, const std::string& fromPath);

  /// Workspace-relative path of an absolute or root-relative path; Error when outside the root.
  Result<std::string> relative(const std::filesystem::path& p) const;

  /// Every file parsed so far (relPath order).
  std::vector<std::string> loadedFiles() const;

 private:
  std::optional<std::string> probe(const std::filesystem::path& dir, std::string_view dotted);

  std::filesystem::path root_;
  std::vector<std::filesystem::path> extraRoots_;
  std::map<std::string, Result<python::SourceFilePtr>> files_;
};

/// The source text of a byte range.
inline std::string_view textOf(const python::SourceFile& f, python::ByteRange r) {
  return std::string_view(f.text()).substr(r.start, r.size());
}

}  // namespace kl::planner
