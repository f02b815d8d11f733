#include "core/profile/kernel_name.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace kl::profile {
namespace {

bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

void replaceAll(std::string& s, std::string_view from, std::string_view to) {
  size_t p = 0;
  while ((p = s.find(from, p)) != std::string::npos) {
    s.replace(p, from.size(), to);
    p += to.size();
  }
}

// Is the '<' or '(' at i part of an operator name ("operator<", "operator()")?
bool afterOperator(std::string_view s, size_t i) {
  size_t j = i;
  while (j > 0 && s[j - 1] == ' ') --j;
  return j >= 8 && s.substr(j - 8, 8) == "operator";
}

// One spelling for the anonymous namespace: Kineto "(anonymous namespace)", nsys "<unnamed>",
// ncu "unnamed>" (ncu drops the '<'; "X<unnamed>::Y" in ncu output is X's template bracket).
std::string canonicalAnon(std::string s) {
  static const std::string kAnon = "(anonymous namespace)";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t p = s.find("unnamed>", i);
    if (p == std::string::npos) break;
    bool markerLt = p > 0 && s[p - 1] == '<' && !(p > 1 && identChar(s[p - 2]));
    out.append(s, i, (markerLt ? p - 1 : p) - i);
    out += kAnon;
    i = p + 8;
  }
  out.append(s, i, std::string::npos);
  return out;
}

}  // namespace

std::string demangle(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  std::string in(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(in.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return in;
  return std::string(out.get());
}

std::string displayName(std::string_view nameIn) {
  std::string full = canonicalAnon(demangle(nameIn));
  std::string_view s = trim(full);
  // The model's names of copies and graphs ("[CUDA memcpy HtoD]") are not signatures.
  if (s.starts_with('[')) return std::string(s);
  // Drop the trailing top-level parameter list: the '(' matching the final ')'. Only () and <>
  // count as brackets: ncu drops "const::[" from lambda names, leaving unbalanced ']'.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      else if (s[i] == '(' && --depth == 0) {
        if (i > 0 && !afterOperator(s, i)) s = trim(s.substr(0, i));
        break;
      }
    }
  }
  // Drop a leading return type: the text up to the last space at depth 0.
  int depth = 0;
  size_t lastSpace = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(') {
      if (c == '<' && afterOperator(s, i)) continue;
      ++depth;
    } else if (c == '>' || c == ')') {
      if (c == '>' && i > 0 && s[i - 1] == '-') continue;
      --depth;
    } else if (c == ' ' && depth == 0) {
      if (i >= 8 && s.substr(i - 8, 8) == "operator") continue;
      lastSpace = i;
    }
  }
  if (lastSpace != std::string_view::npos) s = trim(s.substr(lastSpace + 1));
  return std::string(s);
}

std::string baseName(std::string_view name) {
  std::string d = displayName(name);
  replaceAll(d, "(anonymous namespace)::", "");
  // Cut at the first '<' or '(' at depth 0 (the outermost template/parameter list).
  size_t cut = d.size();
  for (size_t i = 0; i < d.size(); ++i)
    if ((d[i] == '<' || d[i] == '(') && !afterOperator(d, i)) {
      cut = i;
      break;
    }
  std::string_view head = trim(std::string_view(d).substr(0, cut));
  // Last identifier: after the last "::".
  size_t colons = head.rfind("::");
  if (colons != std::string_view::npos) head = head.substr(colons + 2);
  return std::string(trim(head));
}

std::string informativeName(std::string_view name) {
  std::string d = displayName(name);
  std::string base = baseName(name);
  if (base == "Kernel2" || base == "Kernel" || base == "device_kernel" || base == "Kernel2_") {
    size_t lt = d.find('<');
    if (lt != std::string::npos) {
      int depth = 0;
      size_t i = lt + 1;
      for (; i < d.size(); ++i) {
        char c = d[i];
        if (c == '<' || c == '(')
          ++depth;
        else if (c == '>' || c == ')') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          break;
        }
      }
      std::string arg(trim(std::string_view(d).substr(lt + 1, i - lt - 1)));
      if (!arg.empty()) return baseName(arg);
    }
  }
  return base;
}

std::string normalizedKey(std::string_view name) {
  std::string s = displayName(name);
  replaceAll(s, "(anonymous namespace)::", "");
  // Cast literals "(int)4", "(unsigned long)2", "(bool)0" -> the literal.
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') {
      size_t close = s.find(')', i);
      if (close != std::string::npos && close + 1 < s.size() &&
          (std::isdigit(static_cast<unsigned char>(s[close + 1])) || s[close + 1] == '-')) {
        std::string_view inside = std::string_view(s).substr(i + 1, close - i - 1);
        bool typeName = !inside.empty();
        for (char c : inside)
          if (!(identChar(c) || c == ' ')) typeName = false;
        if (typeName) {
          i = close;
          continue;
        }
      }
    }
    out.push_back(s[i]);
  }
  // Remove qualifiers: an identifier immediately followed by "::".
  std::string noQual;
  for (size_t i = 0; i < out.size();) {
    if (identChar(out[i]) && (i == 0 || !identChar(out[i - 1]))) {
      size_t j = i;
      while (j < out.size() && identChar(out[j])) ++j;
      if (j + 1 < out.size() && out[j] == ':' && out[j + 1] == ':') {
        i = j + 2;
        continue;
      }
      std::string_view word = std::string_view(out).substr(i, j - i);
      if (word == "const") {
        i = j;
        continue;
      }
      if (word == "true")
        noQual += "1";
      else if (word == "false")
        noQual += "0";
      else
        noQual += word;
      i = j;
      continue;
    }
    noQual.push_back(out[i]);
    ++i;
  }
  std::string key;
  for (char c : noQual)
    if (c != ' ' && c != '[' && c != ']') key.push_back(c);
  return key;
}

}  // namespace kl::profile
