#include "core/nvtx/naming.h"

#include <charconv>
#include <cstdio>
#include <vector>

#include "core/support/utf8.h"

namespace kl::nvtx {
namespace {

bool isControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// Strict decimal: digits only, no leading zero, 1 <= value <= 10^9.
bool parseLine(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 10 || s[0] == '0') return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v > 1000000000ull) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

/// Valid UTF-8 without control characters, '"' or '\\'.
bool validLabel(std::string_view label) {
  for (size_t i = 0; i < label.size();) {
    unsigned char c = static_cast<unsigned char>(label[i]);
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') return false;
    uint32_t cp = 0;
    size_t n = utf8::decode(label, i, cp);
    if (n == 0 || (cp >= 0x80 && cp < 0xA0)) return false;
    i += n;
  }
  return true;
}

}  // namespace

Result<void> checkRelativePath(std::string_view path) {
  if (path.empty()) return Error::invalid("range name: empty path");
  if (path.front() == '/') return Error::invalid("range name: absolute path '" + std::string(path) + "'");
  for (unsigned char c : path) {
    if (isControl(c)) return Error::invalid("range name: control character in path");
    if (c == ':' || c == '\\')
      return Error::invalid("range name: path '" + std::string(path) + "' contains '" +
                            std::string(1, static_cast<char>(c)) + "'");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view seg = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.empty() || seg == "." || seg == "..")
      return Error::invalid("range name: path '" + std::string(path) + "' has a '" + std::string(seg) + "' segment");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

Result<std::string> formatName(const RangeName& n) {
  if (auto ok = checkRelativePath(n.path); !ok) return ok.error();
  if (n.firstLine == 0 || n.lastLine < n.firstLine || n.lastLine > 1000000000u)
    return Error::invalid("range name: bad line span " + std::to_string(n.firstLine) + "-" +
                          std::to_string(n.lastLine));
  if (!validLabel(n.label)) return Error::invalid("range name: label has characters not allowed");
  std::string out(kNamePrefix);
  out += n.path;
  out += ':' + std::to_string(n.firstLine) + '-' + std::to_string(n.lastLine);
  if (!n.label.empty()) out += ':' + n.label;
  return out;
}

Result<RangeName> parseName(std::string_view name) {
  auto bad = [&](std::string why) {
    return Error::invalid("not a kernlens range name '" + std::string(name.substr(0, 200)) + "': " + why);
  };
  if (!isManagedName(name)) return bad("missing 'kl:' prefix");
  std::string_view rest = name.substr(kNamePrefix.size());
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return bad("missing line span");
  RangeName out;
  out.path = std::string(rest.substr(0, colon));
  if (auto ok = checkRelativePath(out.path); !ok) return bad(ok.error().message);
  rest = rest.substr(colon + 1);
  size_t end = rest.find(':');
  std::string_view span = rest.substr(0, end);
  size_t dash = span.find('-');
  if (dash == std::string_view::npos) return bad("line span needs 'first-last'");
  if (!parseLine(span.substr(0, dash), out.firstLine) || !parseLine(span.substr(dash + 1), out.lastLine))
    return bad("bad line number");
  if (out.lastLine < out.firstLine) return bad("last line before first line");
  if (end != std::string_view::npos) {
    out.label = std::string(rest.substr(end + 1));
    if (out.label.empty()) return bad("empty label");
    if (!validLabel(out.label)) return bad("label has characters not allowed");
  }
  return out;
}

Result<std::filesystem::path> resolveInWorkspace(const std::filesystem::path& root, std::string_view relPath) {
  if (auto ok = checkRelativePath(relPath); !ok) return ok.error();
  std::filesystem::path base = root.lexically_normal();
  std::filesystem::path full = (base / std::filesystem::path(std::string(relPath))).lexically_normal();
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..")
    return Error::invalid("range name: '" + std::string(relPath) + "' is outside the workspace");
  return full;
}

Result<std::string> relativeToWorkspace(const std::filesystem::path& root, const std::filesystem::path& file) {
  if (!root.is_absolute()) return Error::invalid("the workspace root must be an absolute path, got " + root.string());
  auto absRoot = root.lexically_normal();
  auto absFile = (file.is_absolute() ? file : root / file).lexically_normal();
  auto rel = absFile.lexically_relative(absRoot);
  if (rel.empty() || *rel.begin() == ".." || rel == ".")
    return Error::invalid(file.string() + " is not inside the workspace root " + root.string());
  std::string s = rel.generic_string();
  if (auto ok = checkRelativePath(s); !ok) return ok.error();
  return s;
}

std::string makeLabel(std::string_view text, size_t maxLen) {
  std::string out;
  std::vector<size_t> charStarts;  // where each character of `out` starts
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
      ++i;
      continue;
    }
    if (space) {
      charStarts.push_back(out.size());
      out += ' ';
    }
    space = false;
    charStarts.push_back(out.size());
    uint32_t cp = 0;
    size_t n = c >= 0x80 ? utf8::decode(text, i, cp) : 1;
    if (n > 1 && cp >= 0xA0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    // '{' and '}' too: torch.cuda.nvtx.range(msg) runs msg.format(), which a brace breaks.
    out += (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '{' || c == '}') ? '?' : static_cast<char>(c);
    i += n == 0 ? 1 : n;
  }
  auto trimTail = [&] {
    while (!out.empty() && (out.back() == ':' || out.back() == ' ')) {
      out.pop_back();
      charStarts.pop_back();
    }
  };
  trimTail();
  if (maxLen >= 4 && out.size() > maxLen) {
    size_t cut = 0;
    for (size_t s : charStarts)
      if (s <= maxLen - 3) cut = s;
    out.resize(cut);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "...";
  }
  return out;
}

std::string pythonLiteral(std::string_view value) {
  std::string out = "\"";
  for (size_t i = 0; i < value.size();) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else {
      uint32_t cp = 0;
      size_t n = utf8::decode(value, i, cp);
      if (n == 0) {  // not UTF-8: keep the byte's value as a code point (latin-1 view)
        cp = c;
        n = 1;
      }
      char buf[16];
      if (cp < 0x10000)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
      i += n;
    }
  }
  out += '"';
  return out;
}

Result<std::string> decodeLiteral(std::string_view lit) {
  auto bad = [&](std::string why) { return Error::invalid("cannot read string literal: " + why); };
  if (lit.size() < 2) return bad("too short");
  char q = lit[0];
  if (q != '"' && q != '\'') return bad("prefixed or unquoted literal");
  size_t ql = (lit.size() >= 6 && lit[1] == q && lit[2] == q) ? 3 : 1;
  if (lit.size() < 2 * ql) return bad("unterminated");
  for (size_t k = 0; k < ql; ++k)
    if (lit[lit.size() - 1 - k] != q) return bad("unterminated");
  std::string_view body = lit.substr(ql, lit.size() - 2 * ql);
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      if (ql == 1 && (c == q || c == '\n')) return bad("unescaped quote or newline");
      out += c;
      continue;
    }
    if (++i >= body.size()) return bad("dangling backslash");
    char e = body[i];
    auto hex = [&](size_t n) -> Result<uint32_t> {
      uint32_t v = 0;
      for (size_t k = 1; k <= n; ++k) {
        if (i + k >= body.size()) return bad("short escape");
        char h = body[i + k];
        int d = (h >= '0' && h <= '9')   ? h - '0'
                : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                         : -1;
        if (d < 0) return bad("bad hex escape");
        v = v * 16 + static_cast<uint32_t>(d);
      }
      i += n;
      return v;
    };
    switch (e) {
      case '\n': break;  // line continuation
      case '\r':
        if (i + 1 < body.size() && body[i + 1] == '\n') ++i;
        break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': {
        auto v = hex(e == 'x' ? 2 : e == 'u' ? 4 : 8);
        if (!v) return v.error();
        if (*v > 0x10FFFF || (*v >= 0xD800 && *v <= 0xDFFF)) return bad("escape out of range");
        utf8::append(out, *v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
            v = v * 8 + static_cast<uint32_t>(body[++i] - '0');
          utf8::append(out, v);
        } else {
          out += '\\';  // unknown escapes keep the backslash, as Python does
          out += e;
        }
    }
  }
  return out;
}

}  // namespace kl::nvtx
