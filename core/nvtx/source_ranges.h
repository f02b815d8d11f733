// The NVTX ranges already in a Python file, derived from the source model's generic facts (with
// items, decorators, call statements — core/python knows no NVTX API; this file owns the list).
//
// Recognised after resolving the callee through the file's imports (`import torch as th`,
// `from torch.cuda import nvtx`, `import torch.cuda.nvtx as nvtx`, `import nvtx`,
// `from torch.cuda.nvtx import range`):
//   - a `with` item (any position in a multi-item `with`, `as x` allowed) calling
//     torch.cuda.nvtx.range, nvtx.annotate or nvtx.range;
//   - a decorator on a def or class, with or without a call (`@nvtx.annotate`), of the same APIs;
//   - push/pop call statements (torch.cuda.nvtx.range_push / range_pop, nvtx.push_range /
//     pop_range), paired last-in-first-out within one block, per family (torch / nvtx package).
// The name is the first positional argument, else `msg=` / `message=`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/python/source_file.h"

namespace kl::nvtx {

struct SourceRange {
  enum class Kind {
    With,       // with <api>(name): ...
    Decorator,  // @<api>(name) on a def (or a class)
    PushPop,    // <push>(name) ... <pop>() in the same block
  };
  Kind kind = Kind::With;
  /// Canonical API after resolving imports: "torch.cuda.nvtx.range", "torch.cuda.nvtx.range_push",
  /// "nvtx.annotate", "nvtx.push_range", ...
  std::string api;
  std::string nameText;                  // source text of the name argument ("" when there is none)
  std::optional<std::string> name;       // its value when it is a plain string literal
  int32_t statement = python::kNone;     // With: the with-statement; Decorator: the def statement;
                                         // PushPop: the push statement
  int32_t popStatement = python::kNone;  // PushPop: the matching pop statement (kNone if unmatched)
  int32_t function = python::kNone;      // Decorator: the decorated function (kNone for a class)
  python::ByteRange callBytes;           // the range(...)/annotate(...)/push call (empty for a bare
                                         // decorator)
  python::ByteRange itemBytes;           // With: the with_item; Decorator: the decorator (with '@');
                                         // PushPop: the push call
  python::ByteRange bytes;               // the region it covers: whole with-statement, decorated
                                         // definition, or push statement start .. pop statement end
  uint32_t withItemCount = 0;            // With: number of items in the with-statement
};

/// The NVTX ranges of `f`, in source order (by region start, then item start). An unmatched push
/// has popStatement == kNone; an unmatched pop is not a range.
std::vector<SourceRange> sourceRanges(const python::SourceFile& f);

}  // namespace kl::nvtx
