// LSP-level property test: thousands of random incremental didChange edits, with random ranges
// in UTF-16 (and UTF-8) over non-ASCII text, applied through the server, give the same text and
// the same syntax tree as a fresh parse of the final text.
//
// The oracle is independent of lsp/server/positions: it keeps the text as code points and
// computes positions by counting code units itself. Deterministic seed.
#include <doctest/doctest.h>

#include <random>

#include "core/python/source_file.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;
using kl::lsp::test::TestClient;

namespace {

std::u32string decode(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string encode(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

uint32_t units(char32_t cp, bool utf8) {
  if (!utf8) return cp > 0xFFFF ? 2 : 1;
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/// The LSP position of code point index `i` (lines end at \n, \r\n, lone \r).
json positionOf(const std::u32string& t, size_t i, bool utf8) {
  uint32_t line = 0, ch = 0;
  for (size_t k = 0; k < i; ++k) {
    if (t[k] == '\n' || (t[k] == '\r' && (k + 1 >= t.size() || t[k + 1] != '\n'))) {
      ++line;
      ch = 0;
    } else if (t[k] != '\r') {
      ch += units(t[k], utf8);
    }
  }
  return {{"line", line}, {"character", ch}};
}

bool atLineEnd(const std::u32string& t, size_t i) { return i == t.size() || t[i] == '\n' || t[i] == '\r'; }

const std::vector<std::string> kFragments = {
    "x",
    "name",
    " ",
    "    ",
    "\t",
    "\n",
    "\r\n",
    ":",
    "(",
    ")",
    "[",
    "]",
    ",",
    "'",
    "\"",
    "\"\"\"",
    "#",
    "=",
    " + ",
    "\\\n",
    "def f(a, b):\n    return a\n",
    "class C:\n    pass\n",
    "if x:\n    y = 1\nelse:\n    y = 2\n",
    "async def g():\n    await h()\n",
    "@dec\n",
    "for i in range(3):\n",
    "with torch.cuda.nvtx.range('r'):\n",
    "match v:\n    case 1: pass\n",
    "lambda q: q",
    "(n := 10)",
    "日本語",
    "注释",
    "🔥",
    "🚀x",
    "é",
    "e\xCC\x81",
    "名前 = 1\n",
    "x = '🔥'  # 火\n",
    "",
};

void runProperty(bool utf8, uint32_t seed, int steps) {
  TestClient c;
  json caps = json::object();
  if (utf8) caps = {{"general", {{"positionEncodings", {"utf-8", "utf-16"}}}}};
  c.initialize(caps);
  std::string initial =
      "import torch\n\nclass Net:\n    def forward(self, x):  # 前向\n        y = x * 2\n"
      "        return y  # 🔥\n\ndef main():\n    n = Net()\n    print(n.forward(1))\n";
  const std::string uri = "file:///prop.py";
  c.open(uri, initial);
  std::u32string oracle = decode(initial);

  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n)(rng); };
  int version = 1;
  for (int step = 0; step < steps; ++step) {
    json changes = json::array();
    size_t nChanges = 1 + pick(9) / 8;  // mostly 1, sometimes 2
    for (size_t k = 0; k < nChanges; ++k) {
      size_t a = pick(oracle.size()), b = pick(oracle.size());
      if (a > b) std::swap(a, b);
      if (oracle.size() > 700 || pick(3) == 0)
        b = std::min(oracle.size(), a + pick(20));
      else
        b = a + std::min<size_t>(b - a, 8);
      // Never split a "\r\n": the client could not address the point between them.
      auto fix = [&](size_t& i) {
        if (i > 0 && i < oracle.size() && oracle[i - 1] == '\r' && oracle[i] == '\n') --i;
      };
      fix(a);
      fix(b);
      if (a > b) std::swap(a, b);
      std::string text = kFragments[pick(kFragments.size() - 1)];
      if (pick(4) == 0) text += kFragments[pick(kFragments.size() - 1)];
      json start = positionOf(oracle, a, utf8), end = positionOf(oracle, b, utf8);
      // Exercise clamping: past the line end, or past the last line, means the same place.
      if (atLineEnd(oracle, b) && pick(5) == 0) end["character"] = end["character"].get<int>() + 1 + pick(4);
      if (b == oracle.size() && pick(5) == 0) end = {{"line", end["line"].get<int>() + 3}, {"character", 0}};
      changes.push_back({{"range", {{"start", start}, {"end", end}}}, {"text", text}});
      std::u32string inserted = decode(text);
      oracle.replace(a, b - a, inserted);
    }
    if (pick(200) == 0) {  // now and then a full replacement
      changes.push_back({{"text", encode(oracle)}});
    }
    c.notify("textDocument/didChange",
             {{"textDocument", {{"uri", uri}, {"version", ++version}}}, {"contentChanges", changes}});
    c.take();
    DocumentPtr doc = c.server().documents().get(uri);
    REQUIRE(doc);
    REQUIRE(doc->version() == version);
    if (doc->text() != encode(oracle)) {
      FAIL_CHECK("text differs after step " << step << "\nchanges: " << changes.dump() << "\nserver: " << doc->text()
                                            << "\noracle: " << encode(oracle));
      return;
    }
    if (step % 25 == 0 || step + 1 == steps) {
      REQUIRE(doc->source());
      auto fresh = kl::python::SourceFile::parse(doc->text());
      REQUIRE(fresh.ok());
      if ((*fresh)->sexp() != doc->source()->sexp()) {
        FAIL_CHECK("syntax tree differs from a fresh parse after step " << step << "\ntext: " << doc->text());
        return;
      }
    }
  }
}

}  // namespace

TEST_CASE("property: random incremental didChange (UTF-16) equals a fresh parse") {
  runProperty(/*utf8=*/false, /*seed=*/20240601, /*steps=*/3000);
}

TEST_CASE("property: random incremental didChange (UTF-8 positions) equals a fresh parse") {
  runProperty(/*utf8=*/true, /*seed=*/7, /*steps=*/1000);
}
