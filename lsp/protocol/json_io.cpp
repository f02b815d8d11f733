#include "lsp/protocol/json_io.h"

#include <limits>

namespace kl::lsp {

std::string JPath::str() const {
  if (!parent_) return root_->name;
  std::string s = parent_->str();
  if (index1_ > 0) return s + "[" + std::to_string(index1_ - 1) + "]";
  return s + "." + std::string(key_);
}

bool JPath::report(std::string_view message) const {
  if (root_->error.empty()) root_->error = str() + ": " + std::string(message);
  return false;
}

bool fromJson(const json& j, json& out, JPath) {
  out = j;
  return true;
}

bool fromJson(const json& j, std::string& out, JPath path) {
  if (!j.is_string()) return path.report("expected a string");
  out = j.get_ref<const std::string&>();
  return true;
}

bool fromJson(const json& j, bool& out, JPath path) {
  if (!j.is_boolean()) return path.report("expected a boolean");
  out = j.get<bool>();
  return true;
}

namespace {
template <typename Int>
bool readInteger(const json& j, Int& out, JPath path, const char* what) {
  using L = std::numeric_limits<Int>;
  if (j.is_number_unsigned()) {
    auto v = j.get<uint64_t>();
    if (v <= static_cast<uint64_t>(L::max())) {
      out = static_cast<Int>(v);
      return true;
    }
  } else if (j.is_number_integer()) {
    auto v = j.get<int64_t>();
    if (v >= static_cast<int64_t>(L::min()) && (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(L::max()))) {
      out = static_cast<Int>(v);
      return true;
    }
  }
  return path.report(what);
}
}  // namespace

bool fromJson(const json& j, int64_t& out, JPath path) { return readInteger(j, out, path, "expected an integer"); }
bool fromJson(const json& j, int32_t& out, JPath path) {
  return readInteger(j, out, path, "expected a 32-bit integer");
}
bool fromJson(const json& j, uint32_t& out, JPath path) {
  return readInteger(j, out, path, "expected an unsigned 32-bit integer");
}

bool fromJson(const json& j, double& out, JPath path) {
  if (!j.is_number()) return path.report("expected a number");
  out = j.get<double>();
  return true;
}

}  // namespace kl::lsp
