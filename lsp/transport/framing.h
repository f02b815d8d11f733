// Content-Length framing (LSP base protocol) as a pure, incremental parser: bytes in, message
// bodies and framing errors out. No I/O, no JSON; the stdio and in-memory transports feed it.
//
// Recovery contract: every malformed input yields one FrameEvent::Error and the parser
// resynchronises on the next "Content-Length" header, so a bad message never stops the stream.
// An oversized message (Content-Length > maxBodyBytes) is reported and its body skipped without
// being buffered. Memory use is bounded by maxBodyBytes + maxHeaderBytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lsp {

struct FrameEvent {
  enum class Kind { Message, Error };
  Kind kind = Kind::Message;
  std::string text;  // the body for Message, a one-line description for Error
};

struct FrameLimits {
  size_t maxBodyBytes = 64u << 20;   // 64 MiB
  size_t maxHeaderBytes = 8u << 10;  // all header lines of one message together
};

class FrameParser {
 public:
  explicit FrameParser(FrameLimits limits = {}) : limits_(limits) {}

  /// Consumes `bytes` (any split: partial headers, several messages at once) and appends the
  /// complete messages and errors found, in stream order, to `out`.
  void feed(std::string_view bytes, std::vector<FrameEvent>& out);
  /// End of input: reports an error if a message was cut off. The parser is reset.
  void finish(std::vector<FrameEvent>& out);

 private:
  enum class State { Header, Body, Skip, Resync };
  bool parseHeader(std::string_view header, std::vector<FrameEvent>& out);
  void resync(std::string message, std::vector<FrameEvent>& out);

  FrameLimits limits_;
  State state_ = State::Header;
  std::string buf_;           // unconsumed header bytes, or the body so far
  size_t bodyLen_ = 0;        // Body / Skip: bytes still expected (Skip) or total (Body)
  bool conflicting_ = false;  // the last bad header had two different Content-Lengths
};

/// The bytes of one framed message: "Content-Length: N\r\n\r\n" + body.
std::string frameMessage(std::string_view body);

/// How messages are delimited on a stream: LSP's Content-Length headers, or one JSON text per
/// line (the MCP stdio transport: newline-delimited, no embedded newlines, a trailing "\r"
/// tolerated, blank lines skipped).
enum class Framing { ContentLength, Lines };

/// Newline-delimited framing as a pure, incremental parser (the same contract as FrameParser):
/// a line longer than maxBodyBytes is reported once and skipped without being buffered.
class LineParser {
 public:
  explicit LineParser(FrameLimits limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes, std::vector<FrameEvent>& out);
  /// End of input: a last line without its newline is still a message. The parser is reset.
  void finish(std::vector<FrameEvent>& out);

 private:
  void emit(std::vector<FrameEvent>& out);
  FrameLimits limits_;
  std::string buf_;
  bool skipping_ = false;  // inside an oversized line
};

/// The bytes of one message in `framing`.
std::string frameMessage(std::string_view body, Framing framing);

}  // namespace kl::lsp
