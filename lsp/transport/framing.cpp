#include "lsp/transport/framing.h"

#include <algorithm>
#include <cctype>

namespace kl::lsp {
namespace {

constexpr std::string_view kContentLength = "content-length";

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == y;
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Case-insensitive search for "content-length" in s from `from`.
size_t findContentLength(std::string_view s, size_t from) {
  if (s.size() < kContentLength.size()) return std::string_view::npos;
  for (size_t i = from; i + kContentLength.size() <= s.size(); ++i)
    if (iequals(s.substr(i, kContentLength.size()), kContentLength)) return i;
  return std::string_view::npos;
}

/// Printable, bounded excerpt of untrusted bytes for an error message.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (s.size() > 40) out += "...";
  return out;
}

}  // namespace

void FrameParser::resync(std::string message, std::vector<FrameEvent>& out) {
  out.push_back({FrameEvent::Kind::Error, std::move(message)});
  state_ = State::Resync;
}

bool FrameParser::parseHeader(std::string_view header, std::vector<FrameEvent>& out) {
  bool seen = false;
  size_t length = 0;
  while (!header.empty()) {
    size_t nl = header.find('\n');
    std::string_view line = header.substr(0, nl);
    header = nl == std::string_view::npos ? std::string_view() : header.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      resync("malformed header line '" + excerpt(line) + "'", out);
      return false;
    }
    if (!iequals(trim(line.substr(0, colon)), kContentLength)) continue;  // e.g. Content-Type
    std::string_view value = trim(line.substr(colon + 1));
    size_t n = 0;
    bool valid = !value.empty() && value.size() <= 18 &&
                 std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    for (char c : value) n = n * 10 + static_cast<size_t>(c - '0');
    if (!valid) {
      resync("invalid Content-Length '" + excerpt(value) + "'", out);
      return false;
    }
    if (seen && n != length) {
      conflicting_ = true;
      resync("conflicting Content-Length headers", out);
      return false;
    }
    seen = true;
    length = n;
  }
  if (!seen) {
    resync("message header without Content-Length", out);
    return false;
  }
  bodyLen_ = length;
  if (length > limits_.maxBodyBytes) {
    out.push_back({FrameEvent::Kind::Error, "message of " + std::to_string(length) + " bytes exceeds the limit of " +
                                                std::to_string(limits_.maxBodyBytes) + " bytes; skipped"});
    state_ = State::Skip;
  } else {
    state_ = State::Body;
  }
  return true;
}

void FrameParser::feed(std::string_view bytes, std::vector<FrameEvent>& out) {
  buf_.append(bytes);
  size_t pos = 0;
  for (bool progress = true; progress;) {
    progress = false;
    switch (state_) {
      case State::Header: {
        // Tolerate stray line breaks between messages.
        while (pos < buf_.size() && (buf_[pos] == '\r' || buf_[pos] == '\n')) ++pos;
        // The header ends at the first empty line ("\r\n" or, leniently, "\n").
        size_t lineStart = pos, headerEnd = std::string::npos, next = 0;
        for (size_t nl; (nl = buf_.find('\n', lineStart)) != std::string::npos; lineStart = nl + 1) {
          size_t len = nl - lineStart;
          if (len == 0 || (len == 1 && buf_[lineStart] == '\r')) {
            headerEnd = lineStart;
            next = nl + 1;
            break;
          }
          if (nl - pos > limits_.maxHeaderBytes) break;
        }
        if (headerEnd == std::string::npos) {
          if (buf_.size() - pos > limits_.maxHeaderBytes) {
            resync("message header longer than " + std::to_string(limits_.maxHeaderBytes) + " bytes", out);
            ++pos;  // never resynchronise on the header that just failed
            progress = true;
          }
          break;
        }
        std::string_view header(buf_.data() + pos, headerEnd - pos);
        size_t headerStart = pos;
        pos = next;
        // A bad header resynchronises from just after its first byte, so that a real
        // Content-Length line inside it (a frame right after junk) is not swallowed with the
        // junk; only a header with two different lengths is skipped whole.
        conflicting_ = false;
        if (!parseHeader(header, out) && !conflicting_) pos = headerStart + 1;
        progress = true;
        break;
      }
      case State::Body:
        if (buf_.size() - pos >= bodyLen_) {
          out.push_back({FrameEvent::Kind::Message, buf_.substr(pos, bodyLen_)});
          pos += bodyLen_;
          state_ = State::Header;
          progress = true;
        }
        break;
      case State::Skip: {
        size_t n = std::min(bodyLen_, buf_.size() - pos);
        pos += n;
        bodyLen_ -= n;
        if (bodyLen_ == 0) {
          state_ = State::Header;
          progress = true;
        }
        break;
      }
      case State::Resync: {
        size_t at = findContentLength(buf_, pos);
        if (at != std::string::npos) {
          pos = at;
          state_ = State::Header;
          progress = true;
        } else if (buf_.size() > pos + kContentLength.size()) {
          pos = buf_.size() - kContentLength.size();  // keep a possible split keyword
        }
        break;
      }
    }
  }
  buf_.erase(0, pos);
}

void FrameParser::finish(std::vector<FrameEvent>& out) {
  switch (state_) {
    case State::Header:
      if (buf_.find_first_not_of("\r\n") != std::string::npos)
        out.push_back({FrameEvent::Kind::Error, "input ended inside a message header"});
      break;
    case State::Body:
      out.push_back({FrameEvent::Kind::Error, "input ended inside a message body (" + std::to_string(buf_.size()) +
                                                  " of " + std::to_string(bodyLen_) + " bytes)"});
      break;
    case State::Skip: out.push_back({FrameEvent::Kind::Error, "input ended inside a skipped message body"}); break;
    case State::Resync: break;
  }
  buf_.clear();
  bodyLen_ = 0;
  state_ = State::Header;
}

std::string frameMessage(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

void LineParser::emit(std::vector<FrameEvent>& out) {
  if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
  bool blank = buf_.find_first_not_of(" \t") == std::string::npos;
  if (!blank) out.push_back({FrameEvent::Kind::Message, std::move(buf_)});
  buf_.clear();
}

void LineParser::feed(std::string_view bytes, std::vector<FrameEvent>& out) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view part = bytes.substr(0, nl);
    if (!skipping_) {
      if (buf_.size() + part.size() > limits_.maxBodyBytes) {
        out.push_back({FrameEvent::Kind::Error,
                       "message longer than " + std::to_string(limits_.maxBodyBytes) + " bytes skipped"});
        buf_.clear();
        skipping_ = true;
      } else {
        buf_.append(part);
      }
    }
    if (nl == std::string_view::npos) return;
    if (skipping_)
      skipping_ = false;
    else
      emit(out);
    bytes.remove_prefix(nl + 1);
  }
}

void LineParser::finish(std::vector<FrameEvent>& out) {
  if (!skipping_) emit(out);
  buf_.clear();
  skipping_ = false;
}

std::string frameMessage(std::string_view body, Framing framing) {
  if (framing == Framing::ContentLength) return frameMessage(body);
  std::string s(body);
  s += '\n';
  return s;
}

}  // namespace kl::lsp
