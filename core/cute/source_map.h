// Maps CUTE DSL region tags to their source from the Python model: the `TAG_X = n` constants and the
// `profile_region(buf, max_events, TAG_X, tid)` / `lane0_warp0_stop(buf, eid, TAG_X, tid,
// max_events)` / `region_end(buf, TAG_X, token, max_events)` call sites (the tag bare,
// `Int32(...)`-wrapped, an attribute or a literal); and the edit that times a selected block.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/cute/regions.h"
#include "core/python/model.h"
#include "core/python/source_file.h"
#include "core/python/text_edit.h"
#include "core/support/result.h"

namespace kl::cute {

struct TagConstant {
  std::string name;  // "TAG_LOAD"
  int64_t value = 0;
  uint32_t line = 0;  // 0-based
};

struct TagSite {
  /// The constant the call passes as its tag (`TAG_X` of `TAG_X`, `Int32(TAG_X)`, `mod.TAG_X`);
  /// for a literal tag the constant holding that value, else "tag_<id>".
  std::string constant;
  int64_t tag = -1;  // its value; -1 when no constant in the file defines it
  std::string api;   // "profile_region", "lane0_warp0_stop" or "region_end"
  uint32_t callLine = 0;
  /// Lines of the timed code (0-based, inclusive): the `with` body, or the statements between
  /// the matching lane0_warp0_start / region_start and the stop. first > last when empty.
  python::LineSpan region;
  /// Where the region starts: the `with` line or the lane0_warp0_start / region_start line (hint
  /// anchor).
  uint32_t anchorLine = 0;
  python::ByteRange anchorBytes;  // that statement's bytes
  std::string function;           // qualified name of the enclosing def ("" at module level)
};

struct CuteSourceMap {
  /// `TAG_X = n` assignments (any level), and module-level `NAME = n` passed as a site's tag.
  std::vector<TagConstant> constants;
  std::vector<TagSite> sites;
  std::vector<std::string> warnings;  // duplicate values, a TAG_ name with no constant...
  /// Names by value: names[v] = constant name; ids without a constant are "tag_<id>".
  TagTable tagTable() const;
};

CuteSourceMap mapCuteSource(const python::SourceFile& src);
/// Whether function `function` (a Module::functions index), or a function enclosing it, is a CUTE
/// DSL kernel: decorated `@cute.kernel` / `@cutlass.cute.kernel`, with or without arguments, also
/// under an import alias (`from cutlass import cute as ct` and `@ct.kernel`). False for kNone.
bool inCuteKernel(const python::Module& m, int32_t function);
Result<CuteSourceMap> mapCuteSourceFile(const std::filesystem::path& path);

/// The edits of the code action "Time this region inside the kernel": for the statements on
/// lines [firstLine, lastLine] (0-based; widened to whole statements of one block inside a def)
/// insert `eid_<label> = lane0_warp0_start(BUF, MAX)` before, `lane0_warp0_stop(BUF, eid_<label>,
/// Int32(TAG_<LABEL>), TID, MAX)` after, and `TAG_<LABEL> = <next free id>` after the last TAG_
/// constant (else before the kernel's def). BUF/MAX/TID are taken from an existing profiler call
/// in the same function, else `prof_buf`, `max_events`, `bidx`. Edits refer to the original text.
struct TimeRegionPlan {
  std::vector<python::TextEdit> edits;
  std::string constant;
  int64_t value = 0;
};
Result<TimeRegionPlan> planTimeRegion(const python::SourceFile& src, uint32_t firstLine, uint32_t lastLine,
                                      const std::string& label = "");

}  // namespace kl::cute
