// The source model on tricky Python: exact spans, lines, qualified names, blocks and flags.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/python/source_file.h"

using namespace kl::python;

namespace {

SourceFilePtr parse(std::string text) {
  auto r = SourceFile::parse(std::move(text));
  REQUIRE(r.ok());
  return *r;
}

/// Byte offset of the n-th (0-based) occurrence of `needle`.
uint32_t off(const SourceFile& f, std::string_view needle, int n = 0) {
  size_t p = f.text().find(needle);
  while (n-- > 0 && p != std::string::npos) p = f.text().find(needle, p + 1);
  REQUIRE_MESSAGE(p != std::string::npos, needle);
  return static_cast<uint32_t>(p);
}
uint32_t endOf(const SourceFile& f, std::string_view needle, int n = 0) {
  return off(f, needle, n) + static_cast<uint32_t>(needle.size());
}
std::string_view textOf(const SourceFile& f, ByteRange r) {
  return std::string_view(f.text()).substr(r.start, r.size());
}
const Function& fn(const Module& m, std::string_view qual) {
  int32_t i = m.findFunction(qual);
  REQUIRE_MESSAGE(i != kNone, qual);
  return m.functions[i];
}

}  // namespace

TEST_CASE("decorated, async and nested functions: spans include decorators; qualnames") {
  auto f = parse(
      "import functools\n"                      // 0
      "\n"                                      // 1
      "@functools.cache\n"                      // 2
      "@other(1,\n"                             // 3
      "       2)\n"                             // 4
      "async def outer(x):\n"                   // 5
      "    \"\"\"Doc.\"\"\"\n"                  // 6
      "    def inner(y):\n"                     // 7
      "        return y\n"                      // 8
      "    class Local:\n"                      // 9
      "        def m(self): return inner(1)\n"  // 10
      "    return lambda z: z\n");              // 11
  const Module& m = f->model();
  REQUIRE(m.functions.size() == 3);  // the lambda is not a function here

  const Function& outer = fn(m, "outer");
  CHECK(outer.name == "outer");
  CHECK(outer.isAsync);
  CHECK_FALSE(outer.isMethod);
  CHECK(outer.parent == kNone);
  CHECK(outer.bytes.start == off(*f, "@functools"));
  CHECK(outer.bytes.end == endOf(*f, "lambda z: z"));
  CHECK(outer.lines == LineSpan{2, 11});
  CHECK(outer.defLine == 5);
  REQUIRE(outer.decorators.size() == 2);
  CHECK(outer.decorators[0].text == "functools.cache");
  CHECK(outer.decorators[0].line == 2);
  CHECK(outer.decorators[1].text == "other(1,\n       2)");
  CHECK(outer.decorators[1].bytes == ByteRange{off(*f, "@other"), endOf(*f, "2)")});
  CHECK(textOf(*f, outer.nameBytes) == "outer");
  REQUIRE(outer.docstring != kNone);
  CHECK(m.statements[outer.docstring].docstring);
  CHECK(m.statements[outer.docstring].lines == LineSpan{6, 6});
  CHECK_FALSE(outer.oneLine);

  const Block& body = m.blocks[outer.body];
  CHECK(body.clause == "function_definition");
  CHECK(body.headerLine == 5);
  CHECK(textOf(*f, body.header) == "async def outer(x):");
  CHECK(body.indent == "    ");
  CHECK(body.lines == LineSpan{6, 11});
  CHECK(body.statements.size() == 4);

  const Statement& def = m.statements[outer.statement];
  CHECK(def.kind == StatementKind::FunctionDef);
  CHECK(def.decorated);
  CHECK(def.bytes == outer.bytes);
  CHECK(def.definesFunction == m.findFunction("outer"));

  const Function& inner = fn(m, "outer.<locals>.inner");
  CHECK(inner.parent == m.findFunction("outer"));
  CHECK_FALSE(inner.isMethod);
  CHECK(inner.lines == LineSpan{7, 8});

  const Function& meth = fn(m, "outer.<locals>.Local.m");
  CHECK(meth.isMethod);
  CHECK(meth.klass == m.findClass("outer.<locals>.Local"));
  CHECK(meth.parent == m.findFunction("outer"));
  CHECK(meth.oneLine);
  CHECK(meth.lines == LineSpan{10, 10});
  const Block& mb = m.blocks[meth.body];
  CHECK(mb.sameLine);
  CHECK(mb.indent == "            ");  // header indentation + one unit
  CHECK(m.statements[mb.statements[0]].oneLineBody);

  const Class& local = m.classes[m.findClass("outer.<locals>.Local")];
  CHECK(local.parent == m.findFunction("outer"));
  CHECK(local.lines == LineSpan{9, 10});
}

TEST_CASE("classes: nested classes, methods, decorators, docstrings") {
  auto f = parse(
      "class Outer(Base, metaclass=M):\n"  // 0
      "    '''Outer doc.'''\n"             // 1
      "    class Inner:\n"                 // 2
      "        @staticmethod\n"            // 3
      "        def method(): pass\n"       // 4
      "    if FLAG:\n"                     // 5
      "        def cond(self): ...\n"      // 6
      "    x = 1\n");                      // 7
  const Module& m = f->model();
  REQUIRE(m.classes.size() == 2);
  const Class& outer = m.classes[m.findClass("Outer")];
  CHECK(outer.lines == LineSpan{0, 7});
  CHECK(outer.bytes == ByteRange{0, endOf(*f, "x = 1")});
  REQUIRE(outer.docstring != kNone);
  CHECK(m.statements[outer.docstring].lines == LineSpan{1, 1});
  const Class& inner = m.classes[m.findClass("Outer.Inner")];
  CHECK(inner.klass == m.findClass("Outer"));
  const Function& method = fn(m, "Outer.Inner.method");
  CHECK(method.isMethod);
  CHECK(method.lines == LineSpan{3, 4});
  CHECK(method.decorators.at(0).text == "staticmethod");
  // A def under an `if` in a class body is still a method.
  const Function& cond = fn(m, "Outer.cond");
  CHECK(cond.isMethod);
  CHECK(cond.klass == m.findClass("Outer"));
  CHECK(cond.docstring == kNone);  // `...` is not a docstring
  // The class body statement x = 1 is in the class, not in a function.
  int32_t x = m.statementAt(off(*f, "x = 1"));
  CHECK(m.statements[x].klass == m.findClass("Outer"));
  CHECK(m.statements[x].function == kNone);
}

TEST_CASE("compound statements: if/elif/else, try/except/else/finally, for/while else, with, match") {
  auto f = parse(
      "def f(x):\n"                         // 0
      "    if x:\n"                         // 1
      "        a()\n"                       // 2
      "    elif (n := len(x)) > 2:\n"       // 3
      "        b()\n"                       // 4
      "    else:\n"                         // 5
      "        c()\n"                       // 6
      "    try:\n"                          // 7
      "        d()\n"                       // 8
      "    except ValueError as e:\n"       // 9
      "        e1()\n"                      // 10
      "    except OSError:\n"               // 11
      "        e2()\n"                      // 12
      "    else:\n"                         // 13
      "        e3()\n"                      // 14
      "    finally:\n"                      // 15
      "        e4()\n"                      // 16
      "    for i in r:\n"                   // 17
      "        g()\n"                       // 18
      "    else:\n"                         // 19
      "        h()\n"                       // 20
      "    while w: k()\n"                  // 21
      "    match x:\n"                      // 22
      "        case [1, *rest]:\n"          // 23
      "            m1()\n"                  // 24
      "        case {'k': v} if v: m2()\n"  // 25
      "        case _:\n"                   // 26
      "            pass\n");                // 27
  const Module& m = f->model();
  CHECK_FALSE(f->hasErrors());
  const Block& body = m.blocks[fn(m, "f").body];
  REQUIRE(body.statements.size() == 5);

  const Statement& ifs = m.statements[body.statements[0]];
  CHECK(ifs.kind == StatementKind::If);
  CHECK(ifs.lines == LineSpan{1, 6});
  REQUIRE(ifs.blocks.size() == 3);
  CHECK(m.blocks[ifs.blocks[0]].clause == "if_statement");
  CHECK(m.blocks[ifs.blocks[1]].clause == "elif_clause");
  CHECK(textOf(*f, m.blocks[ifs.blocks[1]].header) == "elif (n := len(x)) > 2:");
  CHECK(m.blocks[ifs.blocks[1]].headerLine == 3);
  CHECK(m.blocks[ifs.blocks[2]].clause == "else_clause");
  CHECK(m.blocks[ifs.blocks[2]].indent == "        ");
  CHECK(m.blocks[ifs.blocks[2]].lines == LineSpan{6, 6});

  const Statement& tr = m.statements[body.statements[1]];
  CHECK(tr.kind == StatementKind::Try);
  REQUIRE(tr.blocks.size() == 5);
  std::vector<std::string_view> clauses;
  for (int32_t b : tr.blocks) clauses.push_back(m.blocks[b].clause);
  CHECK(clauses == std::vector<std::string_view>{"try_statement", "except_clause", "except_clause", "else_clause",
                                                 "finally_clause"});
  CHECK(m.blocks[tr.blocks[1]].headerLine == 9);
  CHECK(tr.lines == LineSpan{7, 16});

  const Statement& fo = m.statements[body.statements[2]];
  REQUIRE(fo.blocks.size() == 2);
  CHECK(m.blocks[fo.blocks[1]].clause == "else_clause");

  const Statement& wh = m.statements[body.statements[3]];
  REQUIRE(wh.blocks.size() == 1);
  CHECK(m.blocks[wh.blocks[0]].sameLine);
  CHECK(m.statements[m.blocks[wh.blocks[0]].statements[0]].oneLineBody);

  const Statement& ma = m.statements[body.statements[4]];
  CHECK(ma.kind == StatementKind::Match);
  REQUIRE(ma.blocks.size() == 3);
  CHECK(m.blocks[ma.blocks[0]].clause == "case_clause");
  CHECK(textOf(*f, m.blocks[ma.blocks[0]].header) == "case [1, *rest]:");
  CHECK(m.blocks[ma.blocks[1]].sameLine);
  CHECK(m.blocks[ma.blocks[1]].indent == "            ");
  CHECK(ma.lines == LineSpan{22, 27});

  // The walrus call is a call site in the if statement (its condition), in f.
  int32_t lenCall = -1;
  for (size_t i = 0; i < m.calls.size(); ++i)
    if (m.calls[i].callee == "len") lenCall = static_cast<int32_t>(i);
  REQUIRE(lenCall >= 0);
  CHECK(m.calls[lenCall].statement == body.statements[0]);
  CHECK(m.calls[lenCall].function == m.findFunction("f"));
  CHECK(m.calls[lenCall].line == 3);
}

TEST_CASE("semicolons, one-line compound statements, backslash continuations") {
  auto f = parse(
      "a = 1; b = 2;\n"       // 0
      "if a: b(); c()\n"      // 1
      "x = 1 + \\\n"          // 2
      "    2\n"               // 3
      "for i in r: pass\n");  // 4
  const Module& m = f->model();
  const Block& top = m.moduleBlock();
  REQUIRE(top.statements.size() == 5);
  const Statement& a = m.statements[top.statements[0]];
  const Statement& b = m.statements[top.statements[1]];
  CHECK(a.joinedBySemicolon);
  CHECK(b.joinedBySemicolon);
  CHECK(a.bytes == ByteRange{0, 5});
  CHECK(b.bytes == ByteRange{7, 12});
  const Statement& ifs = m.statements[top.statements[2]];
  CHECK(ifs.lines == LineSpan{1, 1});
  const Block& ifBody = m.blocks[ifs.blocks[0]];
  CHECK(ifBody.sameLine);
  REQUIRE(ifBody.statements.size() == 2);
  for (int32_t s : ifBody.statements) {
    CHECK(m.statements[s].oneLineBody);
    CHECK(m.statements[s].joinedBySemicolon);
  }
  CHECK(ifBody.indent == "    ");
  const Statement& x = m.statements[top.statements[3]];
  CHECK(x.lines == LineSpan{2, 3});
  CHECK(x.bytes == ByteRange{off(*f, "x = 1"), endOf(*f, "    2")});
  CHECK_FALSE(x.joinedBySemicolon);
  CHECK(m.statementAtLine(3) == top.statements[3]);
  CHECK(m.statementAtLine(0) == top.statements[0]);      // the first of `a = 1; b = 2`
  CHECK(m.statementAtLine(1) == ifBody.statements[0]);   // innermost, first on the line
  CHECK(m.statementAtLine(4) == top.statements[4] + 1);  // `pass` in `for i in r: pass`
}

TEST_CASE("multi-line strings: triple-quoted, f-strings, continued strings; docstrings") {
  auto f = parse(
      "'''Module doc\n"                       // 0
      "spans lines.'''\n"                     // 1
      "from __future__ import annotations\n"  // 2
      "def g():\n"                            // 3
      "    s = f\"\"\"a {x}\n"                // 4
      "  b {y!r:>{w}}\n"                      // 5
      "c\"\"\"\n"                             // 6
      "    t = 'one line'\n"                  // 7
      "    u = 'cont\\\n"                     // 8
      "inued'\n"                              // 9
      "    return f'{\"nested\"}'\n");        // 10
  const Module& m = f->model();
  REQUIRE(m.multilineStrings.size() == 3);
  CHECK(m.multilineStrings[0] == ByteRange{0, endOf(*f, "lines.'''")});
  CHECK(m.multilineStrings[1] == ByteRange{off(*f, "f\"\"\"a"), endOf(*f, "c\"\"\"")});
  CHECK(m.multilineStrings[2] == ByteRange{off(*f, "'cont"), endOf(*f, "inued'")});
  const Statement& doc = m.statements[m.moduleBlock().statements[0]];
  CHECK(doc.docstring);
  CHECK(doc.containsMultilineString);
  CHECK(doc.lines == LineSpan{0, 1});
  CHECK(m.statements[m.moduleBlock().statements[1]].futureImport);
  int32_t s = m.statementAt(off(*f, "s = f"));
  CHECK(m.statements[s].lines == LineSpan{4, 6});
  CHECK(m.statements[s].containsMultilineString);
  CHECK_FALSE(m.statements[m.statementAt(off(*f, "t = "))].containsMultilineString);
  CHECK(m.insideMultilineString(off(*f, "  b {y")));
  CHECK_FALSE(m.insideMultilineString(off(*f, "f\"\"\"a")));  // its first byte is outside
  CHECK_FALSE(m.insideMultilineString(off(*f, "t = ")));
  CHECK(m.multilineStringsIn(m.statements[s].bytes).size() == 1);
  // The function has no docstring (its first statement is an assignment).
  CHECK(fn(m, "g").docstring == kNone);
  CHECK_FALSE(m.statements[m.statementAt(off(*f, "return f"))].containsMultilineString);
}

TEST_CASE("tabs: indentation unit and block indents") {
  auto f = parse("def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n");
  const Module& m = f->model();
  CHECK(m.indentation.tabs);
  CHECK(m.indentation.inferred);
  CHECK(m.indentation.unit() == "\t");
  const Statement& ifs = m.statements[m.statementAt(off(*f, "if x"))];
  CHECK(m.blocks[ifs.blocks[0]].indent == "\t\t");
  CHECK(ifs.lines == LineSpan{1, 2});

  auto two = parse("class A:\n  def f(self):\n    if x:\n      y()\n");
  CHECK(two->model().indentation.width == 2);
  CHECK_FALSE(two->model().indentation.tabs);
  auto none = parse("x = 1\n");
  CHECK_FALSE(none->model().indentation.inferred);
  CHECK(none->model().indentation.unit() == "    ");
}

TEST_CASE("CRLF and a UTF-8 BOM: offsets refer to the full text") {
  std::string text =
      "\xEF\xBB\xBFimport torch\r\n"
      "def f():\r\n"
      "    with torch.cuda.nvtx.range(\"kl:a.py:2-3\"):\r\n"
      "        pass\r\n";
  auto f = parse(text);
  const Module& m = f->model();
  CHECK_FALSE(f->hasErrors());
  CHECK(m.bom);
  CHECK(f->hasBom());
  CHECK(m.lineEnding == LineEnding::CRLF);
  REQUIRE(m.moduleBlock().statements.size() == 2);
  const Statement& imp = m.statements[m.moduleBlock().statements[0]];
  CHECK(imp.bytes == ByteRange{3, 15});  // after the BOM, before "\r\n"
  const Function& fun = fn(m, "f");
  CHECK(fun.lines == LineSpan{1, 3});
  CHECK(fun.bytes == ByteRange{17, static_cast<uint32_t>(text.size() - 2)});
  CHECK(m.blocks[fun.body].indent == "    ");
  // The with-statement ends before the final "\r\n".
  const Statement& with = m.statements[m.statementAtLine(2)];
  CHECK(with.kind == StatementKind::With);
  CHECK(with.bytes.end == text.size() - 2);

  // A file that is only a BOM, or a BOM and a newline, is fine.
  CHECK(parse("\xEF\xBB\xBF")->model().statements.empty());
  CHECK(parse("\xEF\xBB\xBF\n")->model().bom);
}

TEST_CASE("non-ASCII identifiers and text") {
  auto f = parse("def 函数(ä):\n    return \"😀\" + ä\nclass Ünï:\n    def ñ(self): pass\n");
  const Module& m = f->model();
  CHECK_FALSE(f->hasErrors());
  const Function& g = fn(m, "函数");
  CHECK(g.name == "函数");
  CHECK(g.nameBytes == ByteRange{4, 10});
  CHECK(g.lines == LineSpan{0, 1});
  CHECK(fn(m, "Ünï.ñ").isMethod);
}

TEST_CASE("call sites: callee text, statement and function") {
  auto f = parse(
      "import torch.nn.functional as F\n"
      "class Block:\n"
      "    def forward(self, x):\n"
      "        h = self.attn(x)\n"
      "        h = torch.matmul(h,\n"
      "                         self.w)\n"
      "        return F.gelu(h)(x)\n");
  const Module& m = f->model();
  std::vector<std::string> callees;
  for (const CallSite& c : m.calls) callees.push_back(c.callee);
  CHECK(callees == std::vector<std::string>{"self.attn", "torch.matmul", "F.gelu(h)", "F.gelu"});
  const CallSite& mm = m.calls[1];
  CHECK(mm.line == 4);
  CHECK(mm.lastLine == 5);
  CHECK(mm.bytes == ByteRange{off(*f, "torch.matmul"), endOf(*f, "self.w)")});
  CHECK(mm.calleeBytes == ByteRange{off(*f, "torch.matmul"), endOf(*f, "torch.matmul")});
  CHECK(mm.function == m.findFunction("Block.forward"));
  CHECK(m.statements[mm.statement].lines == LineSpan{4, 5});
  CHECK(m.resolve("F.gelu") == "torch.nn.functional.gelu");
}

TEST_CASE("imports: every spelling binds the right name") {
  auto f = parse(
      "import torch\n"
      "import torch as th\n"
      "import torch.cuda.nvtx as tnv\n"
      "from torch.cuda import nvtx\n"
      "import nvtx as nv, os.path\n"
      "from torch.cuda.nvtx import range as nrange, range_push\n"
      "from . import sibling\n"
      "from ..pkg.mod import thing as t\n"
      "from x import *\n");
  const Module& m = f->model();
  std::vector<std::pair<std::string, std::string>> got;
  for (const ImportBinding& b : m.imports) got.emplace_back(b.local, b.target);
  CHECK(got == std::vector<std::pair<std::string, std::string>>{{"torch", "torch"},
                                                                {"th", "torch"},
                                                                {"tnv", "torch.cuda.nvtx"},
                                                                {"nvtx", "torch.cuda.nvtx"},
                                                                {"nv", "nvtx"},
                                                                {"os", "os"},
                                                                {"nrange", "torch.cuda.nvtx.range"},
                                                                {"range_push", "torch.cuda.nvtx.range_push"},
                                                                {"sibling", ".sibling"},
                                                                {"t", "..pkg.mod.thing"}});
  CHECK(m.imports[3].statement == m.moduleBlock().statements[3]);
  CHECK(m.resolve("th.cuda.nvtx.range") == "torch.cuda.nvtx.range");
  CHECK(m.resolve("nvtx.range") == "torch.cuda.nvtx.range");
  CHECK(m.resolve("unknown.thing") == "unknown.thing");
}

TEST_CASE("lookups: statementAt, functionAt") {
  auto f = parse("def f():\n    @d\n    def g():\n        x = 1\n    y = 2\nz = 3\n");
  const Module& m = f->model();
  CHECK(m.functionAt(off(*f, "x = 1")) == m.findFunction("f.<locals>.g"));
  CHECK(m.functionAt(off(*f, "@d")) == m.findFunction("f.<locals>.g"));
  CHECK(m.functionAt(off(*f, "y = 2")) == m.findFunction("f"));
  CHECK(m.functionAt(off(*f, "z = 3")) == kNone);
  CHECK(m.statements[m.statementAt(off(*f, "x = 1") + 2)].kind == StatementKind::Expression);
  CHECK(m.statementAt(off(*f, "\nz")) == kNone);  // the newline after `y = 2`: between statements
  CHECK(m.statementAt(off(*f, "y = 2") + 4) == m.statementAt(off(*f, "y = 2")));
  CHECK(m.statements[m.statementAt(off(*f, "y = 2"))].parent == m.statementAt(off(*f, "def f")));
  CHECK(m.statementAt(static_cast<uint32_t>(f->text().size())) == kNone);
}

TEST_CASE("trailing comments do not extend a statement") {
  auto f = parse("def f():\n    a()\n    # inner\n# dedented\nx = 1\n");
  const Module& m = f->model();
  CHECK(fn(m, "f").lines == LineSpan{0, 1});
  CHECK(m.statements[0].bytes.end == endOf(*f, "a()"));
}

TEST_CASE("broken code: the model is built around ERROR nodes, never fails") {
  SUBCASE("half-typed def between two methods") {
    auto f = parse(
        "import torch\n"
        "class A:\n"
        "    def f(self):\n"
        "        a()\n"
        "    def g(self\n"
        "\n"
        "def k():\n"
        "    c()\n");
    const Module& m = f->model();
    CHECK(f->hasErrors());
    CHECK_FALSE(m.errors.empty());
    CHECK(m.findFunction("A.f") != kNone);
    CHECK(fn(m, "A.f").lines == LineSpan{2, 3});
    CHECK(m.imports.size() == 1);
  }
  SUBCASE("unclosed parenthesis") {
    auto f = parse("import torch\ndef f():\n    x = foo(1,\n    y = 2\n");
    const Module& m = f->model();
    CHECK(f->hasErrors());
    CHECK(m.findFunction("f") != kNone);
    CHECK(m.imports.size() == 1);
  }
  SUBCASE("an unclosed bracket swallows later top-level definitions: recovered by segments") {
    auto f = parse(
        "import torch\n"             // 0
        "def f():\n"                 // 1
        "    x = foo(1,\n"           // 2
        "    y = 2\n"                // 3
        "\n"                         // 4
        "@dec\n"                     // 5
        "def k():\n"                 // 6
        "    c()\n"                  // 7
        "class C:\n"                 // 8
        "    def m(self): pass\n");  // 9
    const Module& m = f->model();
    CHECK(f->hasErrors());
    REQUIRE(m.functions.size() == 3);
    CHECK(fn(m, "f").lines == LineSpan{1, 1});
    const Function& k = fn(m, "k");
    CHECK(k.lines == LineSpan{5, 7});
    CHECK(k.decorators.at(0).text == "dec");
    CHECK(fn(m, "C.m").isMethod);
    CHECK(m.classes[m.findClass("C")].lines == LineSpan{8, 9});
    REQUIRE(m.calls.size() == 1);  // `@dec` is no call and the unclosed foo( is no call node
    CHECK(m.calls[0].callee == "c");
    CHECK(m.calls[0].function == m.findFunction("k"));
    CHECK(m.moduleBlock().statements.size() == 4);
    CHECK_FALSE(m.errors.empty());
  }
  SUBCASE("a half-typed def before a class") {
    auto f = parse("def f(x):\n    return x\n\ndef g(\n\nclass C:\n    def m(self):\n        pass\n");
    const Module& m = f->model();
    CHECK(fn(m, "f").lines == LineSpan{0, 1});
    CHECK(fn(m, "C.m").lines == LineSpan{6, 7});
    CHECK(m.classes[m.findClass("C")].lines == LineSpan{5, 7});
  }
  SUBCASE("missing closing parenthesis in a signature") {
    auto f = parse("def f(:\n    a()\n    b()\n");
    const Module& m = f->model();
    CHECK(f->hasErrors());
    const Function& g = fn(m, "f");
    CHECK(m.blocks[g.body].statements.size() == 2);
    CHECK(g.lines == LineSpan{0, 2});
  }
  SUBCASE("empty body at the end of the file") {
    auto f = parse("def f():\n    x = 1\n    if x:\n");
    const Module& m = f->model();
    const Statement& ifs = m.statements[m.statementAt(off(*f, "if x"))];
    REQUIRE(ifs.blocks.size() == 1);
    const Block& b = m.blocks[ifs.blocks[0]];
    CHECK(b.statements.empty());
    CHECK(b.bytes == ByteRange{endOf(*f, "if x:"), endOf(*f, "if x:")});
    CHECK(b.indent == "        ");
  }
  SUBCASE("garbage") {
    for (const char* s : {"def", "(((", "'''", "class", "@", "\\", "if x:\n  y(\nelse", ")))]]}", "\x80\xff\xfe",
                          "async", "match x:\n  case", "lambda: (yield"}) {
      CAPTURE(s);
      auto f = parse(s);
      const Module& m = f->model();
      CHECK(m.blocks.size() >= 1);
      for (const Function& fun : m.functions) CHECK(fun.bytes.end <= f->text().size());
    }
  }
}

TEST_CASE("statement kinds: every tree-sitter statement node type has its enum, anything else is Other") {
  CHECK(statementKind("expression_statement") == StatementKind::Expression);
  CHECK(statementKind("global_statement") == StatementKind::Global);
  CHECK(statementKind("import_from_statement") == StatementKind::ImportFrom);
  CHECK(statementKind("decorated_definition") == StatementKind::Other);  // the model stores the definition's kind
  CHECK(statementKind("ERROR") == StatementKind::Other);
  auto f =
      SourceFile::parse("import os\nfrom a import b\ndef g():\n    global x\n    nonlocal_y = 1\n@d\nclass C: pass\n");
  REQUIRE(f.ok());
  const auto& m = (*f)->model();
  REQUIRE(m.statements.size() >= 5);
  CHECK(m.statements[0].isImport());
  CHECK(m.statements[1].isImport());
  CHECK(m.statements[2].kind == StatementKind::FunctionDef);
  CHECK(m.statements[3].globalLike());
  CHECK_FALSE(m.statements[4].globalLike());
  auto ci = std::find_if(m.statements.begin(), m.statements.end(),
                         [](const Statement& s) { return s.kind == StatementKind::ClassDef; });
  REQUIRE(ci != m.statements.end());
  const auto& c = *ci;
  CHECK(c.decorated);
  CHECK(c.nodeType == "class_definition");
}

TEST_CASE("functionExtents: the model's functions without building the model") {
  auto same = [](const SourceFile& f) {
    const Module& m = f.model();
    auto ext = functionExtents(f.root(), f.text(), f.lines());
    REQUIRE(ext.size() == m.functions.size());
    for (size_t i = 0; i < ext.size(); ++i) {
      CAPTURE(m.functions[i].qualName);
      CHECK(ext[i].qualName == m.functions[i].qualName);
      CHECK(ext[i].defLine == m.functions[i].defLine);
      CHECK(ext[i].lastLine == m.functions[i].lines.last);
    }
  };
  SUBCASE("nesting, decorators, classes in functions, trailing comments, clauses, match") {
    auto f = parse(
        "@dec\n"
        "def outer(x):\n"
        "    def inner():\n"
        "        class K:\n"
        "            async def m(self):\n"
        "                pass\n"
        "        return K\n"
        "    # trailing\n"
        "# dedented\n"
        "class C:\n"
        "    if True:\n"
        "        def a(self): return 1\n"
        "    else:\n"
        "        def b(self):\n"
        "            try:\n"
        "                pass\n"
        "            finally:\n"
        "                x = 1\n"
        "    match y:\n"
        "        case 1:\n"
        "            def c(self):\n"
        "                for i in z:\n"
        "                    pass\n"
        "                else:\n"
        "                    q()\n"
        "def empty():\n");
    CHECK_FALSE(f->hasErrors());
    same(*f);
    auto ext = functionExtents(f->root(), f->text(), f->lines());
    REQUIRE(ext.size() == 7);
    CHECK(ext[0].qualName == "outer");
    CHECK(ext[0].lastLine == 6);
    CHECK(ext[2].qualName == "outer.<locals>.inner.<locals>.K.m");
    CHECK(ext[5].qualName == "C.c");
    CHECK(ext[5].lastLine == 24);
  }
  SUBCASE("broken code: the direct build's functions") {
    auto f = parse("class A:\n    def f(self):\n        a()\n    def g(self\n\ndef k():\n    c()\n");
    CHECK(f->hasErrors());
    auto ext = functionExtents(f->root(), f->text(), f->lines());
    REQUIRE_FALSE(ext.empty());
    CHECK(ext[0].qualName == "A.f");
    CHECK(ext[0].lastLine == 2);
  }
}

TEST_CASE("topLevelExtents: unchanged top-level statements are reused, the result equals a walk") {
  std::string text;
  for (int f = 0; f < 30; ++f)
    text +=
        "@dec\ndef f" + std::to_string(f) + "(x):\n    def inner():\n        return x\n    y = x + 1\n    return y\n\n";
  text += "class C:\n    def m(self):\n        pass\n";
  auto file = parse(text);
  auto extents = topLevelExtents(file->root(), file->text(), file->lines());
  CHECK(flatten(extents).size() == 61);
  const char* pieces[] = {"", "\n", "x", "    z = 1\n", "def g():\n    pass\n", "\n\n", "    ", ")", "#"};
  uint32_t seed = 11;
  auto rnd = [&](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
  };
  size_t validEdits = 0;  // edits into code without errors: where statements are reused
  for (int i = 0; i < 400; ++i) {
    const std::string& t = file->text();
    uint32_t a = rnd(static_cast<uint32_t>(t.size() + 1));
    uint32_t b = std::min<uint32_t>(static_cast<uint32_t>(t.size()), a + rnd(6));
    auto next = file->edit(TextEdit{a, b, pieces[rnd(9)]});
    REQUIRE(next.ok());
    const SourceFile& n = **next;
    auto reused = topLevelExtents(n.root(), n.text(), n.lines(), &extents, t);
    auto fresh = functionExtents(n.root(), n.text(), n.lines());
    auto flat = flatten(reused);
    REQUIRE(flat.size() == fresh.size());
    for (size_t k = 0; k < flat.size(); ++k) {
      CAPTURE(i);
      REQUIRE(flat[k].qualName == fresh[k].qualName);
      REQUIRE(flat[k].defLine == fresh[k].defLine);
      REQUIRE(flat[k].lastLine == fresh[k].lastLine);
    }
    if (!n.hasErrors()) ++validEdits;
    extents = std::move(reused);
    file = *next;
    if (file->text().size() > 4000 || file->hasErrors()) {  // keep it valid and small now and then
      file = parse(text);
      extents = topLevelExtents(file->root(), file->text(), file->lines());
    }
  }
  CHECK(validEdits > 50);
}

namespace {

/// The source text of expression `e`.
std::string exprText(const SourceFile& f, int32_t e) {
  REQUIRE(e != kNone);
  return std::string(textOf(f, f.model().expressions[e].bytes));
}

}  // namespace

TEST_CASE("expression facts: callee chains and arguments of every call") {
  auto f = parse(
      "import threading\n"
      "x = self.blocks[0](h, *rest, scale=2.0, **kw)\n"
      "super().forward(x)\n"
      "t = threading.Thread(target=run, args=(a, b))\n"
      "f(y for y in ys)\n"
      "g('a' 'b', f\"{x}\", b'z')(1)\n");
  const Module& m = f->model();
  using K = Expression::Kind;
  auto callAt = [&](std::string_view needle) -> const Expression& {
    for (const CallSite& c : m.calls)
      if (c.bytes.start == off(*f, needle)) return m.expressions[c.expression];
    FAIL("no call at " << needle);
    return m.expressions[0];
  };
  // self.blocks[0](...): Call -> Subscript -> Attribute -> Name.
  const Expression& c1 = callAt("self.blocks[0](h");
  CHECK(c1.kind == K::Call);
  const Expression& sub = m.expressions[c1.object];
  CHECK(sub.kind == K::Subscript);
  const Expression& attr = m.expressions[sub.object];
  CHECK(attr.kind == K::Attribute);
  CHECK(attr.name == "blocks");
  CHECK(m.expressions[attr.object].kind == K::Name);
  CHECK(m.expressions[attr.object].name == "self");
  CHECK(m.dottedName(sub.object) == std::string("self.blocks"));
  CHECK_FALSE(m.dottedName(c1.object).has_value());
  REQUIRE(c1.arguments.size() == 4);
  CHECK(c1.arguments[0].positional());
  CHECK(exprText(*f, c1.arguments[0].value) == "h");
  CHECK(c1.arguments[1].splat == Expression::Argument::Splat::List);
  CHECK(exprText(*f, c1.arguments[1].value) == "rest");
  CHECK(c1.arguments[2].keyword == "scale");
  CHECK(m.expressions[c1.arguments[2].value].kind == K::Other);
  CHECK(m.expressions[c1.arguments[2].value].nodeType == "float");
  CHECK(c1.arguments[3].splat == Expression::Argument::Splat::Dict);
  // super().forward: the inner call is the same Expression as its own CallSite's.
  const Expression& c2 = callAt("super().forward(x)");
  const Expression& fwd = m.expressions[c2.object];
  CHECK(fwd.name == "forward");
  CHECK(fwd.object == m.calls[2].expression);  // super() is the third call, after its outer call
  CHECK(m.expressions[m.expressions[fwd.object].object].name == "super");
  // threading.Thread(target=run, ...)
  const Expression& th = callAt("threading.Thread");
  CHECK(m.dottedName(th.object) == std::string("threading.Thread"));
  REQUIRE(th.arguments.size() == 2);
  CHECK(th.arguments[0].keyword == "target");
  CHECK(m.expressions[th.arguments[0].value].name == "run");
  CHECK(m.expressions[th.arguments[1].value].kind == K::Other);
  CHECK(m.expressions[th.arguments[1].value].nodeType == "tuple");
  // A generator argument is one positional argument.
  const Expression& gen = callAt("f(y for");
  REQUIRE(gen.arguments.size() == 1);
  CHECK(m.expressions[gen.arguments[0].value].nodeType == "generator_expression");
  // String literals: implicit concatenation has a value; f-strings with fields and bytes do not.
  auto gi = std::find_if(m.calls.begin(), m.calls.end(), [](const CallSite& c) { return c.callee == "g"; });
  REQUIRE(gi != m.calls.end());
  const Expression& g = m.expressions[gi->expression];
  REQUIRE(g.arguments.size() == 3);
  CHECK(m.expressions[g.arguments[0].value].kind == K::String);
  CHECK(m.expressions[g.arguments[0].value].literal == std::string("ab"));
  CHECK_FALSE(m.expressions[g.arguments[1].value].literal.has_value());
  CHECK_FALSE(m.expressions[g.arguments[2].value].literal.has_value());
  // The call statement facts: `f(...)` is a call statement; `x = f(...)` is not.
  CHECK(m.statements[m.moduleBlock().statements[2]].call != kNone);
  CHECK(m.calls[m.statements[m.moduleBlock().statements[2]].call].callee == "super().forward");
  CHECK(m.statements[m.moduleBlock().statements[1]].call == kNone);
}

TEST_CASE("Module::argument: by position among positional arguments, else by keyword") {
  auto f = parse(
      "f(a, b, *rest, c, k=x, tag=t)\n"
      "g(\n"
      "    d[\"i, j\"],  # a comment, with a comma\n"
      "    h(1, (2, 3)),\n"
      "    tag=u,\n"
      ")\n"
      "n.x\n");
  const Module& m = f->model();
  REQUIRE(m.calls.size() >= 3);
  int32_t fc = m.calls[0].expression, gc = m.calls[1].expression;
  auto text = [&](int32_t e) { return e == kNone ? std::string("<none>") : exprText(*f, e); };
  CHECK(text(m.argument(fc, 0)) == "a");
  CHECK(text(m.argument(fc, 1)) == "b");
  CHECK(text(m.argument(fc, 2)) == "<none>");    // after *rest: its position is unknown
  CHECK(text(m.argument(fc, 2, "tag")) == "t");  // then the keyword is looked up
  CHECK(text(m.argument(fc, 9, "k")) == "x");
  CHECK(text(m.argument(fc, 9, "missing")) == "<none>");
  CHECK(text(m.argument(gc, 0)) == "d[\"i, j\"]");   // a string with a comma is one argument
  CHECK(text(m.argument(gc, 1)) == "h(1, (2, 3))");  // nested brackets, across lines, after a comment
  CHECK(text(m.argument(gc, 2)) == "<none>");
  CHECK(text(m.argument(gc, 2, "tag")) == "u");
  CHECK(m.argument(kNone, 0) == kNone);
  int32_t attr = m.statements[m.moduleBlock().statements[2]].call;
  CHECK(attr == kNone);                                     // `n.x` is no call
  CHECK(m.argument(m.expressions[gc].object, 0) == kNone);  // not a Call expression
}

TEST_CASE("assignment, for-loop, with-item, parameter, base-class and decorator facts") {
  auto f = parse(
      "import torch.nn as nn\n"                                                  // 0
      "class Net(nn.Module, Mixin, metaclass=Meta):\n"                           // 1
      "    @torch.no_grad()\n"                                                   // 2
      "    def __init__(self, model: TinyFormer, n=3, *a, k: int = 1, **kw):\n"  // 3
      "        self.seq = nn.Sequential(A(), B())\n"                             // 4
      "        x = y = Model().to(dev)\n"                                        // 5
      "        z: Block = make()\n"                                              // 6
      "        w: int\n"                                                         // 7
      "        w += 1\n"                                                         // 8
      "        a, b = pair()\n"                                                  // 9
      "        self.items[0] = v\n"                                              // 10
      "    def forward(self, x, /, *, flag):\n"                                  // 11
      "        for i, blk in enumerate(self.blocks):\n"                          // 12
      "            pass\n"                                                       // 13
      "        for (p, q) in zip(ps, qs): pass\n"                                // 14
      "        for blk in self.blocks: pass\n"                                   // 15
      "        with ctx() as c, open(p):\n"                                      // 16
      "            pass\n");                                                     // 17
  const Module& m = f->model();
  using K = Expression::Kind;
  // Base classes: positional only.
  const Class& net = m.classes[m.findClass("Net")];
  REQUIRE(net.bases.size() == 2);
  CHECK(m.dottedName(net.bases[0]) == std::string("nn.Module"));
  CHECK(m.dottedName(net.bases[1]) == std::string("Mixin"));
  // Parameters: names, annotations, defaults, splats; `/` and `*` are not parameters.
  const Function& init = fn(m, "Net.__init__");
  std::vector<std::string> names;
  for (const Parameter& p : init.parameters) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"self", "model", "n", "a", "k", "kw"});
  CHECK(init.parameters[0].annotation == kNone);
  CHECK(exprText(*f, init.parameters[1].annotation) == "TinyFormer");
  CHECK(m.expressions[init.parameters[1].annotation].kind == K::Name);
  CHECK(init.parameters[2].hasDefault);
  CHECK_FALSE(init.parameters[1].hasDefault);
  CHECK(init.parameters[3].splat == Parameter::Splat::List);
  CHECK(exprText(*f, init.parameters[4].annotation) == "int");
  CHECK(init.parameters[4].hasDefault);
  CHECK(init.parameters[5].splat == Parameter::Splat::Dict);
  names.clear();
  for (const Parameter& p : fn(m, "Net.forward").parameters) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"self", "x", "flag"});
  // Decorators carry their expression.
  REQUIRE(init.decorators.size() == 1);
  CHECK(m.expressions[init.decorators[0].expression].kind == K::Call);
  // Assignments: targets and values; chained targets share the value; `+=` and `w: int` are not.
  std::vector<std::pair<std::string, std::string>> as;
  for (const Assignment& a : m.assignments) as.emplace_back(exprText(*f, a.target), exprText(*f, a.value));
  CHECK(as == std::vector<std::pair<std::string, std::string>>{{"self.seq", "nn.Sequential(A(), B())"},
                                                               {"x", "Model().to(dev)"},
                                                               {"y", "Model().to(dev)"},
                                                               {"z", "make()"},
                                                               {"a, b", "pair()"},
                                                               {"self.items[0]", "v"}});
  CHECK(m.assignments[0].statement == m.statementAtLine(4));
  CHECK(m.expressions[m.assignments[0].target].kind == K::Attribute);
  CHECK(m.expressions[m.assignments[1].value].kind == K::Call);
  CHECK(m.assignments[3].annotated);
  CHECK(m.expressions[m.assignments[4].target].kind == K::Other);
  CHECK(m.expressions[m.assignments[5].target].kind == K::Subscript);
  // For loops: targets split one level, the iterable's structure.
  REQUIRE(m.forLoops.size() == 3);
  std::vector<std::string> t0;
  for (int32_t t : m.forLoops[0].targets) t0.push_back(exprText(*f, t));
  CHECK(t0 == std::vector<std::string>{"i", "blk"});
  const Expression& it0 = m.expressions[m.forLoops[0].iterable];
  CHECK(it0.kind == K::Call);
  CHECK(m.dottedName(it0.object) == std::string("enumerate"));
  CHECK(m.forLoops[1].targets.size() == 2);
  CHECK(m.forLoops[2].targets.size() == 1);
  CHECK(m.dottedName(m.forLoops[2].iterable) == std::string("self.blocks"));
  CHECK(m.statements[m.forLoops[2].statement].lines.first == 15);
  // With items: the context manager of `x as y`, and every item in order.
  int32_t with = m.statementAtLine(16);
  auto items = m.withItemsOf(with);
  REQUIRE(items.size() == 2);
  CHECK(exprText(*f, items[0].value) == "ctx()");
  CHECK(textOf(*f, items[0].bytes) == "ctx() as c");
  CHECK(exprText(*f, items[1].value) == "open(p)");
  CHECK(m.withItemsOf(m.statementAtLine(15)).empty());
}
