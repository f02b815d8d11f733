// Content-Length framing: partial reads, several messages per read, bad headers, oversized
// bodies, resynchronisation, end of input.
#include "lsp/transport/framing.h"

#include <doctest/doctest.h>

using namespace kl::lsp;

namespace {

/// Feeds `input` in chunks of `chunk` bytes (0 = all at once), then finishes. Returns
/// "M:<body>" / "E:<error>" per event.
std::vector<std::string> parse(std::string_view input, size_t chunk = 0, FrameLimits limits = {}) {
  FrameParser p(limits);
  std::vector<FrameEvent> events;
  if (chunk == 0) chunk = input.size() ? input.size() : 1;
  for (size_t i = 0; i < input.size(); i += chunk) p.feed(input.substr(i, chunk), events);
  p.finish(events);
  std::vector<std::string> out;
  for (auto& e : events) out.push_back((e.kind == FrameEvent::Kind::Message ? "M:" : "E:") + e.text);
  return out;
}

bool isError(const std::string& s) { return s.rfind("E:", 0) == 0; }

}  // namespace

TEST_CASE("framing: one message, any chunking") {
  std::string in = frameMessage(R"({"a":1})");
  for (size_t chunk : {0, 1, 2, 3, 7, 20}) {
    CAPTURE(chunk);
    CHECK(parse(in, chunk) == std::vector<std::string>{R"(M:{"a":1})"});
  }
}

TEST_CASE("framing: several messages in one read, and split across reads") {
  std::string in = frameMessage("one") + frameMessage("") + frameMessage("three");
  std::vector<std::string> want = {"M:one", "M:", "M:three"};
  CHECK(parse(in) == want);
  CHECK(parse(in, 1) == want);
  CHECK(parse(in, 5) == want);
}

TEST_CASE("framing: header details") {
  // Other headers are ignored; the name is case-insensitive; spaces around the value are fine.
  CHECK(parse("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  2 \r\n\r\nhi") ==
        std::vector<std::string>{"M:hi"});
  // Lenient: bare "\n" line ends and stray blank lines between messages.
  CHECK(parse("Content-Length: 2\n\nhi\r\n\r\nContent-Length: 1\r\n\r\nx") == std::vector<std::string>{"M:hi", "M:x"});
  // Duplicate but equal Content-Length is accepted.
  CHECK(parse("Content-Length: 1\r\nContent-Length: 1\r\n\r\nx") == std::vector<std::string>{"M:x"});
}

TEST_CASE("framing: a bad header is reported and the next message still arrives") {
  std::string good = frameMessage("ok");
  for (std::string bad :
       {std::string("Content-Length: abc\r\n\r\n{}"), std::string("Content-Length: -5\r\n\r\n{}"),
        std::string("Content-Length: 99999999999999999999999\r\n\r\n{}"),
        std::string("Content-Type: x\r\n\r\n{\"no\":\"length\"}"), std::string("garbage without colon\r\n\r\n"),
        std::string("Content-Length: 1\r\nContent-Length: 2\r\n\r\nxy")}) {
    CAPTURE(bad);
    for (size_t chunk : {0, 1, 3}) {
      auto events = parse(bad + good, chunk);
      REQUIRE(events.size() == 2);
      CHECK(isError(events[0]));
      CHECK(events[1] == "M:ok");
    }
  }
}

TEST_CASE("framing: oversized message is skipped without buffering, then serving continues") {
  FrameLimits limits;
  limits.maxBodyBytes = 10;
  std::string in = "Content-Length: 11\r\n\r\n" + std::string(11, 'x') + frameMessage("small");
  for (size_t chunk : {0, 1, 4}) {
    auto events = parse(in, chunk, limits);
    REQUIRE(events.size() == 2);
    CHECK(events[0].find("exceeds the limit") != std::string::npos);
    CHECK(events[1] == "M:small");
  }
}

TEST_CASE("framing: endless header without a blank line") {
  FrameLimits limits;
  limits.maxHeaderBytes = 64;
  std::string in = "Content-Length: 5" + std::string(200, ' ') + "x\r\n" + frameMessage("after");
  auto events = parse(in, 0, limits);
  REQUIRE(events.size() == 2);
  CHECK(events[0].find("header longer") != std::string::npos);
  CHECK(events[1] == "M:after");
  // Pure garbage with no newline at all: one error, then nothing, and no hang.
  auto garbage = parse(std::string(1000, 'g'), 7, limits);
  REQUIRE(garbage.size() == 1);
  CHECK(isError(garbage[0]));
}

TEST_CASE("framing: input ending mid-message is reported") {
  CHECK(parse("Content-Length: 10\r\n\r\nabc") ==
        std::vector<std::string>{"E:input ended inside a message body (3 of 10 bytes)"});
  CHECK(parse("Content-Len") == std::vector<std::string>{"E:input ended inside a message header"});
  CHECK(parse("").empty());
  CHECK(parse("\r\n\r\n").empty());
}

TEST_CASE("framing: resynchronises on a Content-Length split across reads") {
  // The bad header is followed by junk and a header whose keyword arrives in two pieces.
  std::string in = "X: y\r\n\r\njunkjunk" + frameMessage("ok");
  for (size_t chunk = 1; chunk < 12; ++chunk) {
    CAPTURE(chunk);
    auto events = parse(in, chunk);
    REQUIRE(events.size() == 2);
    CHECK(events[1] == "M:ok");
  }
}

TEST_CASE("framing: a frame right after junk bytes is not swallowed") {
  std::string frame = frameMessage(R"({"id":7})");
  for (std::string junk :
       {"garbage\r\n", "garbage", "xx: yy\r\nzz\r\n", "\x01\x02\x03\r\n", "Content-Length: 1x\r\n"}) {
    for (size_t chunk : {0, 1, 3}) {
      auto ev = parse(junk + frame + frameMessage(R"({"id":8})"), chunk);
      REQUIRE_MESSAGE(ev.size() >= 3, "junk " << junk);
      CHECK_MESSAGE(isError(ev[0]), "junk " << junk);
      CHECK_MESSAGE(ev[ev.size() - 2] == R"(M:{"id":7})", "junk '" << junk << "' chunk " << chunk);
      CHECK(ev.back() == R"(M:{"id":8})");
    }
  }
}

namespace {

/// The same for newline-delimited framing (MCP's stdio transport).
std::vector<std::string> parseLines(std::string_view input, size_t chunk = 0, FrameLimits limits = {}) {
  LineParser p(limits);
  std::vector<FrameEvent> events;
  if (chunk == 0) chunk = input.size() ? input.size() : 1;
  for (size_t i = 0; i < input.size(); i += chunk) p.feed(input.substr(i, chunk), events);
  p.finish(events);
  std::vector<std::string> out;
  for (auto& e : events) out.push_back((e.kind == FrameEvent::Kind::Message ? "M:" : "E:") + e.text);
  return out;
}

}  // namespace

TEST_CASE("line framing: one message per line, any chunking, CRLF and blank lines") {
  std::string in = "{\"a\":1}\n\n{\"b\":2}\r\n   \n{\"c\":3}";
  std::vector<std::string> want = {"M:{\"a\":1}", "M:{\"b\":2}", "M:{\"c\":3}"};
  for (size_t chunk : {0, 1, 2, 5}) CHECK(parseLines(in, chunk) == want);
  CHECK(frameMessage("{}", Framing::Lines) == "{}\n");
  CHECK(frameMessage("{}", Framing::ContentLength) == "Content-Length: 2\r\n\r\n{}");
}

TEST_CASE("line framing: an oversized line is reported once and skipped, the next one arrives") {
  FrameLimits small;
  small.maxBodyBytes = 8;
  for (size_t chunk : {0, 1, 3}) {
    auto out = parseLines("0123456789abcdef\n{\"ok\":1}\n", chunk, small);
    REQUIRE(out.size() == 2);
    CHECK(out[0].rfind("E:message longer than 8 bytes", 0) == 0);
    CHECK(out[1] == "M:{\"ok\":1}");
  }
}
