#include "core/nvtx/naming.h"

#include <doctest/doctest.h>

#include "core/python/source_file.h"

using namespace kl::nvtx;

TEST_CASE("names format and parse back exactly") {
  RangeName n{"pkg/model.py", 12, 20, "TransformerLayer.forward"};
  auto s = formatName(n);
  REQUIRE(s.ok());
  CHECK(*s == "kl:pkg/model.py:12-20:TransformerLayer.forward");
  auto p = parseName(*s);
  REQUIRE(p.ok());
  CHECK(*p == n);
  RangeName noLabel{"a.py", 3, 3, ""};
  CHECK(*formatName(noLabel) == "kl:a.py:3-3");
  CHECK(*parseName("kl:a.py:3-3") == noLabel);
  // Labels may hold ':' and spaces and non-ASCII text.
  auto q = parseName("kl:a.py:1-2:for i in x: f(i) +1 π");
  REQUIRE(q.ok());
  CHECK(q->label == "for i in x: f(i) +1 π");
}

TEST_CASE("name parsing is strict") {
  for (const char* bad : {"a.py:1-2", "kl:", "kl:a.py", "kl:a.py:1", "kl:a.py:0-1", "kl:a.py:2-1", "kl:a.py:01-2",
                          "kl:a.py:+1-2", "kl:a.py:1-2:", "kl:/etc/passwd:1-2", "kl:../x.py:1-2", "kl:a/../../x.py:1-2",
                          "kl:a//b.py:1-2", "kl:./a.py:1-2", "kl:a\\b.py:1-2", "kl:a.py:1-2x", "kl:a.py:1-99999999999",
                          "kl:a.py:1-2:bad\"quote", "kl:a.py:1-2:tab\there"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseName(bad).ok());
  }
  CHECK_FALSE(formatName({"/abs.py", 1, 1, ""}).ok());
  CHECK_FALSE(formatName({"a:b.py", 1, 1, ""}).ok());
  CHECK_FALSE(formatName({"a.py", 2, 1, ""}).ok());
}

TEST_CASE("workspace paths") {
  CHECK(resolveInWorkspace("/ws", "pkg/m.py")->generic_string() == "/ws/pkg/m.py");
  CHECK_FALSE(resolveInWorkspace("/ws", "../m.py").ok());
  CHECK_FALSE(resolveInWorkspace("/ws", "/etc/m.py").ok());
  CHECK(*relativeToWorkspace("/ws", "/ws/pkg/./m.py") == "pkg/m.py");
  CHECK_FALSE(relativeToWorkspace("/ws", "/other/m.py").ok());
  CHECK_FALSE(relativeToWorkspace("/ws", "/ws").ok());
}

TEST_CASE("labels and literals") {
  CHECK(makeLabel("  x =   f(a,\n  b)  # c:") == "x = f(a, b) # c");
  CHECK(makeLabel("say(\"hi\\n\")") == "say(?hi?n?)");
  std::string longText(100, 'a');
  auto l = makeLabel(longText, 20);
  CHECK(l.size() == 20);
  CHECK(l.substr(17) == "...");
  // Never cuts inside a UTF-8 sequence.
  auto u = makeLabel("ππππππππππππππππ", 10);
  CHECK(parseName("kl:a.py:1-1:" + u).ok());

  CHECK(pythonLiteral("kl:a.py:1-1") == "\"kl:a.py:1-1\"");
  CHECK(pythonLiteral("q\"b\\") == "\"q\\\"b\\\\\"");
  CHECK(pythonLiteral("π😀") == "\"\\u03c0\\U0001f600\"");
  for (std::string v : {"kl:a.py:1-1", "q\"b\\", "π😀 ok", "tab\there"}) CHECK(*decodeLiteral(pythonLiteral(v)) == v);
  CHECK(*decodeLiteral("'single'") == "single");
  CHECK(*decodeLiteral("\"\"\"tri\"ple\"\"\"") == "tri\"ple");
  CHECK_FALSE(decodeLiteral("f\"x\"").ok());
  CHECK_FALSE(decodeLiteral("\"unterminated").ok());
  CHECK_FALSE(decodeLiteral("\"\\u12\"").ok());
}

TEST_CASE("isManaged: a source NVTX range whose name is a literal with the managed prefix") {
  auto f = kl::python::SourceFile::parse(
      "import torch\n"
      "def f():\n"
      "    with torch.cuda.nvtx.range(\"kl:m.py:3\"):\n"
      "        pass\n"
      "    with torch.cuda.nvtx.range(\"user\"):\n"
      "        pass\n"
      "    with torch.cuda.nvtx.range(f\"kl:{1}\"):\n"
      "        pass\n");
  REQUIRE(f.ok());
  const auto r = sourceRanges(**f);
  REQUIRE(r.size() == 3);
  CHECK(isManaged(r[0]));
  CHECK_FALSE(isManaged(r[1]));
  CHECK_FALSE(isManaged(r[2]));  // not a plain literal: its value is unknown
}
