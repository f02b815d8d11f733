#include "lsp/protocol/commands.h"

namespace kl::lsp {

bool fromJson(const json&, NoArguments&, JPath) { return true; }

bool fromJson(const json& j, KeepAnnotationsArgs& out, JPath path) {
  if (j.is_null()) return true;  // no arguments: every file of the run
  ObjectReader o(j, path);
  return o && o.opt("uri", out.uri);
}

bool fromJson(const json& j, ExportRunArgs& out, JPath path) {
  if (j.is_null()) return true;
  ObjectReader o(j, path);
  return o && o.opt("format", out.format);
}

bool fromJson(const json& j, ApplyEditResult& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("applied", out.applied);
}

bool fromJson(const json& j, ProfileFunctionArgs& out, JPath path) {
  ObjectReader o(j, path);
  if (!(o && o.req("uri", out.uri) && o.opt("position", out.position) && o.opt("function", out.function))) return false;
  if (out.function.empty() && !out.position) return path.report("expected {uri, position} or {uri, function}");
  return true;
}
json toJson(const ProfileFunctionArgs& a) {
  json j = {{"uri", a.uri}};
  writeOptional(j, "position", a.position);
  if (!a.function.empty()) j["function"] = a.function;
  return j;
}

bool fromJson(const json& j, RefineHereArgs& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("uri", out.uri) && o.req("range", out.range) && o.opt("function", out.function);
}
json toJson(const RefineHereArgs& a) {
  json j = {{"uri", a.uri}, {"range", toJson(a.range)}};
  if (!a.function.empty()) j["function"] = a.function;
  return j;
}

json toJson(const RunStarted& r) {
  return {{"runKey", r.runKey}, {"function", r.function}, {"path", r.path}, {"lines", r.lines}, {"backend", r.backend}};
}

json toJson(const CancelResult& r) { return {{"cancelled", r.cancelled}}; }

bool fromJson(const json& j, LoadProfileArgs& out, JPath path) {
  if (j.is_object()) {
    ObjectReader o(j, path);
    if (!o.req("path", out.path)) return false;
  } else if (j.is_string()) {
    out.path = j.get<std::string>();
  } else if (!j.is_null()) {
    return path.report("expected a path or {\"path\": path}");
  }
  if (out.path.empty())
    return path.report(
        "expected arguments [path] (an nsys .sqlite, a Kineto .json trace or an "
        "Nsight Compute .csv)");
  return true;
}

bool fromJson(const json& j, LoadRegionsArgs& out, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("path", out.path) && o.opt("tags", out.tags) && o.opt("uri", out.uri) &&
         o.opt("capacity", out.capacity) && o.opt("allowOverflow", out.allowOverflow);
}

}  // namespace kl::lsp
