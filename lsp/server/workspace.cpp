#include "lsp/server/workspace.h"

#include "core/nvtx/naming.h"
#include "lsp/protocol/protocol.h"
#include "lsp/server/uri.h"

namespace kl::lsp {

namespace fs = std::filesystem;

Workspace::Workspace(fs::path root) : root_(root.empty() ? fs::path() : root.lexically_normal()) {}

Workspace Workspace::fromInitialize(const InitializeParams& params) {
  std::optional<fs::path> root;
  if (params.rootUri) root = uriToPath(*params.rootUri);
  if (!root && !params.workspaceFolders.empty()) root = uriToPath(params.workspaceFolders.front());
  if (!root && params.rootPath && !params.rootPath->empty()) root = fs::path(*params.rootPath);
  return Workspace(root.value_or(fs::path()));
}

std::optional<std::string> Workspace::relativePath(std::string_view uri) const {
  if (root_.empty()) return std::nullopt;
  auto path = uriToPath(uri);
  if (!path) return std::nullopt;
  auto rel = nvtx::relativeToWorkspace(root_, *path);
  if (!rel) return std::nullopt;
  return *rel;
}

fs::path Workspace::resolve(const fs::path& path) const {
  if (path.is_relative() && !root_.empty()) return root_ / path;
  return path;
}

}  // namespace kl::lsp
