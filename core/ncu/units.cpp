#include "core/ncu/units.h"

#include <cctype>
#include <cstdlib>
#include <string>

namespace kl::ncu {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "1,234,567" style: first group 1-3 digits, then groups of exactly 3.
bool groupedInteger(std::string_view s, char sep) {
  size_t first = s.find(sep);
  if (first == std::string_view::npos || first == 0 || first > 3) return false;
  if (!allDigits(s.substr(0, first))) return false;
  size_t i = first;
  while (i < s.size()) {
    if (s[i] != sep || i + 4 > s.size() || !allDigits(s.substr(i + 1, 3))) return false;
    i += 4;
  }
  return true;
}

std::optional<double> strictStrtod(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// Prefix letter -> factor (decimal, as ncu prints byte prefixes).
double siFactor(char p) {
  switch (p) {
    case 'K':
    case 'k': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
  }
}

std::optional<double> timeToNs(std::string_view u) {
  if (u == "nsecond" || u == "ns") return 1.0;
  if (u == "usecond" || u == "us") return 1e3;
  if (u == "msecond" || u == "ms") return 1e6;
  if (u == "second" || u == "s" || u == "sec") return 1e9;
  return std::nullopt;
}

std::optional<double> timeToSeconds(std::string_view u) {
  if (auto ns = timeToNs(u)) return *ns * 1e-9;
  return std::nullopt;
}

}  // namespace

std::optional<double> parseNumber(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty() || s == "n/a" || s == "N/A" || s == "-") return std::nullopt;
  bool neg = false;
  if (s.front() == '-' || s.front() == '+') {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::string cleaned;
  size_t comma = s.find(',');
  size_t dots = 0;
  for (char c : s) dots += c == '.';
  if (comma != std::string_view::npos) {
    // "1,234" or "1,234.5": thousands separators.
    size_t dot = s.find('.');
    std::string_view intPart = dot == std::string_view::npos ? s : s.substr(0, dot);
    std::string_view frac = dot == std::string_view::npos ? std::string_view{} : s.substr(dot);
    if (groupedInteger(intPart, ',') && (frac.empty() || allDigits(frac.substr(1)))) {
      for (char c : intPart)
        if (c != ',') cleaned.push_back(c);
      cleaned += frac;
    } else {
      // European: "1.234,5" or "12,5".
      std::string_view ip = s.substr(0, comma);
      std::string_view fp = s.substr(comma + 1);
      if (!allDigits(fp)) return std::nullopt;
      if (ip.find('.') != std::string_view::npos) {
        if (!groupedInteger(ip, '.')) return std::nullopt;
      } else if (!allDigits(ip)) {
        return std::nullopt;
      }
      for (char c : ip)
        if (c != '.') cleaned.push_back(c);
      cleaned += '.';
      cleaned += fp;
    }
  } else if (dots >= 2) {
    // European thousands: "27.595.520".
    if (!groupedInteger(s, '.')) return std::nullopt;
    for (char c : s)
      if (c != '.') cleaned.push_back(c);
  } else {
    for (char c : s)
      if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
        return std::nullopt;
    cleaned = std::string(s);
  }
  auto v = strictStrtod(cleaned);
  if (!v) return std::nullopt;
  return neg ? -*v : *v;
}

UnitScale normaliseUnit(std::string_view unitIn) {
  std::string_view u = trim(unitIn);
  if (u.empty()) return {"", 1, true};
  if (u == "%") return {"%", 1, true};
  if (auto ns = timeToNs(u)) return {"ns", *ns, true};
  // Frequencies.
  if (u == "hz" || u == "Hz") return {"Hz", 1, true};
  if (u.size() == 3 && (u.substr(1) == "hz" || u.substr(1) == "Hz") && siFactor(u[0]) > 0)
    return {"Hz", siFactor(u[0]), true};
  // Ratios "<num>/<den>".
  if (size_t slash = u.find('/'); slash != std::string_view::npos) {
    std::string_view num = u.substr(0, slash), den = u.substr(slash + 1);
    if (auto d = timeToSeconds(den)) {
      // per time: rates.
      UnitScale n = normaliseUnit(num);
      if (num == "cycle") return {"Hz", 1.0 / *d, true};
      if (n.known && n.base == "byte") return {"byte/s", n.factor / *d, true};
      if (n.known) return {n.base + "/s", n.factor / *d, true};
      return {std::string(u), 1, false};
    }
    UnitScale n = normaliseUnit(num);
    if (n.known && !n.base.empty()) return {n.base + "/" + std::string(den), n.factor, true};
    return {std::string(u), 1, false};
  }
  static const char* kCountable[] = {"byte",   "cycle",   "inst",     "warp", "thread", "block",
                                     "sector", "request", "register", "SM",   "cluster"};
  for (const char* base : kCountable) {
    std::string_view b = base;
    if (u == b) return {std::string(b), 1, true};
    if (u.size() == b.size() + 1 && u.substr(1) == b && siFactor(u[0]) > 0)
      return {std::string(b), siFactor(u[0]), true};
  }
  return {std::string(u), 1, false};
}

}  // namespace kl::ncu
