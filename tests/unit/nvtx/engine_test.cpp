// Wrap / function body / strip / refine / keep / overlay: exact expected texts for every rule of
// docs/annotations.md, and the strip round trip for each.
#include "core/nvtx/engine.h"

#include <doctest/doctest.h>

#include "core/nvtx/file_io.h"
#include "core/nvtx/overlay.h"
#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::nvtx;

namespace {

python::SourceFilePtr parse(const std::string& s) {
  auto f = python::SourceFile::parse(s);
  REQUIRE(f.ok());
  return *f;
}

Result<Instrumented> inst(const std::string& src, std::vector<RangeRequest> reqs, bool skip = false) {
  Options o;
  o.relPath = "m.py";
  o.skipUnwrappable = skip;
  return instrument(*parse(src), reqs, o);
}

std::string stripped(const std::string& s) {
  auto r = strip(*parse(s));
  REQUIRE(r.ok());
  return r->text;
}

/// Instruments, checks the round trip, returns the text.
std::string wrap(const std::string& src, std::vector<RangeRequest> reqs) {
  auto r = inst(src, reqs);
  if (!r.ok()) FAIL_CHECK(r.error().message);
  REQUIRE(r.ok());
  CHECK_FALSE(parse(r->text)->hasErrors());
  CHECK(stripped(r->text) == src);
  std::string viaEdits = src;
  CHECK(python::applyEditsToOriginal(viaEdits, r->edits));
  CHECK(viaEdits == r->text);
  return r->text;
}

RangeRequest lines(uint32_t a, uint32_t b) { return RangeRequest::statements(a - 1, b - 1); }

}  // namespace

TEST_CASE("wrap statements: import after docstring and __future__, comments and blank lines kept") {
  std::string src =
      "\"\"\"Doc.\"\"\"\n"
      "from __future__ import annotations\n"
      "a = 1\n"
      "\n"
      "# note\n"
      "b = 2  # trailing\n"
      "c = 3\n";
  CHECK(wrap(src, {lines(3, 6)}) ==
        "\"\"\"Doc.\"\"\"\n"
        "from __future__ import annotations\n"
        "import torch  # kl:import\n"
        "with torch.cuda.nvtx.range(\"kl:m.py:3-6:a = 1 +1\"):\n"
        "    a = 1\n"
        "\n"
        "    # note\n"
        "    b = 2  # trailing\n"
        "c = 3\n");
}

TEST_CASE("the file's torch spelling is used") {
  CHECK(wrap("import torch as th\nx = th.ones(1)\n", {lines(2, 2)}) ==
        "import torch as th\nwith th.cuda.nvtx.range(\"kl:m.py:2-2:x = th.ones(1)\"):\n"
        "    x = th.ones(1)\n");
  CHECK(wrap("from torch.cuda import nvtx\nf()\n", {lines(2, 2)}) ==
        "from torch.cuda import nvtx\nwith nvtx.range(\"kl:m.py:2-2:f()\"):\n    f()\n");
  CHECK(wrap("import torch\ndef f():\n    g()\n", {RangeRequest::functionBody("f")}) ==
        "import torch\ndef f():\n    with torch.cuda.nvtx.range(\"kl:m.py:3-3:f\"):\n        g()\n");
  // An import that comes after the wrapped code is not usable there: kernlens adds its own.
  CHECK(wrap("f()\nimport torch\n", {lines(1, 1)}) ==
        "import torch  # kl:import\nwith torch.cuda.nvtx.range(\"kl:m.py:1-1:f()\"):\n    f()\nimport torch\n");
}

TEST_CASE("continuations, brackets and multi-line strings") {
  std::string src =
      "def f(a):\n"
      "    s = \"\"\"one\n"
      "  two\n"
      "three\"\"\"\n"
      "    t = 'x\\\n"
      "  y'\n"
      "    u = a + \\\n"
      "        1\n"
      "    v = [a,\n"
      "  a]\n"
      "    return s\n";
  CHECK(wrap(src, {RangeRequest::functionBody("f")}) ==
        "import torch  # kl:import\n"
        "def f(a):\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:2-11:f\"):\n"
        "        s = \"\"\"one\n"
        "  two\n"
        "three\"\"\"\n"
        "        t = 'x\\\n"
        "  y'\n"
        "        u = a + \\\n"
        "            1\n"
        "        v = [a,\n"
        "      a]\n"
        "        return s\n");
}

TEST_CASE("CRLF, BOM and tabs are kept") {
  std::string src =
      "\xEF\xBB\xBF"
      "def f():\r\n\tif x:\r\n\t\ty()\r\n";
  CHECK(wrap(src, {RangeRequest::functionBody("f")}) ==
        "\xEF\xBB\xBF"
        "import torch  # kl:import\r\ndef f():\r\n"
        "\twith torch.cuda.nvtx.range(\"kl:m.py:2-3:f\"):\r\n\t\tif x:\r\n\t\t\ty()\r\n");
  // BOM and a first-line statement: the import goes after the BOM.
  CHECK(wrap("\xEF\xBB\xBF"
             "x = 1\n",
             {lines(1, 1)}) ==
        "\xEF\xBB\xBF"
        "import torch  # kl:import\nwith torch.cuda.nvtx.range(\"kl:m.py:1-1:x = 1\"):\n    x = 1\n");
  // Two-space files keep two spaces.
  CHECK(wrap("def f():\n  a()\n  b()\n", {lines(3, 3)}) ==
        "import torch  # kl:import\ndef f():\n  a()\n  with torch.cuda.nvtx.range(\"kl:m.py:3-3:b()\"):\n    b()\n");
}

TEST_CASE("clauses widen to the whole compound statement") {
  std::string src =
      "import torch\n"
      "if a:\n"
      "    x()\n"
      "elif b:\n"
      "    y()\n"
      "else:\n"
      "    z()\n";
  std::string whole =
      "import torch\n"
      "with torch.cuda.nvtx.range(\"kl:m.py:2-7:if a\"):\n"
      "    if a:\n"
      "        x()\n"
      "    elif b:\n"
      "        y()\n"
      "    else:\n"
      "        z()\n";
  CHECK(wrap(src, {lines(4, 4)}) == whole);  // the elif line
  CHECK(wrap(src, {lines(6, 6)}) == whole);  // the else line
  CHECK(wrap(src, {lines(3, 5)}) == whole);  // across two bodies
  // Inside one body: only that body's statements.
  CHECK(wrap(src, {lines(7, 7)}) ==
        "import torch\nif a:\n    x()\nelif b:\n    y()\nelse:\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:7-7:z()\"):\n        z()\n");
  std::string trysrc = "import torch\ntry:\n    a()\nexcept E:\n    b()\nfinally:\n    c()\n";
  auto t = wrap(trysrc, {lines(4, 4)});
  CHECK(t.find("range(\"kl:m.py:2-7:try\"):\n    try:") != std::string::npos);
  std::string matchsrc = "import torch\nmatch v:\n    case 1:\n        a()\n    case _:\n        b()\n";
  CHECK(wrap(matchsrc, {lines(5, 5)}).find("\"kl:m.py:2-6:match v\"") != std::string::npos);
  CHECK(wrap(matchsrc, {lines(6, 6)}) ==
        "import torch\nmatch v:\n    case 1:\n        a()\n    case _:\n"
        "        with torch.cuda.nvtx.range(\"kl:m.py:6-6:b()\"):\n            b()\n");
}

TEST_CASE("semicolons, one-line bodies, docstrings and __future__") {
  // `;`-joined: the whole line.
  CHECK(wrap("import torch\na(); b(); c()\n", {lines(2, 2)}) ==
        "import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-2:a() +2\"):\n    a(); b(); c()\n");
  // The body of a one-line compound: the compound statement.
  CHECK(wrap("import torch\nif x: y()\n", {lines(2, 2)}) ==
        "import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-2:if x: y()\"):\n    if x: y()\n");
  CHECK(wrap("import torch\nfor i in r: a(); b()\n", {lines(2, 2)}).find("    for i in r: a(); b()\n") !=
        std::string::npos);
  // A backslash joining the header and the body is a one-line body too.
  CHECK(wrap("import torch\nif x: \\\n  y()\n", {lines(3, 3)}) ==
        "import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-3:if x: ?\"):\n  if x: \\\n    y()\n");
  // Docstrings and __future__ imports stay out of a selection...
  CHECK(wrap("\"\"\"d\"\"\"\nfrom __future__ import annotations\nx = 1\n", {lines(1, 3)}) ==
        "\"\"\"d\"\"\"\nfrom __future__ import annotations\nimport torch  # kl:import\n"
        "with torch.cuda.nvtx.range(\"kl:m.py:3-3:x = 1\"):\n    x = 1\n");
  // ...and a selection of only those is refused.
  auto r = inst("from __future__ import annotations\nx = 1\n", {lines(1, 1)});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("must stay first") != std::string::npos);
  auto joined = inst("from __future__ import annotations; import os\n", {lines(1, 1)});
  REQUIRE_FALSE(joined.ok());
  CHECK(joined.error().message.find("';'") != std::string::npos);
  CHECK_FALSE(inst("x = 1\n\n\n", {lines(2, 3)}).ok());  // blank lines only
  CHECK_FALSE(inst("x = 1\n", {lines(5, 5)}).ok());      // past the end
}

TEST_CASE("function bodies") {
  std::string src =
      "import torch\n"
      "@dec\n"
      "async def f(a):\n"
      "    \"\"\"Doc.\"\"\"\n"
      "    global G\n"
      "    nonlocal_ok = 1\n"
      "    yield a\n";
  CHECK(wrap(src, {RangeRequest::functionBody("f")}) ==
        "import torch\n@dec\nasync def f(a):\n    \"\"\"Doc.\"\"\"\n    global G\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:6-7:f\"):\n        nonlocal_ok = 1\n        yield a\n");
  // One-line bodies move to their own lines; strip restores the exact gap (here two spaces).
  CHECK(wrap("import torch\nclass C:\n    def m(self):  return g()\n", {RangeRequest::functionBody("C.m")}) ==
        "import torch\nclass C:\n    def m(self):\n"
        "        with torch.cuda.nvtx.range(\"kl:m.py:3-3:C.m\"):  # kl:inline=ss\n"
        "            return g()\n");
  CHECK(wrap("import torch\ndef f():\treturn 1\n", {RangeRequest::functionBody("f")}).find("# kl:inline=t\n") !=
        std::string::npos);
  // Nothing but a docstring: refused, and skipped in bulk mode.
  auto r = inst("def f():\n    \"\"\"Only doc.\"\"\"\n", {RangeRequest::functionBody("f")});
  REQUIRE_FALSE(r.ok());
  auto bulk = inst("def f():\n    \"\"\"Only doc.\"\"\"\ndef g(): \"doc\"\n",
                   {RangeRequest::functionBody("f"), RangeRequest::functionBody("g")}, true);
  REQUIRE(bulk.ok());
  CHECK(bulk->skipped.size() == 2);
  CHECK(bulk->text == "def f():\n    \"\"\"Only doc.\"\"\"\ndef g(): \"doc\"\n");
  CHECK(inst("def f(): pass\n", {RangeRequest::functionBody("nope")}).error().code == Error::Code::NotFound);
  // Redefinitions are picked by their def line.
  std::string props =
      "class K:\n    @property\n    def p(self):\n        return 1\n"
      "    @p.setter\n    def p(self, v):\n        pass\n";
  auto second = wrap(props, {RangeRequest::functionBody("K.p", 5)});
  CHECK(second.find("\"kl:m.py:7-7:K.p\"") != std::string::npos);
  CHECK(second.find("kl:m.py:4-4") == std::string::npos);
}

TEST_CASE("nested ranges, line map and placed ranges") {
  std::string src =
      "def f(x):\n"        // 1
      "    a = x\n"        // 2
      "    for i in x:\n"  // 3
      "        a += i\n"   // 4
      "    return a\n";    // 5
  auto r = inst(src, {RangeRequest::functionBody("f"), lines(3, 4), lines(4, 4)});
  REQUIRE(r.ok());
  CHECK(r->text ==
        "import torch  # kl:import\n"
        "def f(x):\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:2-5:f\"):\n"
        "        a = x\n"
        "        with torch.cuda.nvtx.range(\"kl:m.py:3-4:for i in x\"):\n"
        "            for i in x:\n"
        "                with torch.cuda.nvtx.range(\"kl:m.py:4-4:a += i\"):\n"
        "                    a += i\n"
        "        return a\n");
  CHECK(stripped(r->text) == src);
  std::vector<uint32_t> want{0, 0, 1, 1, 2, 2, 3, 3, 4, 5};
  CHECK(r->lines.toOriginal == want);
  std::vector<uint8_t> ins{1, 0, 1, 0, 1, 0, 1, 0, 0, 0};
  CHECK(r->lines.inserted == ins);
  REQUIRE(r->ranges.size() == 3);
  CHECK(r->ranges[0].kind == RangeRequest::Kind::FunctionBody);
  CHECK(r->ranges[0].instrumented == python::LineSpan{2, 8});
  CHECK(r->ranges[1].original == python::LineSpan{2, 3});
  CHECK(r->ranges[2].instrumented == python::LineSpan{6, 7});
  // Duplicates collapse; partial overlaps are refused.
  auto dup = inst(src, {lines(2, 2), lines(2, 2)});
  REQUIRE(dup.ok());
  CHECK(dup->ranges.size() == 1);
  auto overlap = inst(src, {lines(2, 3), lines(3, 5)});
  REQUIRE_FALSE(overlap.ok());
  CHECK(overlap.error().message.find("overlap") != std::string::npos);
}

TEST_CASE("refused inputs") {
  auto broken = inst("def f(:\n    pass\n", {lines(1, 1)});
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.find("syntax error") != std::string::npos);
  CHECK_FALSE(inst("x = 1\ry = 2\n", {lines(1, 1)}).ok());
  auto twice = inst("import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-2\"):\n    f()\n", {lines(2, 2)});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message.find("strip it first") != std::string::npos);
}

TEST_CASE("strip never touches user ranges and refuses edited managed ranges") {
  std::string user =
      "import torch\n"
      "with torch.cuda.nvtx.range(\"mine\"):\n"
      "    f()\n"
      "torch.cuda.nvtx.range_push(\"kl-looking but not managed\")\n"
      "torch.cuda.nvtx.range_pop()\n";
  auto s = strip(*parse(user));
  REQUIRE(s.ok());
  CHECK(s->text == user);
  CHECK(s->ranges.empty());
  // A user-written `import torch` (no marker) stays.
  CHECK(stripped("import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-2\"):\n    f()\n") == "import torch\nf()\n");
  auto edited = strip(*parse("import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:2-2\"):  # mine\n    f()\n"));
  REQUIRE_FALSE(edited.ok());
  CHECK(edited.error().message.find("line 2") != std::string::npos);
  CHECK_FALSE(strip(*parse("import torch\nwith torch.cuda.nvtx.range(\"kl:m.py:1-1\"), open(p):\n    f()\n")).ok());
}

TEST_CASE("annotate adds to an annotated file; refine; strip edit") {
  std::string src =
      "def f(x):\n"
      "    a = x\n"
      "    if a:\n"
      "        b = 1\n"
      "        c = 2\n"
      "    return a\n";
  Options o;
  o.relPath = "m.py";
  auto once = annotate(*parse(src), std::vector{RangeRequest::functionBody("f")}, o);
  REQUIRE(once.ok());
  REQUIRE(once->edits.size() == 1);
  std::string t1 = src;
  CHECK(python::applyEditsToOriginal(t1, once->edits));
  CHECK(t1 == once->newText);

  // Refine the function range: one range per top-level statement of the body.
  auto fileA = parse(once->newText);
  auto ref = refine(*fileA, 2, o);
  REQUIRE(ref.ok());
  CHECK(ref->newText ==
        "import torch  # kl:import\n"
        "def f(x):\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:2-2:a = x\"):\n"
        "        a = x\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:3-5:if a\"):\n"
        "        if a:\n"
        "            b = 1\n"
        "            c = 2\n"
        "    with torch.cuda.nvtx.range(\"kl:m.py:6-6:return a\"):\n"
        "        return a\n");
  // Refine the `if` range: ranges around the statements of its body.
  auto ref2 = refine(*parse(ref->newText), 5, o);
  REQUIRE(ref2.ok());
  CHECK(ref2->newText.find("    if a:\n        with torch.cuda.nvtx.range(\"kl:m.py:4-4:b = 1\"):\n") !=
        std::string::npos);
  CHECK(stripped(ref2->newText) == src);
  // A single simple statement has nothing finer.
  auto leaf = refine(*parse(ref->newText), 3, o);
  REQUIRE_FALSE(leaf.ok());
  CHECK(leaf.error().message.find("nothing finer") != std::string::npos);
  CHECK(refine(*parse(src), 1, o).error().code == Error::Code::NotFound);

  // annotate() takes lines of the annotated buffer (line 7 there is `b = 1`).
  auto more = annotate(*parse(ref->newText), std::vector{lines(7, 7)}, o);
  REQUIRE(more.ok());
  CHECK(more->newText.find("with torch.cuda.nvtx.range(\"kl:m.py:4-4:b = 1\")") != std::string::npos);
  CHECK(stripped(more->newText) == src);

  auto se = stripEdit(*parse(more->newText));
  REQUIRE(se.ok());
  CHECK(se->newText == src);
}

TEST_CASE("keep and overlay") {
  test::TempDir dir;
  std::string src = "import torch\n\ndef step(m, x):\n    y = m(x)\n    return y\n";
  test::writeFile(dir / "pkg/model.py", src);
  FilePlan plan{"pkg/model.py", {RangeRequest::functionBody("step"), RangeRequest::statements(3, 3)}};
  auto ov = buildOverlay(dir.path(), std::span(&plan, 1));
  REQUIRE(ov.ok());
  const OverlayFile* f = ov->find("pkg/model.py");
  REQUIRE(f);
  CHECK(f->original == src);
  CHECK(f->text ==
        "import torch\n\ndef step(m, x):\n"
        "    with torch.cuda.nvtx.range(\"kl:pkg/model.py:4-5:step\"):\n"
        "        with torch.cuda.nvtx.range(\"kl:pkg/model.py:4-4:y = m(x)\"):\n"
        "            y = m(x)\n"
        "        return y\n");
  CHECK(f->lines.originalLine(5) == 3);
  CHECK(f->lines.isInserted(4));
  CHECK(f->requests.size() == 2);
  CHECK(test::readFile(dir / "pkg/model.py") == src);  // the user's file is never written

  // Keep: the run's ranges become an edit of the user's file.
  Options o;
  o.relPath = "pkg/model.py";
  auto kept = keep(*parse(src), f->requests, o, f->original);
  REQUIRE(kept.ok());
  CHECK(kept->newText == f->text);
  auto stale = keep(*parse(src + "# edited\n"), f->requests, o, f->original);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().message.find("changed since the profiling run") != std::string::npos);
  // Keeping into a file that already holds those ranges changes nothing.
  auto again = keep(*parse(f->text), f->requests, o, f->original);
  REQUIRE(again.ok());
  CHECK(again->edits.empty());

  FilePlan outside{"../x.py", {}};
  CHECK_FALSE(buildOverlay(dir.path(), std::span(&outside, 1)).ok());
  FilePlan missing{"nope.py", {}};
  CHECK(buildOverlay(dir.path(), std::span(&missing, 1)).error().code == Error::Code::Io);
}

TEST_CASE("atomic write replaces the file and keeps its mode") {
  test::TempDir dir;
  auto p = dir / "a.py";
  test::writeFile(p, "old\n");
  std::filesystem::permissions(
      p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write | std::filesystem::perms::owner_exec);
  REQUIRE(writeFileAtomically(p, "new\n").ok());
  CHECK(test::readFile(p) == "new\n");
  CHECK((std::filesystem::status(p).permissions() & std::filesystem::perms::owner_exec) !=
        std::filesystem::perms::none);
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);  // no temporary left behind
  CHECK_FALSE(writeFileAtomically(dir / "no/such/dir/a.py", "x").ok());
  CHECK_FALSE(readWholeFile(dir / "missing.py").ok());
}

TEST_CASE("labels of long statements are exact and brace-free (torch formats the range text)") {
  // Longer than any small-string buffer: a label built from a dangling view would be garbage.
  std::string out = wrap("print(f\"final loss {loss.item():.4f} after steps\")\n", {lines(1, 1)});
  CHECK(out.find("with torch.cuda.nvtx.range(\"kl:m.py:1-1:print(f?final loss ?loss.item():.4f? after") !=
        std::string::npos);
  std::string header = out.substr(0, out.find('\n', out.find("with ")));
  CHECK(header.find('{') == std::string::npos);
  CHECK(header.find('}') == std::string::npos);
  CHECK(makeLabel("d = {'k': v}") == "d = ?'k': v?");
}

TEST_CASE("labels stop where the code of the first line stops: comments cut, '#' in strings kept") {
  // A multi-line statement: its first line ends in a comment, after a string holding a '#'.
  std::string out = wrap("x = g(\"a#b\",  # the key\n      y)\n", {lines(1, 2)});
  CHECK(out.find("with torch.cuda.nvtx.range(\"kl:m.py:1-2:x = g(?a#b?,\"):") != std::string::npos);
  // A comment with a quote in it is still a comment.
  out = wrap("z = h(1,  # don't\n      2)\n", {lines(1, 2)});
  CHECK(out.find("with torch.cuda.nvtx.range(\"kl:m.py:1-2:z = h(1,\"):") != std::string::npos);
  // A decorated def is named by its def line, its comment cut.
  out = wrap("@dec\ndef f(s='#'):  # doc\n    pass\n", {lines(1, 3)});
  CHECK(out.find("kl:m.py:1-3:def f(s='#')\"") != std::string::npos);
}
