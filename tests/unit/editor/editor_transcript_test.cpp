// Runs the editor transcripts tests/unit/editor/transcripts/*.lsp: the format of
// tests/lsp/transcripts/README.md, plus `${KL_SOURCE_DIR}` replaced by the repository root (the
// editor conversations load real profiles from tests/data/editor/). Same in-process server,
// deterministic mode, every real feature registered. When the lsp runner gains the substitution
// these files move to tests/lsp/transcripts/editor_*.lsp and this runner goes away.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "lsp/features/all.h"
#include "tests/support/test_support.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;
namespace fs = std::filesystem;

namespace {

std::string substitute(std::string s) {
  const std::string key = "${KL_SOURCE_DIR}";
  const std::string root = kl::test::sourcePath("").string();
  std::string value = root.size() > 1 && root.back() == '/' ? root.substr(0, root.size() - 1) : root;
  for (size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), value);
  return s;
}

bool isDirective(const std::string& l) {
  return l.rfind("<--", 0) == 0 || l.rfind("-->", 0) == 0 || l.rfind("%", 0) == 0 ||
         l.rfind("#", 0) == 0;
}

void runTranscript(const fs::path& path) {
  std::istringstream in(substitute(kl::test::readFile(path)));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  test::TestClient client([](Server& s) { registerAllFeatures(s); });
  std::vector<json> received;
  size_t next = 0;
  auto pump = [&] {
    for (auto& m : client.take()) received.push_back(std::move(m));
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    INFO(path.filename().string() << ":" << i + 1);
    if (l.empty() || l[0] == '#') continue;
    if (l.rfind("<--", 0) == 0 || l.rfind("-->", 0) == 0) {
      std::string text = l.substr(3);
      while (i + 1 < lines.size() && !lines[i + 1].empty() && !isDirective(lines[i + 1]))
        text += "\n" + lines[++i];
      json j = json::parse(text, nullptr, false);
      REQUIRE_MESSAGE(!j.is_discarded(), "invalid JSON in transcript");
      if (l[0] == '<') {
        client.send(std::move(j));
        continue;
      }
      pump();
      REQUIRE_MESSAGE(next < received.size(), "expected a message from the server: " << j.dump());
      std::string mismatch = test::jsonMismatch(j, received[next]);
      CHECK_MESSAGE(mismatch.empty(), mismatch << "\n  actual: " << received[next].dump());
      ++next;
    } else if (l.rfind("%open ", 0) == 0) {
      std::string body;
      bool ended = false;
      while (i + 1 < lines.size()) {
        if (lines[++i] == "%end") {
          ended = true;
          break;
        }
        body += lines[i] + "\n";
      }
      REQUIRE_MESSAGE(ended, "%open without %end");
      client.open(l.substr(6), body);
    } else if (l.rfind("%open-file ", 0) == 0) {
      // %open-file URI PATH: didOpen with the text of a file (keeps long sources out of transcripts).
      std::istringstream args(l.substr(11));
      std::string uri, file;
      args >> uri >> file;
      client.open(uri, kl::test::readFile(file));
    } else if (l == "%no-output") {
      pump();
      CHECK_MESSAGE(next == received.size(), "unexpected server message: "
                                                 << (next < received.size() ? received[next].dump() : ""));
    } else {
      FAIL("unknown directive " << l);
    }
  }
  pump();
  CHECK_MESSAGE(next == received.size(), "unmatched server message at the end: "
                                             << (next < received.size() ? received[next].dump() : ""));
}

}  // namespace

TEST_CASE("editor transcripts") {
  fs::path dir = kl::test::sourcePath("tests/unit/editor/transcripts");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".lsp") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const auto& f : files) {
    SUBCASE(f.filename().string().c_str()) { runTranscript(f); }
  }
}
