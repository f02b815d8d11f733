// The command line's spelling of a profile focus: "FILE::QUALNAME" (--focus) and "FILE:A-B"
// (--lines), and where a relative FILE is: under --root when it exists there, else under the
// current directory. The result is a planner::ProfileRequest's file (absolute) and function or
// lines; core never sees these strings nor the working directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/support/result.h"

namespace kl::cli {

struct FunctionSpec {
  std::string file;
  std::string qualName;
};
/// "FILE::QUALNAME" (the last "::" separates them). Error::Invalid naming the expected form.
Result<FunctionSpec> parseFunctionSpec(std::string_view spec);

struct LinesSpec {
  std::string file;
  uint32_t first = 0, last = 0;  // 1-based inclusive; "FILE:A" = one line
};
/// "FILE:A-B" with 1 <= A <= B. Error::Invalid naming the expected form.
Result<LinesSpec> parseLinesSpec(std::string_view spec);

/// A file named on the command line, made absolute: relative to `root` when it exists there, else
/// relative to the current directory.
std::filesystem::path resolveUserFile(const std::filesystem::path& root, const std::string& file);

}  // namespace kl::cli
