// Reading and writing protocol structs with nlohmann::json, without exceptions and with
// readable errors: a failed read names the JSON path of the offending value
// ("params.contentChanges[0].range.start.line: expected an unsigned integer").
//
// Convention (clangd's fromJSON/toJSON): each protocol type T has
//   bool fromJson(const json&, T&, JPath)   — false after reporting one error on the path
//   json toJson(const T&)
// declared next to T. LSP distinguishes an absent field from null: std::optional fields are
// omitted when empty (writeOptional) and accept absent or null when read (ObjectReader::opt).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lsp {

using json = nlohmann::json;

/// A location inside a JSON value being read, plus the sink for the first error.
/// Cheap to copy; children refer to their parent, so a JPath must not outlive its parent.
class JPath {
 public:
  /// Owns the error message; create one per top-level read.
  struct Root {
    explicit Root(std::string name) : name(std::move(name)) {}
    std::string name;   // e.g. "params"
    std::string error;  // "<path>: <message>", empty while no error
  };

  explicit JPath(Root& root) : root_(&root) {}
  JPath field(std::string_view key) const { return JPath(root_, this, key, 0); }
  JPath index(size_t i) const { return JPath(root_, this, {}, i + 1); }
  /// Records `message` at this path (only the first error is kept). Always returns false.
  bool report(std::string_view message) const;
  std::string str() const;

 private:
  JPath(Root* root, const JPath* parent, std::string_view key, size_t index1)
      : root_(root), parent_(parent), key_(key), index1_(index1) {}
  Root* root_;
  const JPath* parent_ = nullptr;
  std::string_view key_;
  size_t index1_ = 0;  // index + 1 for array elements, 0 for fields
};

bool fromJson(const json& j, json& out, JPath path);  // anything, copied
bool fromJson(const json& j, std::string& out, JPath path);
bool fromJson(const json& j, bool& out, JPath path);
bool fromJson(const json& j, int64_t& out, JPath path);
bool fromJson(const json& j, int32_t& out, JPath path);
bool fromJson(const json& j, uint32_t& out, JPath path);
bool fromJson(const json& j, double& out, JPath path);

template <typename T>
bool fromJson(const json& j, std::optional<T>& out, JPath path) {
  if (j.is_null()) {
    out.reset();
    return true;
  }
  T value{};
  if (!fromJson(j, value, path)) return false;
  out = std::move(value);
  return true;
}

template <typename T>
bool fromJson(const json& j, std::vector<T>& out, JPath path) {
  if (!j.is_array()) return path.report("expected an array");
  out.clear();
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    T value{};
    if (!fromJson(j[i], value, path.index(i))) return false;
    out.push_back(std::move(value));
  }
  return true;
}

/// Reads the fields of one JSON object:
///   ObjectReader o(j, path);
///   return o && o.req("uri", p.uri) && o.opt("version", p.version);
class ObjectReader {
 public:
  ObjectReader(const json& j, JPath path) : j_(j), path_(path) {
    if (!j.is_object()) path.report("expected an object");
  }
  explicit operator bool() const { return j_.is_object(); }

  /// A required field: absent is an error.
  template <typename T>
  bool req(const char* key, T& out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return path_.field(key).report("required field is missing");
    return fromJson(*it, out, path_.field(key));
  }
  /// An optional field: absent (or null, for std::optional) leaves `out` as it is / empty.
  template <typename T>
  bool opt(const char* key, T& out) const {
    auto it = j_.find(key);
    if (it == j_.end()) return true;
    return fromJson(*it, out, path_.field(key));
  }
  /// The raw value of a field, or nullptr.
  const json* get(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }

 private:
  const json& j_;
  JPath path_;
};

inline json toJson(const json& j) { return j; }
inline json toJson(const std::string& s) { return s; }
inline json toJson(bool b) { return b; }
inline json toJson(int64_t v) { return v; }
inline json toJson(int32_t v) { return v; }
inline json toJson(uint32_t v) { return v; }
inline json toJson(double v) { return v; }
inline json toJson(std::nullptr_t) { return nullptr; }

template <typename T>
json toJson(const std::vector<T>& v) {
  json out = json::array();
  for (const auto& x : v) out.push_back(toJson(x));
  return out;
}
/// An optional as a whole value: empty → null (e.g. a hover result).
template <typename T>
json toJson(const std::optional<T>& v) {
  return v ? toJson(*v) : json(nullptr);
}
/// An optional as a field: empty → omitted.
template <typename T>
void writeOptional(json& obj, const char* key, const std::optional<T>& v) {
  if (v) obj[key] = toJson(*v);
}

/// Parses `j` as T; on failure returns the error ("params.x: expected ...") in `error`.
template <typename T>
bool parseJson(const json& j, T& out, std::string& error, std::string rootName = "params") {
  JPath::Root root(std::move(rootName));
  if (fromJson(j, out, JPath(root))) return true;
  error = root.error.empty() ? root.name + ": invalid" : root.error;
  return false;
}

}  // namespace kl::lsp
