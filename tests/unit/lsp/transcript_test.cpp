// Runs every LSP transcript in tests/lsp/transcripts/*.lsp in-process, over the in-memory
// transport, in deterministic mode. The format is described in tests/lsp/transcripts/README.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lsp/features/all.h"
#include "tests/support/test_support.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;
namespace fs = std::filesystem;

namespace {

/// `${KL_SOURCE_DIR}` in a transcript is the repository root, so a conversation can name real
/// files (profiles under tests/data/, samples/).
std::string substituteSourceDir(std::string s) {
  const std::string key = "${KL_SOURCE_DIR}";
  std::string root = kl::test::sourcePath("").string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  for (size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), root);
  return s;
}

/// Decodes a double-quoted string with \r \n \t \" \\ \xNN escapes.
std::string unescape(std::string_view s, std::string& error) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') {
    error = "expected a double-quoted string";
    return "";
  }
  s = s.substr(1, s.size() - 2);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'r': out += '\r'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'x':
        if (i + 2 < s.size() + 1) {
          out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
          i += 2;
        }
        break;
      default: out += e;
    }
  }
  return out;
}

bool isDirective(const std::string& line) {
  return line.rfind("<--", 0) == 0 || line.rfind("-->", 0) == 0 || line.rfind("<~~", 0) == 0 ||
         line.rfind("%", 0) == 0 || line.rfind("#", 0) == 0;
}

struct Step {
  std::string kind;  // "<--", "-->", "<~~", or a %directive name
  std::string arg;   // JSON text, raw string, or directive argument
  std::string body;  // %open: the document text
  int line = 0;
};

std::vector<Step> parseTranscript(const std::string& text, std::string& error) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<Step> steps;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    int lineNo = static_cast<int>(i + 1);
    if (l.empty() || l[0] == '#') continue;
    if (l.rfind("<--", 0) == 0 || l.rfind("-->", 0) == 0) {
      Step s{l.substr(0, 3), l.substr(3), "", lineNo};
      while (i + 1 < lines.size() && !lines[i + 1].empty() && !isDirective(lines[i + 1])) s.arg += "\n" + lines[++i];
      steps.push_back(std::move(s));
    } else if (l.rfind("<~~", 0) == 0) {
      steps.push_back({"<~~", l.substr(3), "", lineNo});
    } else if (l[0] == '%') {
      size_t sp = l.find(' ');
      Step s{l.substr(0, sp), sp == std::string::npos ? "" : l.substr(sp + 1), "", lineNo};
      if (s.kind == "%open") {
        bool ended = false;
        while (i + 1 < lines.size()) {
          if (lines[++i] == "%end") {
            ended = true;
            break;
          }
          s.body += lines[i] + "\n";
        }
        if (!ended) {
          error = "line " + std::to_string(lineNo) + ": %open without %end";
          return {};
        }
      }
      steps.push_back(std::move(s));
    } else {
      error = "line " + std::to_string(lineNo) + ": not a directive: " + l;
      return {};
    }
  }
  return steps;
}

void runTranscript(const fs::path& path) {
  std::string name = path.filename().string();
  std::string error;
  auto steps = parseTranscript(substituteSourceDir(kl::test::readFile(path)), error);
  INFO(name);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(!steps.empty());

  test::LogCapture log;
  test::TestClient client([](Server& s) {
    registerAllFeatures(s);
    test::registerTestMethods(s);
  });
  std::vector<json> received;  // server messages not yet matched
  size_t next = 0;
  auto pump = [&] {
    for (auto& m : client.take()) received.push_back(std::move(m));
  };
  std::vector<std::string> logLines;

  for (const Step& s : steps) {
    std::string where = name + ":" + std::to_string(s.line);
    INFO(where);
    if (s.kind == "<--") {
      json msg = json::parse(s.arg, nullptr, false);
      REQUIRE_MESSAGE(!msg.is_discarded(), "invalid JSON in transcript");
      client.send(std::move(msg));
    } else if (s.kind == "<~~") {
      std::string bytes = unescape(s.arg, error);
      REQUIRE_MESSAGE(error.empty(), error);
      client.transport().clientWrite(bytes);
    } else if (s.kind == "-->") {
      json expected = json::parse(s.arg, nullptr, false);
      REQUIRE_MESSAGE(!expected.is_discarded(), "invalid JSON in transcript");
      pump();
      REQUIRE_MESSAGE(next < received.size(), ("expected a message from the server, got none: " + expected.dump()));
      std::string mismatch = test::jsonMismatch(expected, received[next]);
      CHECK_MESSAGE(mismatch.empty(), (mismatch + "\n  actual: " + received[next].dump()));
      ++next;
    } else if (s.kind == "%open") {
      json item = {{"uri", s.arg}, {"languageId", "python"}, {"version", 1}, {"text", s.body}};
      client.send({{"method", "textDocument/didOpen"}, {"params", {{"textDocument", item}}}});
    } else if (s.kind == "%open-file") {
      // %open-file URI PATH: didOpen with a file's text (keeps long sources out of transcripts).
      std::istringstream args(s.arg);
      std::string uri, file;
      args >> uri >> file;
      REQUIRE_MESSAGE(!file.empty(), "%open-file needs URI and PATH");
      json item = {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", kl::test::readFile(file)}};
      client.send({{"method", "textDocument/didOpen"}, {"params", {{"textDocument", item}}}});
    } else if (s.kind == "%close-input") {
      client.transport().clientClose();
    } else if (s.kind == "%no-output") {
      pump();
      CHECK_MESSAGE(next == received.size(),
                    ("unexpected server message: " + (next < received.size() ? received[next].dump() : std::string())));
    } else if (s.kind == "%exit-code") {
      pump();
      CHECK(client.server().exited());
      CHECK(client.server().exitCode() == std::stoi(s.arg));
    } else if (s.kind == "%log") {
      pump();
      for (auto& l : log.take()) logLines.push_back(l);
      std::string needle = unescape(s.arg, error);
      REQUIRE_MESSAGE(error.empty(), error);
      auto it = std::find_if(logLines.begin(), logLines.end(),
                             [&](const std::string& l) { return l.find(needle) != std::string::npos; });
      CHECK_MESSAGE(it != logLines.end(), ("no log line contains '" + needle + "'"));
      if (it != logLines.end()) logLines.erase(logLines.begin(), it + 1);
    } else {
      FAIL("unknown directive " << s.kind);
    }
  }
  pump();
  CHECK_MESSAGE(next == received.size(), ("unmatched server message at end of transcript: " +
                                          (next < received.size() ? received[next].dump() : std::string())));
}

}  // namespace

TEST_CASE("transcripts") {
  fs::path dir = kl::test::sourcePath("tests/lsp/transcripts");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".lsp") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    SUBCASE(f.filename().string().c_str()) { runTranscript(f); }
  }
}
