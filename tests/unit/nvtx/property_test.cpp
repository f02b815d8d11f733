// Property: for random contiguous line selections (and random sets of them plus function bodies)
// over tricky files, wrap then strip gives back the exact bytes and the wrapped text parses
// without ERROR nodes. instrument() verifies this itself too; here it is checked independently.
#include <doctest/doctest.h>

#include <random>

#include "core/nvtx/engine.h"
#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::nvtx;

namespace {

struct Stats {
  int attempts = 0, wrapped = 0;
};

void checkOne(const std::string& text, const std::vector<RangeRequest>& reqs, Stats& st) {
  auto f = python::SourceFile::parse(text);
  REQUIRE(f.ok());
  Options o;
  o.relPath = "t.py";
  o.skipUnwrappable = true;
  o.verify = false;  // checked below, independently
  ++st.attempts;
  auto r = instrument(**f, reqs, o);
  if (!r.ok()) FAIL(r.error().message);
  if (r->ranges.empty()) return;
  ++st.wrapped;
  auto w = python::SourceFile::parse(r->text);
  REQUIRE(w.ok());
  CHECK_FALSE((*w)->hasErrors());
  auto s = strip(**w);
  REQUIRE(s.ok());
  CHECK(s->text == text);
  CHECK(s->ranges.size() == r->ranges.size());
  for (size_t i = 0; i < s->ranges.size() && i < r->ranges.size(); ++i) {
    CHECK(s->ranges[i].name == r->ranges[i].name);
    CHECK(s->ranges[i].placed.original == r->ranges[i].original);
    CAPTURE(r->ranges[i].name);
    CAPTURE(s->ranges[i].lines.first);
    CAPTURE(s->ranges[i].lines.last);
    CAPTURE(r->ranges[i].instrumented.first);
    CAPTURE(r->ranges[i].instrumented.last);
    CHECK(s->ranges[i].lines == r->ranges[i].instrumented);
  }
  CHECK(s->lines.toOriginal == r->lines.toOriginal);
}

}  // namespace

TEST_CASE("random selections round-trip exactly") {
  std::mt19937 rng(20240607);
  for (const char* name : {"tricky.py", "tricky_crlf_bom.py", "tricky_tabs.py", "torch_alias.py"}) {
    std::string fileName = name;
    CAPTURE(fileName);
    std::string text = test::readFile(test::dataPath(std::string("nvtx/") + name));
    auto f = python::SourceFile::parse(text);
    REQUIRE(f.ok());
    uint32_t n = (*f)->lines().lineCount();
    auto fns = allFunctionBodies(**f);
    Stats st;
    for (int it = 0; it < 250; ++it) {
      std::vector<RangeRequest> reqs;
      int k = 1 + static_cast<int>(rng() % 3);
      for (int j = 0; j < k; ++j) {
        if (rng() % 4 == 0 && !fns.empty()) {
          reqs.push_back(fns[rng() % fns.size()]);
        } else {
          uint32_t a = rng() % n;
          uint32_t b = std::min(n - 1, a + static_cast<uint32_t>(rng() % 12));
          reqs.push_back(RangeRequest::statements(a, b));
        }
      }
      CAPTURE(it);
      checkOne(text, reqs, st);
    }
    // The property is only meaningful if most selections were actually wrapped.
    CHECK(st.wrapped * 10 >= st.attempts * 7);
    MESSAGE(fileName << ": " << st.wrapped << "/" << st.attempts << " selections wrapped");
  }
}
