#include "cli/focus_spec.h"

#include <system_error>

namespace kl::cli {

namespace fs = std::filesystem;

Result<FunctionSpec> parseFunctionSpec(std::string_view spec) {
  size_t sep = spec.rfind("::");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= spec.size())
    return Error::invalid("expected FILE::QUALNAME (e.g. model.py::Net.forward), got '" + std::string(spec) + "'");
  return FunctionSpec{std::string(spec.substr(0, sep)), std::string(spec.substr(sep + 2))};
}

Result<LinesSpec> parseLinesSpec(std::string_view spec) {
  auto bad = [&] {
    return Error::invalid("expected FILE:A-B with 1 <= A <= B (e.g. model.py:12-20), got '" + std::string(spec) + "'");
  };
  size_t sep = spec.rfind(':');
  if (sep == std::string_view::npos || sep == 0) return bad();
  std::string_view range = spec.substr(sep + 1);
  auto num = [](std::string_view s, uint32_t& out) {
    if (s.empty() || s.size() > 9) return false;
    uint32_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    out = v;
    return true;
  };
  LinesSpec l;
  l.file = std::string(spec.substr(0, sep));
  size_t dash = range.find('-');
  if (dash == std::string_view::npos) {
    if (!num(range, l.first)) return bad();
    l.last = l.first;
  } else if (!num(range.substr(0, dash), l.first) || !num(range.substr(dash + 1), l.last)) {
    return bad();
  }
  if (l.first == 0 || l.last < l.first) return bad();
  return l;
}

fs::path resolveUserFile(const fs::path& root, const std::string& file) {
  fs::path p(file);
  std::error_code ec;
  if (p.is_absolute()) return p.lexically_normal();
  if (fs::exists(root / p, ec)) return (root / p).lexically_normal();
  return fs::absolute(p, ec).lexically_normal();
}

}  // namespace kl::cli
