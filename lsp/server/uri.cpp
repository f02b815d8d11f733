#include "lsp/server/uri.h"

namespace kl::lsp {

namespace fs = std::filesystem;

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

bool equalsNoCase(std::string_view s, std::string_view lower) {
  return s.size() == lower.size() && startsWithNoCase(s, lower);
}

}  // namespace

std::optional<fs::path> uriToPath(std::string_view uri) {
  if (!startsWithNoCase(uri, "file:")) return std::nullopt;
  std::string_view rest = uri.substr(5);
  if (size_t end = rest.find_first_of("?#"); end != std::string_view::npos) rest = rest.substr(0, end);
  if (rest.substr(0, 2) == "//") {  // an authority: empty or localhost
    rest = rest.substr(2);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && !equalsNoCase(host, "localhost")) return std::nullopt;
    rest = rest.substr(slash);
  }
  if (rest.empty() || rest[0] != '/') return std::nullopt;
  std::string out;
  out.reserve(rest.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      out += rest[i];
      continue;
    }
    if (i + 2 >= rest.size()) return std::nullopt;
    int hi = hexValue(rest[i + 1]), lo = hexValue(rest[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0' || c == '/') return std::nullopt;  // would change what the path names
    out += c;
    i += 2;
  }
  return fs::path(out);
}

std::string pathToUri(const fs::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s = path.generic_string();
  std::string out = "file://";
  out.reserve(out.size() + s.size());
  for (unsigned char c : s) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '-' ||
                 c == '_' || c == '.' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace kl::lsp
