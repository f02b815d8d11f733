// Internal: resolving a RangeRequest against a model into a run of sibling statements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/nvtx/engine.h"

namespace kl::nvtx::detail {

/// A request resolved on an original text.
struct Resolved {
  size_t request = 0;  // index into the request list
  RangeRequest::Kind kind = RangeRequest::Kind::Statements;
  int32_t block = 0;                  // python::Block index holding the run
  uint32_t first = 0, last = 0;       // positions in Block::statements (inclusive)
  bool inlineBody = false;            // FunctionBody of a one-line def
  uint32_t gapStart = 0, gapEnd = 0;  // inline: bytes between ':' and the first statement
  uint32_t startByte = 0;             // first statement start
  uint32_t endByte = 0;               // end of the last code token of the last statement
  uint32_t L1 = 0, L2 = 0;            // lines of startByte and endByte-1
  std::string indent;                 // non-inline: leading whitespace of line L1 (the block's)
  std::string unit;                   // indentation step added to the body
  std::string name;                   // full kl: name
  std::string qualName;               // FunctionBody
  std::optional<uint32_t> defLine;
};

/// Resolves one request. `why` receives nothing; errors are Error::Invalid / NotFound.
Result<Resolved> resolveRequest(const python::SourceFile& f, const RangeRequest& r, const std::string& relPath);

/// The statements of a resolved run grouped by logical line (`;`-joined statements together):
/// each group as [first, last] positions in the block.
std::vector<std::pair<uint32_t, uint32_t>> logicalGroups(const python::SourceFile& f, int32_t block, uint32_t first,
                                                         uint32_t last);

/// Whether statement `pos` of `block` starts its own logical line.
bool startsLogicalLine(const python::SourceFile& f, int32_t block, uint32_t pos);

}  // namespace kl::nvtx::detail
