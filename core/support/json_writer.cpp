#include "core/support/json_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kl::json {
namespace {

/// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes there are not one.
size_t utf8SeqLen(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Reject overlong forms, surrogates and code points past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

void appendQuoted(std::string& out, std::string_view s, bool htmlSafe) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8SeqLen(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not valid UTF-8
        ++i;
        continue;
      }
      // U+2028/2029 are valid JSON but break JavaScript string literals: escape them.
      if (n == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
          (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
        out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      } else {
        out.append(s.data() + i, n);
      }
      i += n;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F || (htmlSafe && (c == '<' || c == '>' || c == '&'))) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

std::string quoted(std::string_view s, bool htmlSafe) {
  std::string out;
  out.reserve(s.size() + 2);
  appendQuoted(out, s, htmlSafe);
  return out;
}

Writer::Writer(std::ostream& out, int indent, bool htmlSafe) : out_(out), indent_(indent), htmlSafe_(htmlSafe) {}

void Writer::newline() {
  if (indent_ <= 0) return;
  out_.put('\n');
  for (size_t i = 0; i < stack_.size() * static_cast<size_t>(indent_); ++i) out_.put(' ');
}

void Writer::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (stack_.empty()) {
    assert(!wroteTop_ && "json::Writer: a second top-level value");
    wroteTop_ = true;
    return;
  }
  Frame& f = stack_.back();
  assert(f.ctx == Ctx::Array && "json::Writer: value in an object without a key");
  if (!f.first) out_.put(',');
  f.first = false;
  newline();
}

Writer& Writer::key(std::string_view k) {
  assert(!stack_.empty() && stack_.back().ctx == Ctx::Object && !afterKey_);
  Frame& f = stack_.back();
  if (!f.first) out_.put(',');
  f.first = false;
  newline();
  scratch_.clear();
  appendQuoted(scratch_, k, htmlSafe_);
  put(scratch_);
  out_.put(':');
  if (indent_ > 0) out_.put(' ');
  afterKey_ = true;
  return *this;
}

Writer& Writer::beginObject() {
  beforeValue();
  out_.put('{');
  stack_.push_back({Ctx::Object, true});
  return *this;
}

Writer& Writer::endObject() {
  assert(!stack_.empty() && stack_.back().ctx == Ctx::Object && !afterKey_);
  bool empty = stack_.back().first;
  stack_.pop_back();
  if (!empty) newline();
  out_.put('}');
  return *this;
}

Writer& Writer::beginArray() {
  beforeValue();
  out_.put('[');
  stack_.push_back({Ctx::Array, true});
  return *this;
}

Writer& Writer::endArray() {
  assert(!stack_.empty() && stack_.back().ctx == Ctx::Array);
  bool empty = stack_.back().first;
  stack_.pop_back();
  if (!empty) newline();
  out_.put(']');
  return *this;
}

Writer& Writer::value(std::string_view s) {
  beforeValue();
  scratch_.clear();
  appendQuoted(scratch_, s, htmlSafe_);
  put(scratch_);
  return *this;
}

Writer& Writer::value(bool b) {
  beforeValue();
  put(b ? "true" : "false");
  return *this;
}

Writer& Writer::writeInt(long long v) {
  beforeValue();
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  return *this;
}

Writer& Writer::writeUint(unsigned long long v) {
  beforeValue();
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  return *this;
}

Writer& Writer::value(double v) {
  if (!std::isfinite(v)) return null();
  beforeValue();
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  return *this;
}

Writer& Writer::valueFixed(double v, int decimals) {
  if (!std::isfinite(v)) return null();
  beforeValue();
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals < 0 ? 0 : decimals);
  if (r.ec != std::errc()) {
    r = std::to_chars(buf, buf + sizeof buf, v);
  }
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  if (s == "-0" || s.rfind("-0.", 0) == 0) {
    // "-0.000" is valid JSON but noisy; a rounded negative zero is written as zero.
    bool allZero = true;
    for (char c : s.substr(1))
      if (c != '0' && c != '.') allZero = false;
    if (allZero) s.remove_prefix(1);
  }
  put(s);
  return *this;
}

Writer& Writer::null() {
  beforeValue();
  put("null");
  return *this;
}

Writer& Writer::raw(std::string_view json) {
  beforeValue();
  put(json);
  return *this;
}

}  // namespace kl::json
