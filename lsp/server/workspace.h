// The workspace the client opened: its root directory, computed once when `initialize` arrives
// (Server::workspace()), and the mapping of document URIs to workspace-relative paths — the
// names results, NVTX ranges and profile requests use. Main loop state; copy it into background
// work.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kl::lsp {

struct InitializeParams;

class Workspace {
 public:
  Workspace() = default;
  /// A workspace rooted at `root` (made lexically normal); an empty path is no workspace.
  explicit Workspace(std::filesystem::path root);
  /// The root named by initialize: rootUri, else the first workspace folder, else rootPath — the
  /// first of them that names a local directory (a file: URI, see uri.h). No root when none does.
  static Workspace fromInitialize(const InitializeParams& params);

  /// Empty when the client opened no folder.
  const std::filesystem::path& root() const { return root_; }
  bool hasRoot() const { return !root_.empty(); }

  /// The workspace-relative path ('/'-separated) of a document URI; nullopt without a root, for
  /// a URI that is not a local file, or for a file outside the root.
  std::optional<std::string> relativePath(std::string_view uri) const;
  /// A path the user typed (a setting, a command argument): relative ones are taken against the
  /// root; unchanged without a root.
  std::filesystem::path resolve(const std::filesystem::path& path) const;

 private:
  std::filesystem::path root_;
};

}  // namespace kl::lsp
