// A small streaming pull tokenizer for JSON (RFC 8259), for multi-hundred-MB traces: input
// comes from a ByteSource in chunks, memory use is bounded by the largest single token.
// Structure is validated (commas, colons, nesting); the first error stops the stream with a
// one-line message carrying the byte offset. Lenient on: raw control characters inside
// strings, invalid UTF-8 (passed through), lone surrogate escapes (-> U+FFFD).
//
//   JsonPull p(src);
//   for (auto t = p.next(); t != JsonPull::Tok::End; t = p.next()) { if (t == Error) ...; }
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/gzip.h"

namespace kl::profile {

class JsonPull {
 public:
  enum class Tok : uint8_t { ObjBegin, ObjEnd, ArrBegin, ArrEnd, Key, String, Number, True, False, Null, End, Error };

  explicit JsonPull(ByteSource& src, size_t maxToken = size_t{1} << 30);

  /// The next token. Object keys come as Key (the value follows as the next token).
  /// After End or Error, keeps returning the same.
  Tok next();
  /// Text of the current Key / String (unescaped) or Number (raw). Valid until next().
  std::string_view text() const { return text_; }
  /// Skips the value whose first token was just returned (`first`): nested containers are
  /// consumed through their closing bracket. Returns false on error.
  bool skip(Tok first);
  /// Convenience: true if the current token begins a value (not a closing/key/end/error).
  static bool isValueStart(Tok t) {
    return t == Tok::ObjBegin || t == Tok::ArrBegin || t == Tok::String || t == Tok::Number || t == Tok::True ||
           t == Tok::False || t == Tok::Null;
  }
  /// Current nesting depth (0 at top level).
  size_t depth() const { return stack_.size(); }
  const std::string& error() const { return error_; }
  /// The input could not be read: error() is the byte source's own (it names the file).
  bool sourceFailed() const { return sourceFailed_; }
  /// Bytes consumed so far (for messages).
  uint64_t offset() const { return consumed_ + pos_; }

 private:
  enum class Ctx : uint8_t { Obj, Arr };
  enum class Expect : uint8_t { Value, KeyOrEnd, Key, Colon, CommaOrEnd, ValueOrEnd, Done };

  bool fill(size_t keepFrom);  // reads more input; keeps [keepFrom, end) (moved to front)
  bool peekByte(char& c);      // skips whitespace; false at end of input (or error)
  Tok fail(std::string msg);
  Tok lexString(bool isKey);
  Tok lexNumber();
  Tok lexLiteral(std::string_view word, Tok t);
  void afterValue();

  ByteSource& src_;
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  bool sourceFailed_ = false;
  uint64_t consumed_ = 0;  // bytes dropped from the front of buf_
  bool eof_ = false;
  size_t maxToken_;
  std::vector<Ctx> stack_;
  Expect expect_ = Expect::Value;
  std::string_view text_;
  std::string scratch_;
  std::string error_;
  Tok last_ = Tok::Null;
  bool finished_ = false;
};

/// Parses a JSON number's raw text as microseconds and returns nanoseconds, exactly for
/// decimal notation ("1694128201545.123" -> 1694128201545123); via double for exponents.
/// false if not a number.
bool parseMicrosToNs(std::string_view raw, int64_t& ns);
/// Parses an integer (a decimal JSON number without fraction/exponent, or one whose value is
/// integral). false otherwise.
bool parseInt64(std::string_view raw, int64_t& out);

}  // namespace kl::profile
