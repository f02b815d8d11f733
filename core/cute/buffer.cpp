#include "core/cute/buffer.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace kl::cute {
namespace {

int64_t readLe64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return static_cast<int64_t>(v);
}

std::vector<int64_t> wordsOf(std::string_view bytes) {
  std::vector<int64_t> w(bytes.size() / 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = readLe64(reinterpret_cast<const unsigned char*>(bytes.data()) + 8 * i);
  return w;
}

// Value of key `key` in a numpy header dict literal (text up to the next top-level ',' or '}').
std::optional<std::string> dictValue(std::string_view h, std::string_view key) {
  for (char q : {'\'', '"'}) {
    std::string k = std::string(1, q) + std::string(key) + std::string(1, q);
    size_t p = h.find(k);
    if (p == std::string_view::npos) continue;
    p = h.find(':', p + k.size());
    if (p == std::string_view::npos) return std::nullopt;
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    int depth = 0;
    size_t e = p;
    for (; e < h.size(); ++e) {
      char c = h[e];
      if (c == '(' || c == '[')
        ++depth;
      else if (c == ')' || c == ']')
        --depth;
      else if ((c == ',' || c == '}') && depth == 0)
        break;
    }
    std::string v(h.substr(p, e - p));
    while (!v.empty() && v.back() == ' ') v.pop_back();
    return v;
  }
  return std::nullopt;
}

}  // namespace

int64_t EventBuffer::totalOverflow() const {
  int64_t t = 0;
  for (int64_t o : overflow) t += o;
  return t;
}

Result<std::vector<int64_t>> parseNpy(std::string_view b, std::vector<int64_t>& shape) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    return Error::invalid("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(b[6]);
  size_t hlen = 0, off = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) | (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return Error::invalid(".npy header truncated");
    hlen = 0;
    for (int i = 3; i >= 0; --i) hlen = (hlen << 8) | static_cast<unsigned char>(b[8 + i]);
    off = 12;
  } else {
    return Error::unsupported(".npy format version " + std::to_string(major) + " is not supported");
  }
  if (off + hlen > b.size()) return Error::invalid(".npy header truncated");
  std::string_view h = b.substr(off, hlen);
  auto descr = dictValue(h, "descr");
  auto fortran = dictValue(h, "fortran_order");
  auto shp = dictValue(h, "shape");
  if (!descr || !fortran || !shp) return Error::invalid(".npy header lacks descr/fortran_order/shape");
  std::string d = *descr;
  if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"')) d = d.substr(1, d.size() - 2);
  if (d != "<i8" && d != "|i8" && d != "<u8" && d != "=i8")
    return Error::unsupported(".npy dtype " + d + " (the event buffer must be int64 little-endian, <i8)");
  if (*fortran != "False") return Error::unsupported(".npy fortran_order=True is not supported");
  shape.clear();
  std::string s = *shp;
  int64_t total = 1;
  std::string num;
  for (char c : s + ",") {
    if (c >= '0' && c <= '9')
      num.push_back(c);
    else if (c == ',' && !num.empty()) {
      shape.push_back(std::stoll(num));
      total *= shape.back();
      num.clear();
    }
  }
  if (shape.empty() || shape.size() > 2) return Error::unsupported(".npy shape " + s + ": expected 1-D or 2-D");
  std::string_view data = b.substr(off + hlen);
  if (data.size() < static_cast<size_t>(total) * 8)
    return Error::invalid(".npy data truncated: " + std::to_string(data.size()) + " bytes for " +
                          std::to_string(total) + " int64 values");
  return wordsOf(data.substr(0, static_cast<size_t>(total) * 8));
}

Result<EventBuffer> decodeWords(const std::vector<int64_t>& words, std::optional<int64_t> capacity) {
  if (words.empty()) return Error::invalid("empty event buffer (expected [count, start_ns, dur_ns, tag_id, tid, ...])");
  EventBuffer buf;
  int64_t n = static_cast<int64_t>(words.size());
  if (capacity) {
    if (*capacity < 0) return Error::invalid("capacity must not be negative");
    int64_t slice = 1 + 4 * *capacity;
    if (n % slice != 0)
      return Error::invalid("malformed event buffer: " + std::to_string(n) + " words is not a multiple of 1 + 4 x " +
                            std::to_string(*capacity) + " (= " + std::to_string(slice) + ") words per unit");
    buf.units = n / slice;
    buf.capacity = *capacity;
  } else {
    if ((n - 1) % 4 != 0)
      return Error::invalid("malformed event buffer: " + std::to_string(n) +
                            " words is not 1 + 4k (a count then 4 words per event)");
    buf.units = 1;
    buf.capacity = (n - 1) / 4;
  }
  const int64_t slice = 1 + 4 * buf.capacity;
  buf.overflow.assign(static_cast<size_t>(buf.units), 0);
  int64_t badDur = 0;
  for (int64_t u = 0; u < buf.units; ++u) {
    const int64_t* w = words.data() + u * slice;
    int64_t count = w[0];
    if (count < 0)
      return Error::invalid("malformed event buffer: unit " + std::to_string(u) + " has a negative count (" +
                            std::to_string(count) + ")");
    if (count > buf.capacity) buf.overflow[static_cast<size_t>(u)] = count - buf.capacity;
    int64_t used = std::min(count, buf.capacity);
    for (int64_t i = 0; i < used; ++i) {
      RegionEvent e{w[1 + 4 * i], w[2 + 4 * i], w[3 + 4 * i], w[4 + 4 * i], u};
      if (e.startNs == 0 && e.durNs == 0) {
        ++buf.unwritten;
        continue;
      }
      if (e.durNs < 0 || e.durNs > 10'000'000'000LL || e.tag < 0) {
        ++badDur;
        continue;
      }
      buf.events.push_back(e);
    }
  }
  if (badDur)
    buf.warnings.push_back(std::to_string(badDur) +
                           " event(s) skipped: negative tag, or duration negative or above 10 s (torn write?)");
  if (buf.unwritten)
    buf.warnings.push_back(std::to_string(buf.unwritten) + " counted slot(s) never written (region not closed?)");
  if (int64_t o = buf.totalOverflow())
    buf.warnings.push_back("overflow: the kernel recorded " + std::to_string(o) +
                           " event(s) beyond the buffer capacity of " + std::to_string(buf.capacity) +
                           " per unit; they were lost (allocate a larger buffer)");
  return buf;
}

Result<EventBuffer> readEventBuffer(const std::filesystem::path& path, std::optional<int64_t> capacity) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::io(path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  auto prefix = [&](Error e) { return Error{e.code, path.string() + ": " + e.message}; };
  std::vector<int64_t> words;
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY", 6) == 0) {
    std::vector<int64_t> shape;
    auto w = parseNpy(bytes, shape);
    if (!w) return prefix(w.error());
    words = std::move(*w);
    if (shape.size() == 2 && !capacity) {
      if (shape[1] < 1 || (shape[1] - 1) % 4 != 0)
        return prefix(
            Error::invalid("malformed event buffer: rows of " + std::to_string(shape[1]) + " words are not 1 + 4k"));
      capacity = (shape[1] - 1) / 4;
    }
  } else {
    if (bytes.size() % 8 != 0)
      return prefix(Error::invalid("malformed event buffer: " + std::to_string(bytes.size()) +
                                   " bytes is not a whole number of int64 words"));
    words = wordsOf(bytes);
  }
  auto r = decodeWords(words, capacity);
  if (!r) return prefix(r.error());
  return r;
}

}  // namespace kl::cute
