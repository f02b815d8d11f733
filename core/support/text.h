#pragma once
// Small ASCII text predicates shared by the readers (names from profiles, SQL identifiers).

#include <algorithm>
#include <cctype>
#include <string_view>

namespace kl::support {

/// True when `needle` occurs in `hay`, comparing ASCII letters without case.
inline bool icontains(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

/// True when `a` and `b` are equal, comparing ASCII letters without case.
inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace kl::support
