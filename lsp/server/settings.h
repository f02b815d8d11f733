// Workspace settings: the `kernlens` object the client sends in
// initializationOptions.kernlens and workspace/didChangeConfiguration. Features read their own
// keys with get<T>("dotted.key", fallback); a value of the wrong type is logged once per read
// and the fallback is used, so a typo in a user's settings never breaks a request.
// Main loop state: copy a Settings into background work if it needs one.
#pragma once

#include <string>
#include <string_view>

#include "core/support/log.h"
#include "lsp/protocol/json_io.h"

namespace kl::lsp {

class Settings {
 public:
  /// Replaces the settings with `kernlensObject` (non-objects become {} with a warning).
  void replace(const json& kernlensObject);
  /// The raw `kernlens` object ({} when the client sent none).
  const json& raw() const { return raw_; }
  /// Monotonic counter, bumped by every replace(); lets features notice a change cheaply.
  unsigned generation() const { return generation_; }

  /// The value at a dotted path ("inlayHints.minShare"), or `fallback` when absent or of the
  /// wrong type (logged).
  template <typename T>
  T get(std::string_view dottedKey, T fallback) const {
    const json* v = find(dottedKey);
    if (!v) return fallback;
    T out{};
    std::string error;
    if (parseJson(*v, out, error, "kernlens." + std::string(dottedKey))) return out;
    kl::log::warn("settings: " + error + "; using the default");
    return fallback;
  }
  /// The raw value at a dotted path, or nullptr.
  const json* find(std::string_view dottedKey) const;

  /// Extracts the `kernlens` object from a didChangeConfiguration `settings` value: its
  /// `kernlens` member when present, else the value itself (clients differ here).
  static json kernlensSection(const json& settings);

 private:
  json raw_ = json::object();
  unsigned generation_ = 0;
};

}  // namespace kl::lsp
