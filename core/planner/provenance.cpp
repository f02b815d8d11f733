#include "core/planner/provenance.h"

#include <algorithm>
#include <cctype>

namespace kl::planner {

namespace {

std::vector<std::string_view> splitLines(std::string_view t) {
  std::vector<std::string_view> out;
  size_t s = 0;
  while (s <= t.size()) {
    size_t e = t.find('\n', s);
    if (e == std::string_view::npos) e = t.size();
    std::string_view l = t.substr(s, e - s);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    if (e == t.size()) break;
    s = e + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// "[a, b, c]" at `from` -> {a, b, c}.
std::vector<std::string> bracketList(std::string_view s, size_t from) {
  std::vector<std::string> out;
  size_t open = s.find('[', from), close = s.find(']', open == std::string_view::npos ? from : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return out;
  std::string_view body = s.substr(open + 1, close - open - 1);
  size_t i = 0;
  while (i <= body.size()) {
    size_t c = body.find(',', i);
    if (c == std::string_view::npos) c = body.size();
    auto item = trim(body.substr(i, c - i));
    if (!item.empty()) out.emplace_back(item);
    i = c + 1;
  }
  return out;
}

bool isIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::map<std::string, KernelOrigin> parseInductorOutputCode(std::string_view text) {
  std::map<std::string, KernelOrigin> out;
  KernelOrigin pending;
  bool havePending = false;
  for (auto line : splitLines(text)) {
    auto t = trim(line);
    for (std::string_view tag :
         {std::string_view("# Topologically Sorted Source Nodes:"), std::string_view("# Source Nodes:")}) {
      if (t.substr(0, tag.size()) == tag) {
        pending = KernelOrigin{};
        pending.sourceNodes = bracketList(t, tag.size());
        size_t aten = t.find("Original ATen:");
        if (aten != std::string_view::npos) pending.atenOps = bracketList(t, aten);
        havePending = !pending.sourceNodes.empty();
        break;
      }
    }
    // A kernel definition: NAME = async_compile.triton('NAME', ... (also cpp/other backends).
    size_t eq = t.find(" = async_compile.");
    if (eq != std::string_view::npos && havePending) {
      std::string name(t.substr(0, eq));
      bool ident = !name.empty() && std::all_of(name.begin(), name.end(), isIdent);
      if (ident) {
        auto& o = out[name];
        if (o.sourceNodes.empty()) o = pending;
      }
      havePending = false;
    }
  }
  return out;
}

std::map<std::string, NodeLocation> parseFxGraphLocations(std::string_view text) {
  std::map<std::string, NodeLocation> out;
  NodeLocation cur;
  bool have = false;
  for (auto line : splitLines(text)) {
    auto t = trim(line);
    static constexpr std::string_view kFile = "# File: ";
    if (t.substr(0, kFile.size()) == kFile) {
      // # File: /abs/model.py:20 in forward, code: h = F.relu(self.fc1(x))
      std::string_view rest = t.substr(kFile.size());
      size_t in = rest.find(" in ");
      if (in == std::string_view::npos) continue;
      std::string_view loc = rest.substr(0, in);
      size_t colon = loc.rfind(':');
      if (colon == std::string_view::npos) continue;
      uint32_t ln = 0;
      bool ok = colon + 1 < loc.size();
      for (char c : loc.substr(colon + 1)) {
        if (c < '0' || c > '9')
          ok = false;
        else
          ln = ln * 10 + static_cast<uint32_t>(c - '0');
      }
      if (!ok || ln == 0) continue;
      cur = NodeLocation{};
      cur.file = std::string(loc.substr(0, colon));
      cur.line = ln;
      std::string_view after = rest.substr(in + 4);
      size_t comma = after.find(", code: ");
      cur.function = std::string(after.substr(0, comma));
      if (comma != std::string_view::npos) cur.code = std::string(after.substr(comma + 8));
      have = true;
      continue;
    }
    if (!have || t.empty() || t[0] == '#') continue;
    // NODE: "type" = ...   or   NODE = ...
    size_t n = 0;
    while (n < t.size() && isIdent(t[n])) ++n;
    if (n == 0 || n >= t.size()) continue;
    std::string_view after = trim(t.substr(n));
    if (after.empty() || (after[0] != ':' && after[0] != '=')) continue;
    if (after[0] == '=' && after.size() > 1 && after[1] == '=') continue;
    out.emplace(std::string(t.substr(0, n)), cur);
  }
  return out;
}

std::vector<KernelProvenance> joinProvenance(const std::map<std::string, KernelOrigin>& kernels,
                                             const std::map<std::string, NodeLocation>& nodes) {
  std::vector<KernelProvenance> out;
  for (const auto& [k, origin] : kernels) {
    KernelProvenance p;
    p.kernel = k;
    for (const auto& n : origin.sourceNodes) {
      auto it = nodes.find(n);
      if (it == nodes.end()) continue;
      bool dup = std::any_of(p.lines.begin(), p.lines.end(), [&](const NodeLocation& l) {
        return l.file == it->second.file && l.line == it->second.line;
      });
      if (!dup) p.lines.push_back(it->second);
    }
    if (!p.lines.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kl::planner
