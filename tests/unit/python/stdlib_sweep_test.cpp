// Robustness sweep: every .py file of the system's Python 3.11 standard library parses, and
// its model is consistent (spans nest, bodies lie inside their definitions, every `def`/`class`
// line outside a string is a definition the model found; functionExtents agrees with the
// model's functions on every file without errors). Skipped when the directory is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "core/python/source_file.h"
#include "tests/support/test_support.h"

using namespace kl::python;
namespace fs = std::filesystem;

TEST_CASE("sweep: /usr/lib/python3.11 parses and builds consistent models") {
  const fs::path root = "/usr/lib/python3.11";
  if (!fs::is_directory(root)) {
    MESSAGE("skipped: " << root << " is not present on this machine");
    return;
  }
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 100);

  static const std::regex defLine(R"(^[ \t]*(async[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*))");
  size_t withErrors = 0, functions = 0, classes = 0, statements = 0, calls = 0, defsChecked = 0;
  for (const fs::path& p : files) {
    CAPTURE(p.string());
    auto r = SourceFile::parse(kl::test::readFile(p));
    REQUIRE(r.ok());
    const SourceFile& f = **r;
    const Module& m = f.model();
    if (f.hasErrors()) ++withErrors;
    functions += m.functions.size();
    classes += m.classes.size();
    statements += m.statements.size();
    calls += m.calls.size();
    const uint32_t size = static_cast<uint32_t>(f.text().size());
    for (size_t i = 0; i < m.statements.size(); ++i) {
      const Statement& s = m.statements[i];
      REQUIRE(s.bytes.end <= size);
      REQUIRE(s.lines.first == f.lines().toLineCol(s.bytes.start).line);
      if (s.parent != kNone) REQUIRE(m.statements[s.parent].bytes.contains(s.bytes));
      if (i > 0) REQUIRE(m.statements[i - 1].bytes.start <= s.bytes.start);
    }
    for (const Function& fn : m.functions) {
      REQUIRE(fn.body != kNone);
      REQUIRE(fn.bytes.contains(m.blocks[fn.body].bytes));
      REQUIRE(fn.lines.contains(fn.defLine));
      REQUIRE(fn.lines.first <= m.blocks[fn.body].lines.first);
    }
    for (const Class& c : m.classes)
      if (c.body != kNone) REQUIRE(c.bytes.contains(m.blocks[c.body].bytes));
    // The statement-only walk finds the model's functions (without segment recovery: the
    // model may differ on broken code only).
    auto extents = functionExtents(f.root(), f.text(), f.lines());
    if (!f.hasErrors()) {
      REQUIRE(extents.size() == m.functions.size());
      for (size_t i = 0; i < extents.size(); ++i) {
        REQUIRE(extents[i].qualName == m.functions[i].qualName);
        REQUIRE(extents[i].defLine == m.functions[i].defLine);
        REQUIRE(extents[i].lastLine == m.functions[i].lines.last);
      }
    }
    if (f.hasErrors()) continue;
    // Cross-check against the text: each def/class line outside a string is a definition.
    std::vector<std::pair<uint32_t, std::string>> found;
    for (const Function& fn : m.functions) found.emplace_back(fn.defLine, fn.name);
    for (const Class& c : m.classes) found.emplace_back(c.classLine, c.name);
    std::sort(found.begin(), found.end());
    for (uint32_t line = 0; line < f.lines().lineCount(); ++line) {
      uint32_t ls = f.lines().lineStart(line);
      std::string text = f.text().substr(ls, f.lines().lineEnd(line, f.text()) - ls);
      std::smatch mt;
      if (!std::regex_search(text, mt, defLine)) continue;
      uint32_t at = ls + static_cast<uint32_t>(mt.position(2));
      if (m.insideMultilineString(at)) continue;
      int32_t st = m.statementAt(at);
      if (st != kNone && m.statements[st].bytes.start < ls && m.statements[st].kind != StatementKind::FunctionDef &&
          m.statements[st].kind != StatementKind::ClassDef)
        continue;  // a continuation line of another statement
      CAPTURE(line);
      CAPTURE(text);
      CHECK(std::binary_search(found.begin(), found.end(), std::make_pair(line, mt.str(3))));
      ++defsChecked;
    }
  }
  MESSAGE(files.size() << " files: " << statements << " statements, " << functions << " functions, " << classes
                       << " classes, " << calls << " calls; " << withErrors << " files with syntax errors; "
                       << defsChecked << " def/class lines cross-checked");
  CHECK(withErrors * 20 < files.size());  // tree-sitter-python 0.23 reads 3.11 code: < 5% errors
  CHECK(defsChecked > 1000);
}
