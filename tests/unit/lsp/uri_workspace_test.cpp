// file: URIs <-> paths (lsp/server/uri.h) and the workspace root / relative paths
// (lsp/server/workspace.h).
#include <doctest/doctest.h>

#include "lsp/protocol/protocol.h"
#include "lsp/server/uri.h"
#include "lsp/server/workspace.h"

using namespace kl::lsp;
namespace fs = std::filesystem;

namespace {
std::string decoded(std::string_view uri) {
  auto p = uriToPath(uri);
  return p ? p->string() : "<none>";
}
}  // namespace

TEST_CASE("uri: file URIs decode to absolute paths") {
  CHECK(decoded("file:///home/u/train.py") == "/home/u/train.py");
  CHECK(decoded("file://localhost/home/u/train.py") == "/home/u/train.py");
  CHECK(decoded("file://LocalHost/home/u/train.py") == "/home/u/train.py");
  CHECK(decoded("FILE:///home/u/train.py") == "/home/u/train.py");
  CHECK(decoded("file:/home/u/train.py") == "/home/u/train.py");  // RFC 8089, no authority
  CHECK(decoded("file:///") == "/");
}

TEST_CASE("uri: percent-escapes, spaces and non-ASCII") {
  CHECK(decoded("file:///home/u/my%20project/a%20b.py") == "/home/u/my project/a b.py");
  CHECK(decoded("file:///home/u/%C3%A9t%C3%A9/%E6%A8%A1%E5%9E%8B.py") ==
        "/home/u/\xC3\xA9t\xC3\xA9/\xE6\xA8\xA1\xE5\x9E\x8B.py");       // été/模型.py
  CHECK(decoded("file:///home/u/%c3%a9.py") == "/home/u/\xC3\xA9.py");  // lower-case hex
  CHECK(decoded("file:///a/%23x%3F.py") == "/a/#x?.py");
  CHECK(decoded("file:///a/100%25.py") == "/a/100%.py");
  // Not escaped by every client: taken as they are.
  CHECK(decoded("file:///home/u/été.py") == "/home/u/été.py");
  CHECK(decoded("file:///a/b c.py") == "/a/b c.py");
  // Query and fragment are not part of the path.
  CHECK(decoded("file:///a/b.py?x=1") == "/a/b.py");
  CHECK(decoded("file:///a/b.py#L3") == "/a/b.py");
}

TEST_CASE("uri: what is not a local file is rejected") {
  CHECK(decoded("untitled:Untitled-1") == "<none>");
  CHECK(decoded("https://example.com/a.py") == "<none>");
  CHECK(decoded("file://server/share/a.py") == "<none>");  // a remote host
  CHECK(decoded("file://localhost") == "<none>");
  CHECK(decoded("file:a.py") == "<none>");         // relative
  CHECK(decoded("file:///a/%zz.py") == "<none>");  // malformed escapes
  CHECK(decoded("file:///a/b%2") == "<none>");
  CHECK(decoded("file:///a/b%") == "<none>");
  CHECK(decoded("file:///a/%00.py") == "<none>");    // would truncate the path
  CHECK(decoded("file:///a/x%2Fy.py") == "<none>");  // would add a path segment
  CHECK(decoded("") == "<none>");
}

TEST_CASE("uri: paths encode to URIs that decode back") {
  CHECK(pathToUri("/home/u/train.py") == "file:///home/u/train.py");
  CHECK(pathToUri("/home/u/my project/a b.py") == "file:///home/u/my%20project/a%20b.py");
  CHECK(pathToUri("/home/u/\xC3\xA9.py") == "file:///home/u/%C3%A9.py");
  CHECK(pathToUri("/a/#x?%.py") == "file:///a/%23x%3F%25.py");
  for (const char* p : {"/", "/a/b.py", "/with space/x y.py", "/%41/100%.py", "/\xE6\xA8\xA1/\xF0\x9F\x98\x80.py",
                        "/a:b/c@d/[e]/f+g,h;i=j&k.py", "/tab\there"})
    CHECK(decoded(pathToUri(p)) == p);
}

TEST_CASE("workspace: the root from initialize and relative paths of URIs") {
  InitializeParams ip;
  CHECK_FALSE(Workspace::fromInitialize(ip).hasRoot());
  ip.rootPath = "/ws/legacy";
  CHECK(Workspace::fromInitialize(ip).root() == "/ws/legacy");
  ip.workspaceFolders = {"file:///ws/folder"};
  CHECK(Workspace::fromInitialize(ip).root() == "/ws/folder");
  ip.rootUri = "file://localhost/ws/my%20root/";
  Workspace ws = Workspace::fromInitialize(ip);
  CHECK(ws.root() == "/ws/my root/");
  // A rootUri that is not a local directory falls back to the next source.
  ip.rootUri = "vscode-vfs://github/x";
  CHECK(Workspace::fromInitialize(ip).root() == "/ws/folder");

  CHECK(ws.relativePath("file:///ws/my%20root/pkg/m%C3%A9.py") == "pkg/m\xC3\xA9.py");
  CHECK(ws.relativePath("file://localhost/ws/my%20root/a.py") == "a.py");
  CHECK_FALSE(ws.relativePath("file:///ws/other/a.py"));
  CHECK_FALSE(ws.relativePath("file:///ws/my%20root/../x.py"));
  CHECK_FALSE(ws.relativePath("untitled:Untitled-1"));
  CHECK_FALSE(Workspace().relativePath("file:///ws/a.py"));

  CHECK(ws.resolve("data/p.sqlite") == fs::path("/ws/my root/data/p.sqlite"));
  CHECK(ws.resolve("/abs/p.sqlite") == fs::path("/abs/p.sqlite"));
  CHECK(Workspace().resolve("rel.sqlite") == fs::path("rel.sqlite"));
}
