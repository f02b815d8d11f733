#include "core/planner/workspace_index.h"

#include <system_error>

#include "core/nvtx/engine.h"
#include "core/nvtx/file_io.h"
#include "core/nvtx/naming.h"

namespace kl::planner {

namespace fs = std::filesystem;

WorkspaceIndex::WorkspaceIndex(fs::path root, std::vector<fs::path> extraRoots)
    : root_(std::move(root).lexically_normal()) {
  for (auto& r : extraRoots) extraRoots_.push_back(r.lexically_normal());
}

Result<std::string> WorkspaceIndex::relative(const fs::path& p) const {
  fs::path abs = p.is_absolute() ? p : root_ / p;
  return nvtx::relativeToWorkspace(root_, abs);
}

namespace {

Result<python::SourceFilePtr> parseOriginal(std::string text, const std::string& relPath) {
  auto parsed = python::SourceFile::parse(std::move(text));
  if (!parsed) return parsed.error();
  if ((*parsed)->text().find(nvtx::kNamePrefix) == std::string::npos) return parsed;
  // The file may hold kept kernlens ranges: range names refer to the stripped text.
  auto stripped = nvtx::strip(**parsed);
  if (!stripped) return Error::invalid(relPath + ": " + stripped.error().message);
  return python::SourceFile::parse(std::move(stripped->text));
}

}  // namespace

Result<python::SourceFilePtr> WorkspaceIndex::file(const std::string& relPath) {
  if (auto it = files_.find(relPath); it != files_.end()) return it->second;
  Result<python::SourceFilePtr> out = Error::internal("unset");
  if (auto ok = nvtx::checkRelativePath(relPath); !ok) {
    out = Error::invalid(relPath + ": " + ok.error().message);
  } else {
    auto text = nvtx::readWholeFile(root_ / relPath);
    out = text ? parseOriginal(std::move(*text), relPath) : Result<python::SourceFilePtr>(text.error());
  }
  files_.emplace(relPath, out);
  return out;
}

Result<void> WorkspaceIndex::addFile(const std::string& relPath, std::string text) {
  if (auto ok = nvtx::checkRelativePath(relPath); !ok) return ok.error();
  auto parsed = parseOriginal(std::move(text), relPath);
  if (!parsed) return parsed.error();
  files_.insert_or_assign(relPath, parsed);
  return {};
}

std::optional<std::string> WorkspaceIndex::probe(const fs::path& dir, std::string_view dotted) {
  fs::path p = dir;
  size_t i = 0;
  while (i <= dotted.size()) {
    size_t j = dotted.find('.', i);
    if (j == std::string_view::npos) j = dotted.size();
    if (j == i) return std::nullopt;
    p /= std::string(dotted.substr(i, j - i));
    i = j + 1;
  }
  for (const fs::path& cand : {fs::path(p.string() + ".py"), p / "__init__.py"}) {
    auto rel = relative(cand);
    if (!rel) continue;
    if (files_.count(*rel) && files_.at(*rel).ok()) return *rel;
    std::error_code ec;
    if (fs::is_regular_file(cand, ec)) return *rel;
  }
  return std::nullopt;
}

std::optional<std::string> WorkspaceIndex::moduleFile(std::string_view dotted, const std::string& fromPath) {
  fs::path fromDir = (root_ / fromPath).parent_path();
  if (!dotted.empty() && dotted[0] == '.') {
    size_t dots = 0;
    while (dots < dotted.size() && dotted[dots] == '.') ++dots;
    fs::path base = fromDir;
    for (size_t k = 1; k < dots; ++k) base = base.parent_path();
    std::string_view rest = dotted.substr(dots);
    if (rest.empty()) {
      auto rel = relative(base / "__init__.py");
      std::error_code ec;
      if (rel && fs::is_regular_file(base / "__init__.py", ec)) return *rel;
      return std::nullopt;
    }
    return probe(base, rest);
  }
  if (auto r = probe(fromDir, dotted)) return r;
  for (const auto& er : extraRoots_)
    if (auto r = probe(er, dotted)) return r;
  return probe(root_, dotted);
}

std::optional<std::pair<std::string, std::string>> WorkspaceIndex::splitImport(std::string_view target,
                                                                               const std::string& fromPath) {
  // Try the longest module prefix first: "a.b.C" -> module "a.b", attribute "C".
  std::string t(target);
  std::string rest;
  while (!t.empty()) {
    if (auto f = moduleFile(t, fromPath)) return std::make_pair(*f, rest);
    size_t dot = t.rfind('.');
    if (dot == std::string::npos) break;
    std::string tail = t.substr(dot + 1);
    rest = rest.empty() ? tail : tail + "." + rest;
    t = t.substr(0, dot);
    // "from . import x": target ".x" -> prefix "." is the package itself.
    if (!t.empty() && t.find_first_not_of('.') == std::string::npos) {
      if (auto f = moduleFile(t, fromPath)) return std::make_pair(*f, rest);
      break;
    }
  }
  return std::nullopt;
}

std::vector<std::string> WorkspaceIndex::loadedFiles() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : files_)
    if (v.ok()) out.push_back(k);
  return out;
}

}  // namespace kl::planner
