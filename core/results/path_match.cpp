#include "core/results/path_match.h"

#include <algorithm>
#include <system_error>

namespace kl::results {

namespace fs = std::filesystem;

std::vector<std::string> pathComponents(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find_first_of("/\\", i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (!part.empty() && part != ".") out.emplace_back(part);
    i = j + 1;
  }
  return out;
}

std::vector<std::string> scanPythonFiles(const fs::path& root, size_t limit) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    std::string name = p.filename().string();
    if (it->is_directory(ec)) {
      if (name.empty() || name[0] == '.' || name == "node_modules" || name == "__pycache__" ||
          name.rfind("build", 0) == 0)
        it.disable_recursion_pending();
      continue;
    }
    if (p.extension() != ".py") continue;
    out.push_back(p.lexically_relative(root).generic_string());
    if (out.size() >= limit) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

PathMatcher::PathMatcher(std::vector<std::string> candidates) : candidates_(std::move(candidates)) {
  parts_.reserve(candidates_.size());
  for (const auto& c : candidates_) {
    auto parts = pathComponents(c);
    std::reverse(parts.begin(), parts.end());
    parts_.push_back(std::move(parts));
  }
}

std::optional<std::string> PathMatcher::match(std::string_view recorded) const {
  auto rec = pathComponents(recorded);
  if (rec.empty()) return std::nullopt;
  std::reverse(rec.begin(), rec.end());
  size_t best = 0, bestCount = 0, bestIndex = 0;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const auto& c = parts_[i];
    size_t n = 0;
    while (n < c.size() && n < rec.size() && c[n] == rec[n]) ++n;
    if (n == 0) continue;
    if (n == c.size() && n == rec.size()) return candidates_[i];  // exact
    size_t score = 2 * n + (n == c.size() ? 1 : 0);               // a fully consumed candidate wins a tie
    if (score > best) {
      best = score;
      bestCount = 1;
      bestIndex = i;
    } else if (score == best) {
      ++bestCount;
    }
  }
  if (best == 0 || bestCount != 1) return std::nullopt;
  return candidates_[bestIndex];
}

}  // namespace kl::results
