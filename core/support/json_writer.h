// A small streaming JSON writer for core (core never uses nlohmann/json). It writes straight to
// an std::ostream, so exports of millions of rows need no in-memory document.
//
//   kl::json::Writer w(out);             // compact; Writer(out, 2) pretty-prints
//   w.beginObject().key("n").value(3).key("xs").beginArray().value("a").endArray().endObject();
//
// Contract: output is always valid JSON (RFC 8259) when calls are well nested: strings are
// escaped (", \, control characters), invalid UTF-8 bytes become U+FFFD, NaN/inf become null.
// With `htmlSafe`, '<', '>' and '&' are written as \u003c etc. so the text can sit inside an HTML
// <script> element. Misnesting (a value where a key is expected, endArray inside an object) is a
// programmer error and asserts.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kl::json {

/// Appends `s` as a quoted JSON string to `out`.
void appendQuoted(std::string& out, std::string_view s, bool htmlSafe = false);
/// `s` as a quoted JSON string.
std::string quoted(std::string_view s, bool htmlSafe = false);

class Writer {
 public:
  explicit Writer(std::ostream& out, int indent = 0, bool htmlSafe = false);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  Writer& beginObject();
  Writer& endObject();
  Writer& beginArray();
  Writer& endArray();
  /// An object key; must be followed by exactly one value (or begin*).
  Writer& key(std::string_view k);

  Writer& value(std::string_view s);
  Writer& value(const char* s) { return value(std::string_view(s)); }
  Writer& value(const std::string& s) { return value(std::string_view(s)); }
  Writer& value(bool b);
  Writer& value(int v) { return writeInt(v); }
  Writer& value(long v) { return writeInt(v); }
  Writer& value(long long v) { return writeInt(v); }
  Writer& value(unsigned v) { return writeUint(v); }
  Writer& value(unsigned long v) { return writeUint(v); }
  Writer& value(unsigned long long v) { return writeUint(v); }
  Writer& value(double v);
  /// A number with exactly `decimals` digits after the point (e.g. µs with 3 decimals = exact ns).
  Writer& valueFixed(double v, int decimals);
  Writer& null();
  /// Inserts already-serialised JSON as one value (caller guarantees validity).
  Writer& raw(std::string_view json);

  template <typename T>
  Writer& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  /// True once a complete top-level value has been written and every container closed.
  bool complete() const { return stack_.empty() && wroteTop_; }

 private:
  Writer& writeInt(long long v);
  Writer& writeUint(unsigned long long v);
  void beforeValue();
  void newline();
  void put(std::string_view s) { out_.write(s.data(), static_cast<std::streamsize>(s.size())); }

  enum class Ctx : uint8_t { Array, Object };
  struct Frame {
    Ctx ctx;
    bool first = true;
  };
  std::ostream& out_;
  int indent_;
  bool htmlSafe_;
  bool afterKey_ = false;
  bool wroteTop_ = false;
  std::vector<Frame> stack_;
  std::string scratch_;
};

}  // namespace kl::json
