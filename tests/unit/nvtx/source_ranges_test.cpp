// NVTX ranges already in the source, in every spelling the model's facts resolve to an NVTX API.
#include "core/nvtx/source_ranges.h"

#include <doctest/doctest.h>

using namespace kl::python;
using kl::nvtx::SourceRange;
using kl::nvtx::sourceRanges;

namespace {

SourceFilePtr parse(std::string text) {
  auto r = SourceFile::parse(std::move(text));
  REQUIRE(r.ok());
  return *r;
}
uint32_t off(const SourceFile& f, std::string_view needle) {
  size_t p = f.text().find(needle);
  REQUIRE_MESSAGE(p != std::string::npos, needle);
  return static_cast<uint32_t>(p);
}
uint32_t endOf(const SourceFile& f, std::string_view needle) {
  return off(f, needle) + static_cast<uint32_t>(needle.size());
}

}  // namespace

TEST_CASE("existing NVTX ranges in every spelling") {
  auto f = parse(
      "import torch as th\n"                                     // 0
      "import torch.cuda.nvtx as tnv\n"                          // 1
      "import nvtx\n"                                            // 2
      "@nvtx.annotate(\"kl:m.py:4-6\", color=\"red\")\n"         // 3
      "def f():\n"                                               // 4
      "    with th.cuda.nvtx.range(\"user\"), open(p) as fh:\n"  // 5
      "        pass\n"                                           // 6
      "    with tnv.range(msg=f\"it{i}\") as r:\n"               // 7
      "        pass\n"                                           // 8
      "    with nvtx.annotate(message='kl:' 'x.py:9'):\n"        // 9
      "        pass\n"                                           // 10
      "    th.cuda.nvtx.range_push('outer')\n"                   // 11
      "    th.cuda.nvtx.range_push('inner')\n"                   // 12
      "    work()\n"                                             // 13
      "    th.cuda.nvtx.range_pop()\n"                           // 14
      "    nvtx.push_range('pkg')\n"                             // 15
      "    tnv.range_pop()\n"                                    // 16
      "    nvtx.pop_range()\n"                                   // 17
      "    with open(p): pass\n"                                 // 18
      "    with other.range('not nvtx'): pass\n"                 // 19
      "@nvtx.annotate\n"                                         // 20
      "def g(): pass\n");                                        // 21
  const Module& m = f->model();
  auto ranges = sourceRanges(*f);
  REQUIRE(ranges.size() == 8);
  const SourceRange& deco = ranges[0];
  CHECK(deco.kind == SourceRange::Kind::Decorator);
  CHECK(deco.api == "nvtx.annotate");
  CHECK(deco.name == std::string("kl:m.py:4-6"));
  CHECK(deco.function == m.findFunction("f"));
  CHECK(m.statements[deco.statement].lines == LineSpan{3, 19});

  const SourceRange& w1 = ranges[1];
  CHECK(w1.kind == SourceRange::Kind::With);
  CHECK(w1.api == "torch.cuda.nvtx.range");
  CHECK(w1.nameText == "\"user\"");
  CHECK(w1.name == std::string("user"));
  CHECK(w1.withItemCount == 2);
  CHECK(w1.itemBytes == ByteRange{off(*f, "th.cuda.nvtx.range(\"user\")"), endOf(*f, "(\"user\")")});
  CHECK(m.statements[w1.statement].lines == LineSpan{5, 6});

  const SourceRange& w2 = ranges[2];
  CHECK(w2.api == "torch.cuda.nvtx.range");
  CHECK(w2.nameText == "f\"it{i}\"");
  CHECK_FALSE(w2.name.has_value());
  CHECK(w2.withItemCount == 1);

  const SourceRange& w3 = ranges[3];
  CHECK(w3.api == "nvtx.annotate");
  CHECK(w3.name == std::string("kl:x.py:9"));

  // range_push/range_pop pairs matched in order (innermost first), per API family.
  const SourceRange& outer = ranges[4];
  const SourceRange& inner = ranges[5];
  CHECK(outer.kind == SourceRange::Kind::PushPop);
  CHECK(outer.name == std::string("outer"));
  CHECK(m.statements[outer.statement].lines.first == 11);
  CHECK(m.statements[outer.popStatement].lines.first == 16);
  CHECK(inner.name == std::string("inner"));
  CHECK(m.statements[inner.popStatement].lines.first == 14);
  CHECK(outer.bytes == ByteRange{off(*f, "th.cuda.nvtx.range_push('outer')"), endOf(*f, "tnv.range_pop()")});
  const SourceRange& pkg = ranges[6];
  CHECK(pkg.api == "nvtx.push_range");
  CHECK(m.statements[pkg.popStatement].lines.first == 17);
  // Bare @nvtx.annotate (no call) is a range too, with no name argument.
  const SourceRange& bare = ranges[7];
  CHECK(bare.kind == SourceRange::Kind::Decorator);
  CHECK(bare.function == m.findFunction("g"));
  CHECK(bare.nameText.empty());
  CHECK(bare.callBytes.empty());
  CHECK(bare.itemBytes == ByteRange{off(*f, "@nvtx.annotate\n"), endOf(*f, "@nvtx.annotate\n") - 1});

  // Without `import nvtx`, torch's module has no annotate: not a range.
  auto g = parse("from torch.cuda import nvtx\n@nvtx.annotate\ndef g(): pass\n");
  CHECK(sourceRanges(*g).empty());
}

TEST_CASE("an unmatched push is reported without a pop; an unmatched pop is ignored") {
  auto f = parse("import torch\ntorch.cuda.nvtx.range_pop()\ntorch.cuda.nvtx.range_push('a')\n");
  auto ranges = sourceRanges(*f);
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].popStatement == kNone);
  CHECK(ranges[0].name == std::string("a"));
}

TEST_CASE("the API is resolved through the imports, not matched by spelling") {
  auto f = parse(
      "from torch.cuda.nvtx import range as nrange, range_push as push, range_pop\n"
      "import contextlib as nvtx\n"
      "def f():\n"
      "    with nrange('aliased'):\n"  // 3: torch.cuda.nvtx.range under another name
      "        pass\n"
      "    push('p')\n"                 // 5
      "    range_pop()\n"               // 6
      "    with nvtx.nullcontext():\n"  // 7: not NVTX, whatever the module is called
      "        pass\n"
      "    with range(3):\n"  // 9: the builtin, not an import
      "        pass\n");
  const Module& m = f->model();
  auto ranges = sourceRanges(*f);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].kind == SourceRange::Kind::With);
  CHECK(ranges[0].api == "torch.cuda.nvtx.range");
  CHECK(ranges[0].name == std::string("aliased"));
  CHECK(ranges[1].kind == SourceRange::Kind::PushPop);
  CHECK(ranges[1].api == "torch.cuda.nvtx.range_push");
  CHECK(m.statements[ranges[1].popStatement].lines.first == 6);
}

TEST_CASE("CRLF and a UTF-8 BOM: the range's region ends before the line terminator") {
  std::string text =
      "\xEF\xBB\xBFimport torch\r\n"
      "def f():\r\n"
      "    with torch.cuda.nvtx.range(\"kl:a.py:2-3\"):\r\n"
      "        pass\r\n";
  auto f = parse(text);
  auto ranges = sourceRanges(*f);
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].name == std::string("kl:a.py:2-3"));
  CHECK(ranges[0].bytes.end == text.size() - 2);
}
