#include "cli/focus_spec.h"

#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl::cli;

TEST_CASE("--focus FILE::QUALNAME and --lines FILE:A-B") {
  auto f = parseFunctionSpec("tinyformer/block.py::Block.forward");
  REQUIRE(f.ok());
  CHECK(f->file == "tinyformer/block.py");
  CHECK(f->qualName == "Block.forward");
  CHECK(parseFunctionSpec("C:/x.py::f")->file == "C:/x.py");
  CHECK_FALSE(parseFunctionSpec("block.py:Block.forward").ok());
  CHECK_FALSE(parseFunctionSpec("::f").ok());
  CHECK_FALSE(parseFunctionSpec("a.py::").ok());
  auto l = parseLinesSpec("train.py:12-17");
  REQUIRE(l.ok());
  CHECK(l->file == "train.py");
  CHECK(l->first == 12);
  CHECK(l->last == 17);
  CHECK(parseLinesSpec("train.py:9")->last == 9);
  CHECK_FALSE(parseLinesSpec("train.py:17-12").ok());
  CHECK_FALSE(parseLinesSpec("train.py:0-3").ok());
  CHECK_FALSE(parseLinesSpec("train.py:a-b").ok());
  CHECK_FALSE(parseLinesSpec(":1-2").ok());
}

TEST_CASE("a relative file is under --root when it exists there, else under the current directory") {
  auto root = kl::test::sourcePath("samples/transformer");
  CHECK(resolveUserFile(root, "train.py") == root / "train.py");
  CHECK(resolveUserFile(root, "/abs/x.py") == std::filesystem::path("/abs/x.py"));
  CHECK(resolveUserFile(root, "nothere.py") == std::filesystem::current_path() / "nothere.py");
}
