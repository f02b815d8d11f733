// Names of the NVTX ranges kernlens manages:
//   kl:<path relative to the workspace root>:<first line>-<last line>[:<label>]
// Lines are 1-based lines of the ORIGINAL (un-instrumented) file. The `kl:` prefix is how kernlens
// recognises its own ranges, in profiles and in source; any other range belongs to the user.
//
// Formatting and parsing are strict and inverse: parseName(formatName(n)) == n for every name
// formatName accepts. Paths use '/' separators, are relative, and never contain "", ".", ".."
// segments, ':', '\\' or control characters; labels are UTF-8 without control characters, '"'
// and '\\' (makeLabel() sanitises any text into one).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/nvtx/source_ranges.h"
#include "core/support/result.h"

namespace kl::nvtx {

inline constexpr std::string_view kNamePrefix = "kl:";

struct RangeName {
  std::string path;        // workspace-relative, '/'-separated
  uint32_t firstLine = 1;  // 1-based, inclusive
  uint32_t lastLine = 1;   // 1-based, inclusive, >= firstLine
  std::string label;       // may be empty (no label)
  friend bool operator==(const RangeName&, const RangeName&) = default;
};

/// Whether `name` carries the managed prefix (the cheap check; parseName validates the rest).
inline bool isManagedName(std::string_view name) { return name.substr(0, 3) == kNamePrefix; }
/// A range of the source whose name is a literal carrying the managed prefix (one kernlens placed).
inline bool isManaged(const SourceRange& r) { return r.name && isManagedName(*r.name); }

/// Validates a workspace-relative path for use in a name (see the file comment).
Result<void> checkRelativePath(std::string_view path);

/// "kl:path:first-last[:label]". Error::Invalid when the path or label is not acceptable or the
/// lines are not 1 <= first <= last.
Result<std::string> formatName(const RangeName& name);

/// Strict inverse of formatName: rejects a missing prefix, absolute paths, "..", empty or "."
/// segments, bad line numbers (signs, leading zeros, first > last, 0), an empty label.
Result<RangeName> parseName(std::string_view name);

/// Resolves a name's path against the workspace root (lexically; no file-system access).
/// Error::Invalid when the result would leave the root.
Result<std::filesystem::path> resolveInWorkspace(const std::filesystem::path& root, std::string_view relPath);

/// The workspace-relative '/'-separated path of `file` under `root` (absolute; a relative `file`
/// is relative to `root`, never to the working directory; both lexically normalised, symlinks
/// not resolved). Error::Invalid when `root` is relative or `file` is not under root.
Result<std::string> relativeToWorkspace(const std::filesystem::path& root, const std::filesystem::path& file);

/// A label from arbitrary source text: whitespace runs collapse to one space, control characters,
/// invalid UTF-8 and '"' '\\' become '?', trailing ':' and spaces are dropped, and the result is
/// cut to `maxLen` bytes (ending in "..." when cut).
std::string makeLabel(std::string_view text, size_t maxLen = 48);

/// A Python string literal (double-quoted) whose value is `value` (UTF-8): '"' and '\\' are
/// escaped, non-ASCII and control characters become \uXXXX / \UXXXXXXXX escapes, so the literal
/// means the same in a file of any source encoding.
std::string pythonLiteral(std::string_view value);

/// Decodes a Python string literal without prefix ('...' or "..." or triple-quoted) with the
/// escapes of a normal str literal. Error::Invalid for prefixes (f, b, r, u), bad escapes or
/// malformed quotes. Used to read managed names back from source.
Result<std::string> decodeLiteral(std::string_view literal);

}  // namespace kl::nvtx
