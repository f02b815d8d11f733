#include "lsp/server/settings.h"

namespace kl::lsp {

void Settings::replace(const json& kernlensObject) {
  if (kernlensObject.is_object()) {
    raw_ = kernlensObject;
  } else {
    if (!kernlensObject.is_null())
      kl::log::warn("settings: expected the kernlens settings to be an object; ignoring them");
    raw_ = json::object();
  }
  ++generation_;
}

const json* Settings::find(std::string_view dottedKey) const {
  const json* cur = &raw_;
  while (!dottedKey.empty()) {
    size_t dot = dottedKey.find('.');
    std::string key(dottedKey.substr(0, dot));
    dottedKey = dot == std::string_view::npos ? std::string_view() : dottedKey.substr(dot + 1);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

json Settings::kernlensSection(const json& settings) {
  if (settings.is_object()) {
    auto it = settings.find("kernlens");
    if (it != settings.end()) return *it;
  }
  return settings;
}

}  // namespace kl::lsp
