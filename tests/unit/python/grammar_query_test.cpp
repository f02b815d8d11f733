// The grammar loads with the ABI this runtime supports; the query wrapper compiles, maps
// captures, reports errors with offsets and evaluates #eq?/#match? (and negations) itself.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/python/queries.h"
#include "core/python/query.h"
#include "core/python/source_file.h"

using namespace kl::python;

TEST_CASE("tree-sitter-python loads with ABI 14 and ts_parser_set_language accepts it") {
  auto lang = pythonLanguage();
  REQUIRE_MESSAGE(lang.ok(), (lang.ok() ? "" : lang.error().message));
  CHECK(ts_language_version(*lang) == 14);
  auto parser = makePythonParser();
  REQUIRE(parser.ok());
  CHECK(ts_parser_language(parser->get()) == *lang);
  auto f = SourceFile::parse("x = 1\n");
  REQUIRE(f.ok());
  CHECK(std::string(ts_node_type((*f)->root())) == "module");
  CHECK_FALSE((*f)->hasErrors());
}

TEST_CASE("every embedded query compiles and declares the captures the model uses") {
  for (const char* name : {"imports"}) {
    CAPTURE(name);
    CHECK_FALSE(embeddedQuery(name).empty());
    auto q = Query::embedded(name);
    REQUIRE_MESSAGE(q.ok(), (q.ok() ? "" : q.error().message));
    CHECK((*q)->patternCount() > 0);
  }
  CHECK((*Query::embedded("imports"))->requireCapture("import.alias").ok());
  CHECK_FALSE((*Query::embedded("imports"))->requireCapture("nope").ok());
  auto missing = Query::embedded("no_such_query");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == kl::Error::Code::NotFound);
}

TEST_CASE("query compile errors name the kind and the byte offset") {
  auto bad = Query::compile("t", "(call function: (identifier) @f");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("query t: syntax error at offset") == 0);

  auto badType = Query::compile("t", "(no_such_node) @x");
  REQUIRE_FALSE(badType.ok());
  CHECK(badType.error().message == "query t: invalid node type at offset 1");

  auto badField = Query::compile("t", "(call nofield: (_) @x)");
  REQUIRE_FALSE(badField.ok());
  CHECK(badField.error().message.find("invalid field name at offset 6") != std::string::npos);

  auto unknownPred = Query::compile("t", "((identifier) @x (#any-of? @x \"a\" \"b\"))");
  REQUIRE_FALSE(unknownPred.ok());
  CHECK(unknownPred.error().message.find("unsupported predicate #any-of?") != std::string::npos);

  auto badRegex = Query::compile("t", "((identifier) @x (#match? @x \"(\"))");
  REQUIRE_FALSE(badRegex.ok());
  CHECK(badRegex.error().message.find("bad regex") != std::string::npos);
}

namespace {
std::vector<std::string> texts(const Query& q, const SourceFile& f, const char* capture) {
  QueryCursor cur;
  std::vector<std::string> out;
  uint32_t idx = *q.requireCapture(capture);
  for (const Match& m : q.matches(f.root(), f.text(), cur))
    for (const Capture& c : m.captures)
      if (c.index == idx) out.emplace_back(nodeText(c.node, f.text()));
  return out;
}
}  // namespace

TEST_CASE("predicates are evaluated: #eq?, #not-eq?, #match?, #not-match?, capture vs capture") {
  auto f = *SourceFile::parse("foo(1)\nbar(2)\nfoo_bar(3)\nx.foo(4)\nsame(same)\n");
  auto compile = [](const char* src) {
    auto q = Query::compile("t", src);
    REQUIRE_MESSAGE(q.ok(), (q.ok() ? "" : q.error().message));
    return std::move(*q);
  };
  Query eq = compile("((call function: (identifier) @f) (#eq? @f \"foo\"))");
  CHECK(texts(eq, *f, "f") == std::vector<std::string>{"foo"});
  Query neq = compile("((call function: (identifier) @f) (#not-eq? @f \"foo\"))");
  CHECK(texts(neq, *f, "f") == std::vector<std::string>{"bar", "foo_bar", "same"});
  Query match = compile("((call function: (_) @f) (#match? @f \"foo$\"))");
  CHECK(texts(match, *f, "f") == std::vector<std::string>{"foo", "x.foo"});
  Query nomatch = compile("((call function: (_) @f) (#not-match? @f \"^(foo|x)\"))");
  CHECK(texts(nomatch, *f, "f") == std::vector<std::string>{"bar", "same"});
  Query capEq = compile("((call function: (identifier) @f arguments: (argument_list (identifier) @a)) (#eq? @f @a))");
  CHECK(texts(capEq, *f, "f") == std::vector<std::string>{"same"});
  // Without the predicate the same pattern matches every call: the filter is ours.
  Query all = compile("(call function: (identifier) @f)");
  CHECK(texts(all, *f, "f").size() == 4);
}

TEST_CASE("a regex predicate filters with-item callees by spelling") {
  auto f = *SourceFile::parse(
      "with torch.cuda.amp.autocast('a'):\n    pass\nwith open('x'):\n    pass\n"
      "with ctx.autocast('b') as r:\n    pass\n");
  auto compiled =
      Query::compile("t",
                     "((with_item value: [(call function: (_) @api) (as_pattern (call function: (_) @api))])"
                     " (#match? @api \"(^|\\\\W)autocast$\"))");
  REQUIRE(compiled.ok());
  CHECK(texts(*compiled, *f, "api") == std::vector<std::string>{"torch.cuda.amp.autocast", "ctx.autocast"});
}

TEST_CASE("matches can be restricted to a byte range") {
  auto f = *SourceFile::parse("a()\nb()\nc()\n");
  auto q = Query::compile("calls", "(call function: (_) @callee) @call");
  REQUIRE(q.ok());
  QueryCursor cur;
  CHECK(q->matches(f->root(), f->text(), cur).size() == 3);
  auto ms = q->matches(f->root(), f->text(), cur, 4, 7);
  REQUIRE(ms.size() == 1);
  CHECK(nodeText(ms[0].get(*q->requireCapture("callee")), f->text()) == "b");
  CHECK(ms[0].has(*q->requireCapture("call")));
}
