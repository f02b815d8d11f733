// Untrusted text shown safely (terminal, Markdown) and files named by untrusted input read
// safely (no symlink out of the root, no FIFO that would block).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/support/escape.h"
#include "core/support/safe_file.h"
#include "tests/support/test_support.h"

using namespace kl;

TEST_CASE("terminalSafe shows control characters as escapes and keeps the rest") {
  CHECK(terminalSafe("plain ✓ text\twith tab\n") == "plain ✓ text\twith tab\n");
  CHECK(terminalSafe("\x1b]0;pwned\x07\x1b[2J\rfake") == "\\x1b]0;pwned\\x07\\x1b[2J\\x0dfake");
  CHECK(terminalSafe(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(terminalSafe("\x7f") == "\\x7f");
  CHECK(terminalSafe("csi \xc2\x9b"
                     "31m") == "csi \\u009b31m");         // C1 CSI
  CHECK(terminalSafe("\xc2\xa0nbsp") == "\xc2\xa0nbsp");  // not a control
  CHECK(terminalSafe("cut \xc2") == "cut \xc2");          // a lone lead byte passes
}

TEST_CASE("markdownSafe: no links, emphasis, HTML or code spans from a name") {
  CHECK(markdownSafe("[x](http://e.vil) *b* `c` <img>") == "\\[x\\](http://e.vil) \\*b\\* \\`c\\` \\<img\\>");
  CHECK(markdownSafe("a\nb\x1b") == "a\\nb\\\\x1b");
  CHECK(markdownSafe("gemm_kernel") == "gemm\\_kernel");
}

TEST_CASE("readWorkspaceFile: symlinks resolved and kept inside the root; FIFOs refused") {
  test::TempDir tmp;
  auto ws = tmp / "ws";
  std::filesystem::create_directories(ws / "sub");
  std::ofstream(ws / "sub" / "a.py") << "inside\n";
  std::ofstream(tmp / "secret.txt") << "outside\n";
  std::filesystem::create_symlink(tmp / "secret.txt", ws / "abs_link.py");
  std::filesystem::create_symlink("../secret.txt", ws / "rel_link.py");
  std::filesystem::create_symlink("sub/a.py", ws / "inner_link.py");
  std::filesystem::create_directory_symlink(tmp.path(), ws / "dir_link");

  CHECK(*readWorkspaceFile(ws, "sub/a.py") == "inside\n");
  CHECK(*readWorkspaceFile(ws, "inner_link.py") == "inside\n");  // stays inside: fine
  for (const char* bad : {"abs_link.py", "rel_link.py", "dir_link/secret.txt", "../secret.txt"}) {
    auto r = readWorkspaceFile(ws, bad);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(r.error().message.find("outside the workspace") != std::string::npos, bad);
  }
  CHECK(readWorkspaceFile(ws, "missing.py").error().code == Error::Code::NotFound);

  REQUIRE(::mkfifo((ws / "fifo.py").c_str(), 0600) == 0);
  auto f = readWorkspaceFile(ws, "fifo.py");  // must not block waiting for a writer
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("not a regular file") != std::string::npos);
  CHECK_FALSE(readRegularFile(ws / "sub").ok());
  CHECK(readRegularFile(ws / "sub" / "a.py", 3).error().message.find("larger than") != std::string::npos);
}
