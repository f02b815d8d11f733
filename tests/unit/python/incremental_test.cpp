// SourceFile::edit: incremental re-parse (ts_tree_edit on a copy + reparse with the old tree).
// The property test: thousands of random edits give the same text and the same tree
// (s-expression with byte ranges and points) as a fresh parse of the final text.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/python/source_file.h"
#include "tests/support/test_support.h"

using namespace kl::python;

namespace {

SourceFilePtr parse(std::string text) {
  auto r = SourceFile::parse(std::move(text));
  REQUIRE(r.ok());
  return *r;
}

/// splitmix64: deterministic on every platform (std distributions are not).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(next() % n); }
};

const std::vector<std::string> kSnippets = {
    "\n",
    "\n",
    "\r\n",
    " ",
    "    ",
    "        ",
    "\t",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ";",
    "'",
    "\"",
    "\"\"\"",
    "'''",
    "#",
    "# comment\n",
    "\\\n",
    "=",
    " = ",
    ".",
    "x",
    "self",
    "torch",
    "def ",
    "class ",
    "async ",
    "await ",
    "@",
    "lambda: 0",
    "return ",
    "if ",
    "elif ",
    "else:",
    "for i in r:",
    "while x:",
    "try:",
    "except E:",
    "finally:",
    "with ",
    "match x:",
    "case _:",
    "pass",
    "yield",
    ":=",
    "f\"{x}\"",
    "f'{a!r:>{w}}'",
    "b''",
    "r'\\d'",
    "def f(x):\n    return x\n",
    "\nclass A:\n    def m(self): pass\n",
    "with torch.cuda.nvtx.range(\"kl:x.py:1-2\"):\n    ",
    "nvtx.range_push('a')\n",
    "if a: b()\n",
    "x = \"\"\"\nmulti\nline\n\"\"\"\n",
    "é",
    "ü",
    "日本語",
    "😀",
    "\xEF\xBB\xBF",
    "a(1,\n  2)",
    "[i for i in x]",
    "{k: v}",
    "*args, **kw",
    "->",
    "...",
    "0x1f",
    "1e-3",
};

/// Moves `pos` back to the start of a UTF-8 sequence (edits fall on character boundaries).
uint32_t charBoundary(const std::string& t, uint32_t pos) {
  while (pos > 0 && pos < t.size() && (static_cast<unsigned char>(t[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

TextEdit randomEdit(Rng& rng, const std::string& text, size_t seedSize) {
  uint32_t size = static_cast<uint32_t>(text.size());
  uint32_t start = charBoundary(text, rng.below(size + 1));
  uint32_t op = rng.below(10);
  if (text.size() > 3 * seedSize + 200) op = 9;  // too big: delete
  TextEdit e;
  e.start = start;
  e.end = start;
  if (op <= 4) {  // insert
    e.newText = kSnippets[rng.below(static_cast<uint32_t>(kSnippets.size()))];
  } else if (op <= 6) {  // replace
    e.end = charBoundary(text, std::min(size, start + rng.below(12)));
    if (e.end < start) e.end = start;
    e.newText = kSnippets[rng.below(static_cast<uint32_t>(kSnippets.size()))];
  } else if (op == 7) {  // delete a whole line
    size_t ls = text.rfind('\n', start == 0 ? 0 : start - 1);
    ls = (ls == std::string::npos || start == 0) ? 0 : ls + 1;
    size_t le = text.find('\n', start);
    e.start = static_cast<uint32_t>(std::min<size_t>(ls, start));
    e.end = le == std::string::npos ? size : static_cast<uint32_t>(le + 1);
  } else {  // delete a short range
    e.end = charBoundary(text, std::min(size, start + 1 + rng.below(op == 9 ? 60 : 8)));
    if (e.end < start) e.end = start;
  }
  return e;
}

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// An edit that usually keeps Python valid (so the next edit reuses the tree): grow or shrink
/// an identifier, add a statement line with the line's indentation, add a comment, duplicate
/// or delete a line.
TextEdit benignEdit(Rng& rng, const std::string& text, size_t seedSize) {
  uint32_t size = static_cast<uint32_t>(text.size());
  uint32_t pos = charBoundary(text, rng.below(size + 1));
  size_t ls = pos == 0 ? 0 : text.rfind('\n', pos - 1);
  ls = (ls == std::string::npos || pos == 0) ? 0 : ls + 1;
  size_t le = text.find('\n', ls);
  if (le == std::string::npos) le = size;
  std::string line = text.substr(ls, le - ls);
  std::string indent = line.substr(0, line.find_first_not_of(" \t"));
  if (line.find_first_not_of(" \t") == std::string::npos) indent.clear();
  auto L = [](size_t v) { return static_cast<uint32_t>(v); };
  switch (text.size() > 2 * seedSize ? 5 : rng.below(6)) {
    case 0:  // inside an identifier: insert a letter (ASCII or not)
      if (pos > 0 && pos < size && isIdentChar(text[pos - 1]) && isIdentChar(text[pos]))
        return {pos, pos, rng.below(2) ? "q" : "\xC3\xA9"};
      return {L(ls), L(ls), indent + "y = 2\n"};
    case 1:  // inside an identifier: delete one character
      if (pos > 0 && pos + 1 < size && isIdentChar(text[pos - 1]) && isIdentChar(text[pos]) &&
          isIdentChar(text[pos + 1]))
        return {pos, pos + 1, ""};
      return {L(le), L(le), "  # note"};
    case 2:
      return {L(ls), L(ls), indent + (rng.below(2) ? "x = f(1, [2], {3: 4})\n" : "torch.cuda.nvtx.range_push('s')\n")};
    case 3: return {L(le), L(le), "  # comment \xE6\x97\xA5"};
    case 4:  // duplicate the line
      return {L(ls), L(ls), line + "\n"};
    default:  // delete the line
      return {L(ls), L(std::min<size_t>(le + 1, size)), ""};
  }
}

/// Structural invariants of a model built from any text.
void checkModel(const SourceFile& f) {
  const Module& m = f.model();
  uint32_t size = static_cast<uint32_t>(f.text().size());
  for (size_t i = 0; i < m.statements.size(); ++i) {
    const Statement& s = m.statements[i];
    REQUIRE(s.bytes.start <= s.bytes.end);
    REQUIRE(s.bytes.end <= size);
    if (i > 0) REQUIRE(m.statements[i - 1].bytes.start <= s.bytes.start);
    if (s.parent != kNone) {
      REQUIRE(s.parent < static_cast<int32_t>(i));
      REQUIRE(m.statements[s.parent].bytes.contains(s.bytes));
    }
  }
  for (const Function& fn : m.functions) {
    REQUIRE(fn.bytes.end <= size);
    if (fn.body != kNone) REQUIRE(fn.bytes.contains(m.blocks[fn.body].bytes));
  }
  for (const CallSite& c : m.calls) REQUIRE(c.bytes.end <= size);
}

struct Variant {
  std::string name;
  std::string text;
};

std::vector<Variant> seeds() {
  std::vector<Variant> out;
  for (const char* file : {"transformer.py", "training_loop.py", "broken.py"}) {
    std::string t = kl::test::readFile(kl::test::dataPath(std::string("python/") + file));
    REQUIRE(!t.empty());
    out.push_back({file, t});
  }
  // CRLF + BOM and tab-indented variants of the first seed.
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : out[0].text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  out.push_back({"transformer.py (BOM, CRLF)", crlf});
  std::string tabs;
  size_t col = 0;
  for (char c : out[1].text) {
    if (c == '\n')
      col = 0, tabs += c;
    else if (c == ' ' && col % 4 == 0 && (tabs.empty() || tabs.back() == '\n' || tabs.back() == '\t'))
      tabs += '\t', col += 4;
    else if (c == ' ' && !tabs.empty() && tabs.back() == '\t' && col % 4 != 0)
      ++col;
    else
      tabs += c, ++col;
  }
  out.push_back({"training_loop.py (tabs)", tabs});
  return out;
}

}  // namespace

// KL_PROPERTY_STEPS=<n> runs n steps per seed instead of 1000 (for long local runs).
TEST_CASE("property: random incremental edits == fresh parse (text and tree)") {
  const char* env = std::getenv("KL_PROPERTY_STEPS");
  const int stepsPerSeed = env ? std::atoi(env) : 1000;
  uint64_t seedNo = 0;
  size_t totalEdits = 0, errorSteps = 0, incrementalSteps = 0;
  for (const Variant& v : seeds()) {
    CAPTURE(v.name);
    Rng rng{0x6B65726E6C656E73ull + seedNo++};
    SourceFilePtr cur = parse(v.text);
    std::string expected = v.text;
    // Inverses of the edits since the text was last valid Python, newest last. Undoing them
    // (LIFO) walks back to that valid text, so the edits wander between broken and valid code.
    std::vector<std::vector<TextEdit>> undo;
    for (int step = 0; step < stepsPerSeed; ++step) {
      std::vector<TextEdit> edits;
      if (!undo.empty() && rng.below(100) < 65) {
        edits = std::move(undo.back());
        undo.pop_back();
        for (const TextEdit& e : edits) REQUIRE(applyEdit(expected, e));
      } else {
        // Mostly single edits (didChange with one range); sometimes a batch applied in order.
        uint32_t count = rng.below(8) == 0 ? 2 + rng.below(3) : 1;
        bool benign = rng.below(5) < 3;
        std::vector<TextEdit> inverse;
        for (uint32_t k = 0; k < count; ++k) {
          TextEdit e = benign ? benignEdit(rng, expected, v.text.size()) : randomEdit(rng, expected, v.text.size());
          inverse.insert(inverse.begin(), TextEdit{e.start, e.start + static_cast<uint32_t>(e.newText.size()),
                                                   expected.substr(e.start, e.end - e.start)});
          REQUIRE(applyEdit(expected, e));
          edits.push_back(std::move(e));
        }
        undo.push_back(std::move(inverse));
      }
      totalEdits += edits.size();
      auto next = edits.size() == 1 ? cur->edit(edits[0]) : cur->edit(edits);
      REQUIRE(next.ok());
      cur = *next;
      REQUIRE(cur->text() == expected);
      if (cur->incremental()) {
        ++incrementalSteps;
        REQUIRE_FALSE(cur->hasErrors());  // a reparse with errors is replaced by a fresh one
      }
      if (cur->hasErrors())
        ++errorSteps;
      else
        undo.clear();  // a new valid base
      if (step % 25 == 0) checkModel(*cur);
      // A snapshot edit() parsed from scratch is a fresh parse by construction: compare only
      // every 10th of those (determinism), and every incremental one.
      if (!cur->incremental() && step % 10 != 0) continue;
      SourceFilePtr fresh = parse(expected);
      std::string got = cur->sexp(), want = fresh->sexp();
      if (got != want) {
        std::string edited;
        for (const TextEdit& e : edits)
          edited += "[" + std::to_string(e.start) + "," + std::to_string(e.end) + ")->\"" + e.newText + "\" ";
        FAIL("step " << step << ": the tree differs from a fresh parse after " << edited << "\n--- text ---\n"
                     << expected << "\n--- edited ---\n"
                     << got << "\n--- fresh ---\n"
                     << want);
      }
    }
    checkModel(*cur);
  }
  MESSAGE(totalEdits << " edits; " << incrementalSteps << " steps reparsed incrementally; " << errorSteps
                     << " steps ended in broken Python (parsed from scratch)");
  CHECK(totalEdits >= 5000);
  // Both paths are exercised: valid -> valid edits are incremental, the rest parse afresh.
  CHECK(incrementalSteps >= 1000);
  CHECK(errorSteps >= 1000);
}

TEST_CASE("edit: ranges are checked; batches apply in order; the old snapshot is unchanged") {
  auto f = parse("def f():\n    return 1\n");
  auto bad = f->edit(TextEdit{5, 3, "x"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == kl::Error::Code::Invalid);
  CHECK_FALSE(f->edit(TextEdit{0, 1000, ""}).ok());
  CHECK_FALSE(f->edit(std::vector<TextEdit>{{0, 0, "x"}, {0, 100, ""}}).ok());

  // The second edit's offsets refer to the text after the first.
  auto g = f->edit(std::vector<TextEdit>{{4, 5, "gg"}, {0, 0, "import torch\n"}});
  REQUIRE(g.ok());
  CHECK((*g)->text() == "import torch\ndef gg():\n    return 1\n");
  CHECK((*g)->model().findFunction("gg") != kNone);
  CHECK(f->text() == "def f():\n    return 1\n");
  CHECK(f->model().findFunction("f") != kNone);
  auto same = f->edit(std::vector<TextEdit>{});
  REQUIRE(same.ok());
  CHECK((*same)->sexp() == f->sexp());
}

TEST_CASE("edit: adding, removing and editing next to a BOM") {
  auto f = parse("x = 1\ny = 2\n");
  auto withBom = f->edit(TextEdit{0, 0, "\xEF\xBB\xBF"});
  REQUIRE(withBom.ok());
  CHECK((*withBom)->hasBom());
  CHECK_FALSE((*withBom)->hasErrors());
  CHECK((*withBom)->sexp() == parse("\xEF\xBB\xBFx = 1\ny = 2\n")->sexp());
  auto inserted = (*withBom)->edit(TextEdit{3, 3, "import a\n"});
  REQUIRE(inserted.ok());
  CHECK((*inserted)->sexp() == parse("\xEF\xBB\xBFimport a\nx = 1\ny = 2\n")->sexp());
  CHECK((*inserted)->model().statements[0].bytes == ByteRange{3, 11});
  auto noBom = (*inserted)->edit(TextEdit{0, 3, ""});
  REQUIRE(noBom.ok());
  CHECK_FALSE((*noBom)->hasBom());
  CHECK((*noBom)->sexp() == parse("import a\nx = 1\ny = 2\n")->sexp());
}

TEST_CASE("parse: cancellation returns Error::Cancelled and the next parse works") {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "def f" + std::to_string(i) + "(x):\n    return g(x) + 1\n";
  kl::CancellationSource src;
  src.cancel();
  auto r = SourceFile::parse(big, src.token());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kl::Error::Code::Cancelled);
  auto ok = SourceFile::parse("x = 1\n");
  REQUIRE(ok.ok());
  CHECK_FALSE((*ok)->hasErrors());
  CHECK((*ok)->sexp() == (*SourceFile::parse("x = 1\n"))->sexp());
}

TEST_CASE("text edits: applyEditsToOriginal applies non-overlapping edits of the original text") {
  std::string t = "abcdef";
  CHECK(applyEditsToOriginal(t, {{4, 5, "E"}, {0, 1, "AA"}, {2, 2, "+"}}));
  CHECK(t == "AAb+cdEf");
  std::string u = "abc";
  CHECK_FALSE(applyEditsToOriginal(u, {{0, 2, "x"}, {1, 3, "y"}}));
  CHECK(u == "abc");
  CHECK_FALSE(applyEdit(u, {2, 4, ""}));
}
