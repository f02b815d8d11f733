#include "core/profile/json_pull.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/support/utf8.h"

namespace kl::profile {

namespace {
constexpr size_t kChunk = size_t{1} << 20;
constexpr size_t kMaxDepth = 100000;

bool isWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

int hexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read4(std::string_view s, size_t i, uint32_t& v) {
  if (i + 4 > s.size()) return false;
  v = 0;
  for (size_t k = 0; k < 4; ++k) {
    int h = hexVal(s[i + k]);
    if (h < 0) return false;
    v = v * 16 + static_cast<uint32_t>(h);
  }
  return true;
}

/// Validates JSON number grammar.
bool validNumber(std::string_view s) {
  size_t i = 0, n = s.size();
  if (i < n && s[i] == '-') ++i;
  if (i >= n) return false;
  if (s[i] == '0') {
    ++i;
  } else if (s[i] >= '1' && s[i] <= '9') {
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
  } else {
    return false;
  }
  if (i < n && s[i] == '.') {
    ++i;
    size_t d = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == d) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t d = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == d) return false;
  }
  return i == n;
}

}  // namespace

JsonPull::JsonPull(ByteSource& src, size_t maxToken) : src_(src), maxToken_(maxToken) {}

bool JsonPull::fill(size_t keepFrom) {
  if (eof_) return false;
  if (keepFrom > 0) {
    std::memmove(buf_.data(), buf_.data() + keepFrom, end_ - keepFrom);
    consumed_ += keepFrom;
    pos_ -= std::min(pos_, keepFrom);
    end_ -= keepFrom;
  }
  if (buf_.size() - end_ < kChunk / 2) buf_.resize(std::max(buf_.size() * 2, end_ + kChunk));
  auto n = src_.read(buf_.data() + end_, buf_.size() - end_);
  if (!n) {
    error_ = n.error().message;
    sourceFailed_ = true;
    eof_ = true;
    return false;
  }
  if (*n == 0) {
    eof_ = true;
    return false;
  }
  end_ += *n;
  return true;
}

bool JsonPull::peekByte(char& c) {
  while (true) {
    while (pos_ < end_ && isWs(buf_[pos_])) ++pos_;
    if (pos_ < end_) {
      c = buf_[pos_];
      return true;
    }
    if (!fill(pos_)) return false;
  }
}

JsonPull::Tok JsonPull::fail(std::string msg) {
  if (error_.empty()) error_ = std::move(msg) + " at byte " + std::to_string(offset());
  finished_ = true;
  last_ = Tok::Error;
  return Tok::Error;
}

void JsonPull::afterValue() { expect_ = stack_.empty() ? Expect::Done : Expect::CommaOrEnd; }

JsonPull::Tok JsonPull::lexString(bool isKey) {
  size_t i = pos_ + 1;
  bool escapes = false;
  while (true) {
    while (i < end_) {
      char c = buf_[i];
      if (c == '"') break;
      if (c == '\\') {
        if (i + 1 >= end_) break;  // need the escaped byte
        escapes = true;
        i += 2;
        continue;
      }
      ++i;
    }
    if (i < end_ && buf_[i] == '"') break;
    if (i - pos_ > maxToken_) return fail("string longer than the token limit");
    size_t old = pos_;
    if (!fill(pos_)) {
      if (!error_.empty()) return fail(error_);
      return fail("unterminated string (truncated input?)");
    }
    i -= old;
  }
  std::string_view raw(buf_.data() + pos_ + 1, i - pos_ - 1);
  pos_ = i + 1;
  if (!escapes) {
    text_ = raw;
  } else {
    scratch_.clear();
    scratch_.reserve(raw.size());
    for (size_t k = 0; k < raw.size(); ++k) {
      char c = raw[k];
      if (c != '\\') {
        scratch_ += c;
        continue;
      }
      char e = raw[++k];
      switch (e) {
        case '"': scratch_ += '"'; break;
        case '\\': scratch_ += '\\'; break;
        case '/': scratch_ += '/'; break;
        case 'b': scratch_ += '\b'; break;
        case 'f': scratch_ += '\f'; break;
        case 'n': scratch_ += '\n'; break;
        case 'r': scratch_ += '\r'; break;
        case 't': scratch_ += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!read4(raw, k + 1, cp)) return fail("bad \\u escape");
          k += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (k + 2 < raw.size() && raw[k + 1] == '\\' && raw[k + 2] == 'u' && read4(raw, k + 3, lo) &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              k += 6;
            } else {
              cp = 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          utf8::append(scratch_, cp);
          break;
        }
        default: return fail("bad escape in string");
      }
    }
    text_ = scratch_;
  }
  return isKey ? Tok::Key : Tok::String;
}

JsonPull::Tok JsonPull::lexNumber() {
  size_t i = pos_;
  while (true) {
    while (i < end_) {
      char c = buf_[i];
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')
        ++i;
      else
        break;
    }
    if (i < end_ || eof_) break;
    if (i - pos_ > 4096) return fail("number too long");
    size_t old = pos_;
    if (!fill(pos_)) {
      if (!error_.empty()) return fail(error_);
    }
    i -= old;
  }
  std::string_view raw(buf_.data() + pos_, i - pos_);
  if (!validNumber(raw)) return fail("invalid number");
  text_ = raw;
  pos_ = i;
  return Tok::Number;
}

JsonPull::Tok JsonPull::lexLiteral(std::string_view word, Tok t) {
  while (end_ - pos_ < word.size()) {
    if (!fill(pos_)) break;
  }
  if (end_ - pos_ < word.size() || std::string_view(buf_.data() + pos_, word.size()) != word)
    return fail("invalid literal");
  pos_ += word.size();
  text_ = {};
  return t;
}

JsonPull::Tok JsonPull::next() {
  if (finished_) return last_;
  char c;
  while (true) {
    if (!peekByte(c)) {
      if (!error_.empty()) return fail(error_);
      if (expect_ == Expect::Done) {
        finished_ = true;
        last_ = Tok::End;
        return Tok::End;
      }
      return fail("unexpected end of input (truncated?)");
    }
    switch (expect_) {
      case Expect::Done: return fail("unexpected data after the JSON value");
      case Expect::Colon:
        if (c != ':') return fail("expected ':'");
        ++pos_;
        expect_ = Expect::Value;
        continue;
      case Expect::CommaOrEnd:
        if (c == ',') {
          ++pos_;
          expect_ = stack_.back() == Ctx::Obj ? Expect::Key : Expect::Value;
          continue;
        }
        if (c == '}' && stack_.back() == Ctx::Obj) {
          ++pos_;
          stack_.pop_back();
          afterValue();
          return last_ = Tok::ObjEnd;
        }
        if (c == ']' && stack_.back() == Ctx::Arr) {
          ++pos_;
          stack_.pop_back();
          afterValue();
          return last_ = Tok::ArrEnd;
        }
        return fail("expected ',' or a closing bracket");
      case Expect::KeyOrEnd:
        if (c == '}') {
          ++pos_;
          stack_.pop_back();
          afterValue();
          return last_ = Tok::ObjEnd;
        }
        [[fallthrough]];
      case Expect::Key: {
        if (c != '"') return fail("expected a string key");
        Tok t = lexString(true);
        if (t == Tok::Error) return t;
        expect_ = Expect::Colon;
        return last_ = t;
      }
      case Expect::ValueOrEnd:
        if (c == ']') {
          ++pos_;
          stack_.pop_back();
          afterValue();
          return last_ = Tok::ArrEnd;
        }
        [[fallthrough]];
      case Expect::Value: {
        Tok t;
        if (c == '{' || c == '[') {
          if (stack_.size() >= kMaxDepth) return fail("nesting too deep");
          ++pos_;
          bool obj = c == '{';
          stack_.push_back(obj ? Ctx::Obj : Ctx::Arr);
          expect_ = obj ? Expect::KeyOrEnd : Expect::ValueOrEnd;
          text_ = {};
          return last_ = obj ? Tok::ObjBegin : Tok::ArrBegin;
        }
        if (c == '"')
          t = lexString(false);
        else if (c == '-' || (c >= '0' && c <= '9'))
          t = lexNumber();
        else if (c == 't')
          t = lexLiteral("true", Tok::True);
        else if (c == 'f')
          t = lexLiteral("false", Tok::False);
        else if (c == 'n')
          t = lexLiteral("null", Tok::Null);
        else
          return fail("unexpected character");
        if (t == Tok::Error) return t;
        afterValue();
        return last_ = t;
      }
    }
  }
}

bool JsonPull::skip(Tok first) {
  if (first == Tok::Error || first == Tok::End) return false;
  if (first != Tok::ObjBegin && first != Tok::ArrBegin) return true;
  size_t target = depth() - 1;
  while (depth() > target) {
    Tok t = next();
    if (t == Tok::Error || t == Tok::End) return false;
  }
  return true;
}

bool parseInt64(std::string_view raw, int64_t& out) {
  if (raw.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (raw[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i >= raw.size()) return false;
  uint64_t v = 0;
  for (; i < raw.size(); ++i) {
    char c = raw[i];
    if (c < '0' || c > '9') {
      // Integral value written with a fraction/exponent ("3.0", "1e3").
      double d = std::strtod(std::string(raw).c_str(), nullptr);
      if (!std::isfinite(d) || std::fabs(d) > 9.2e18 || d != std::floor(d)) return false;
      out = static_cast<int64_t>(d);
      return true;
    }
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool parseMicrosToNs(std::string_view raw, int64_t& ns) {
  if (raw.empty()) return false;
  size_t i = 0;
  bool neg = raw[0] == '-';
  if (neg) i = 1;
  uint64_t ip = 0;
  size_t digits = 0;
  for (; i < raw.size() && raw[i] >= '0' && raw[i] <= '9'; ++i, ++digits) {
    if (ip > UINT64_MAX / 10 / 1000) return false;
    ip = ip * 10 + static_cast<uint64_t>(raw[i] - '0');
  }
  if (digits == 0) return false;
  uint64_t frac = 0;
  int fd = 0;
  bool roundUp = false;
  if (i < raw.size() && raw[i] == '.') {
    ++i;
    for (; i < raw.size() && raw[i] >= '0' && raw[i] <= '9'; ++i) {
      if (fd < 3) {
        frac = frac * 10 + static_cast<uint64_t>(raw[i] - '0');
        ++fd;
      } else if (fd == 3) {
        roundUp = raw[i] >= '5';
        fd = 4;
      }
    }
  }
  if (i < raw.size()) {  // exponent: go through double
    double d = std::strtod(std::string(raw).c_str(), nullptr);
    if (!std::isfinite(d) || std::fabs(d) > 9.0e15) return false;
    ns = static_cast<int64_t>(std::llround(d * 1000.0));
    return true;
  }
  int used = std::min(fd, 3);
  for (int k = used; k < 3; ++k) frac *= 10;
  uint64_t v = ip * 1000 + frac + (roundUp ? 1 : 0);
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  ns = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace kl::profile
