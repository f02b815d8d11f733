#include "lsp/protocol/json_schema.h"

#include <algorithm>
#include <set>
#include <string>

namespace kl::lsp {

namespace {

bool hasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())));
  if (type == "number") return v.is_number();
  return false;
}

std::string article(const std::string& type) {
  return (type == "object" || type == "array" || type == "integer") ? "an " + type : "a " + type;
}

}  // namespace

bool validateJson(const json& schema, const json& value, JPath path) {
  static const std::set<std::string> known = {"type",        "properties", "required", "additionalProperties",
                                              "enum",        "const",      "minimum",  "maximum",
                                              "minLength",   "items",      "minItems", "maxItems",
                                              "description", "default",    "examples", "title",
                                              "$schema"};
  if (!schema.is_object()) return path.report("schema error: a schema must be an object");
  for (const auto& [key, v] : schema.items())
    if (!known.count(key)) return path.report("schema error: unsupported keyword " + key);

  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<std::string> types;
    if (t->is_string()) types.push_back(t->get<std::string>());
    if (t->is_array())
      for (const auto& x : *t) types.push_back(x.get<std::string>());
    if (std::none_of(types.begin(), types.end(), [&](const std::string& ty) { return hasType(value, ty); })) {
      std::string want;
      for (size_t i = 0; i < types.size(); ++i) want += (i ? " or " : "") + article(types[i]);
      return path.report("expected " + want);
    }
  }
  if (auto c = schema.find("const"); c != schema.end() && value != *c) return path.report("expected " + c->dump());
  if (auto e = schema.find("enum"); e != schema.end() && std::find(e->begin(), e->end(), value) == e->end()) {
    std::string want;
    for (size_t i = 0; i < e->size(); ++i) want += (i ? ", " : "") + (*e)[i].dump();
    return path.report("expected one of " + want);
  }
  if (value.is_number()) {
    double x = value.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && x < m->get<double>())
      return path.report("must be >= " + m->dump());
    if (auto m = schema.find("maximum"); m != schema.end() && x > m->get<double>())
      return path.report("must be <= " + m->dump());
  }
  if (value.is_string())
    if (auto m = schema.find("minLength");
        m != schema.end() && value.get_ref<const std::string&>().size() < m->get<size_t>())
      return path.report(m->get<size_t>() == 1 ? "must not be empty" : "shorter than " + m->dump() + " characters");
  if (value.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && value.size() < m->get<size_t>())
      return path.report("expected at least " + m->dump() + " items");
    if (auto m = schema.find("maxItems"); m != schema.end() && value.size() > m->get<size_t>())
      return path.report("expected at most " + m->dump() + " items");
    if (auto items = schema.find("items"); items != schema.end())
      for (size_t i = 0; i < value.size(); ++i)
        if (!validateJson(*items, value[i], path.index(i))) return false;
  }
  if (value.is_object()) {
    if (auto r = schema.find("required"); r != schema.end())
      for (const auto& name : *r)
        if (!value.contains(name.get<std::string>()))
          return path.field(name.get_ref<const std::string&>()).report("required");
    auto props = schema.find("properties");
    bool closed = schema.value("additionalProperties", true) == false;
    for (const auto& [key, v] : value.items()) {
      const json* sub = props != schema.end() && props->contains(key) ? &(*props)[key] : nullptr;
      if (!sub && closed) return path.field(key).report("unknown property");
      if (sub && !validateJson(*sub, v, path.field(key))) return false;
    }
  }
  return true;
}

}  // namespace kl::lsp
