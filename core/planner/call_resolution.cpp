#include "core/planner/call_resolution.h"

#include <algorithm>
#include <cctype>

namespace kl::planner {

using python::kNone;
using python::Module;
using python::SourceFile;

namespace {

constexpr int kMaxDepth = 24;

/// RAII membership of a key in a cycle-guard set; `entered` is false when it was already there.
struct Guard {
  std::set<std::string>& set;
  std::string key;
  bool entered;
  Guard(std::set<std::string>& s, std::string k) : set(s), key(std::move(k)), entered(set.insert(key).second) {}
  ~Guard() {
    if (entered) set.erase(key);
  }
};

/// Methods of torch.nn.Module / Tensor that return the same object.
bool passthroughMethod(std::string_view m) {
  static const char* kNames[] = {"to",     "cuda",         "cpu",   "float",   "half",
                                 "double", "bfloat16",     "train", "eval",    "requires_grad_",
                                 "type",   "share_memory", "apply", "to_empty"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return m == n; });
}

using Kind = python::Expression::Kind;

/// Whether expression `e` is the name `name`.
bool isName(const Module& m, int32_t e, std::string_view name) {
  return e != kNone && m.expressions[e].kind == Kind::Name && m.expressions[e].name == name;
}

/// Whether expression `e` is `self.<attr>`.
bool isSelfAttribute(const Module& m, int32_t e, std::string_view attr) {
  return e != kNone && m.expressions[e].kind == Kind::Attribute && m.expressions[e].name == attr &&
         isName(m, m.expressions[e].object, "self");
}

/// The callee expression of call site `c` (kNone when the model has none).
int32_t calleeOf(const Module& m, const python::CallSite& c) {
  return c.expression == kNone ? kNone : m.expressions[c.expression].object;
}

/// The name a callee ends in: `f` of `f`, `m` of `a.b.m`; "" for a call or subscript callee.
std::string_view terminalName(const Module& m, int32_t callee) {
  if (callee == kNone) return {};
  const auto& e = m.expressions[callee];
  return e.kind == Kind::Name || e.kind == Kind::Attribute ? std::string_view(e.name) : std::string_view();
}

}  // namespace

struct CallResolver::Value {
  enum class Kind { Unknown, Module, Classes, Instances, Functions, Passthrough, Super };
  Kind kind = Kind::Unknown;
  std::string module;          // Module: file path
  std::set<ClassRef> classes;  // Classes / Instances / Passthrough / Super (the current class)
  std::vector<FunctionRef> functions;

  static Value unknown() { return {}; }
  static Value instances(std::set<ClassRef> c) {
    Value v;
    if (c.empty()) return v;
    v.kind = Kind::Instances;
    v.classes = std::move(c);
    return v;
  }
};

std::optional<FunctionRef> CallResolver::findFunction(const std::string& path, const std::string& qualName) {
  auto f = index_.file(path);
  if (!f) return std::nullopt;
  const Module& m = (*f)->model();
  int32_t i = m.findFunction(qualName);
  if (i == kNone) return std::nullopt;
  return FunctionRef{path, qualName, m.functions[i].defLine};
}

int32_t CallResolver::functionIndex(const FunctionRef& fn) {
  auto f = index_.file(fn.path);
  if (!f) return kNone;
  const Module& m = (*f)->model();
  for (size_t i = 0; i < m.functions.size(); ++i)
    if (m.functions[i].qualName == fn.qualName && m.functions[i].defLine == fn.defLine) return static_cast<int32_t>(i);
  return m.findFunction(fn.qualName);
}

std::vector<ClassRef> CallResolver::mro(const ClassRef& c, int depth) {
  std::vector<ClassRef> out{c};
  if (depth > kMaxDepth) return out;
  Guard guard(active_, "m:" + c.path + ":" + c.qualName);
  if (!guard.entered) return out;
  auto f = index_.file(c.path);
  if (!f) return out;
  const Module& m = (*f)->model();
  int32_t ci = m.findClass(c.qualName);
  if (ci == kNone) return out;
  for (int32_t b : m.classes[ci].bases) {
    Value v = eval(c.path, kNone, b, depth + 1);
    if (v.kind != Value::Kind::Classes) continue;
    for (const auto& base : v.classes)
      for (auto& x : mro(base, depth + 1))
        if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(std::move(x));
  }
  return out;
}

std::optional<FunctionRef> CallResolver::method(const ClassRef& c, std::string_view name, bool skipSelf, int depth) {
  auto chain = mro(c, depth);
  for (size_t k = skipSelf ? 1 : 0; k < chain.size(); ++k) {
    auto f = index_.file(chain[k].path);
    if (!f) continue;
    const Module& m = (*f)->model();
    int32_t ci = m.findClass(chain[k].qualName);
    for (const auto& fn : m.functions)
      if (fn.isMethod && fn.klass == ci && fn.name == name) return FunctionRef{chain[k].path, fn.qualName, fn.defLine};
  }
  return std::nullopt;
}

std::set<ClassRef> CallResolver::attributeTypes(const ClassRef& c, std::string_view attr, int depth) {
  std::set<ClassRef> out;
  if (depth > kMaxDepth) return out;
  Guard guard(active_, "a:" + c.path + ":" + c.qualName + ":" + std::string(attr));
  if (!guard.entered) return out;
  for (const auto& k : mro(c, depth)) {
    auto f = index_.file(k.path);
    if (!f) continue;
    const Module& m = (*f)->model();
    int32_t ci = m.findClass(k.qualName);
    for (const auto& a : m.assignments) {
      const auto& s = m.statements[a.statement];
      if (s.function == kNone || m.functions[s.function].klass != ci) continue;
      if (!isSelfAttribute(m, a.target, attr)) continue;
      Value v = eval(k.path, s.function, a.value, depth + 1);
      if (v.kind == Value::Kind::Instances) {
        out.insert(v.classes.begin(), v.classes.end());
        continue;
      }
      // A container (nn.Sequential / ModuleList / list): every workspace class built in it.
      for (const auto& call : m.calls) {
        if (call.statement != a.statement) continue;
        Value cv = eval(k.path, s.function, calleeOf(m, call), depth + 1);
        if (cv.kind == Value::Kind::Classes) out.insert(cv.classes.begin(), cv.classes.end());
      }
    }
  }
  return out;
}

std::set<ClassRef> CallResolver::parameterTypes(const std::string& path, int32_t fn, std::string_view param,
                                                int depth) {
  std::set<ClassRef> out;
  auto f = index_.file(path);
  if (!f || fn == kNone) return out;
  const Module& m = (*f)->model();
  const auto& func = m.functions[fn];
  const auto& params = func.parameters;
  size_t pos = params.size();
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == param) pos = i;
  if (pos == params.size()) return out;
  if (params[pos].annotation != kNone) {
    Value v = eval(path, kNone, params[pos].annotation, depth + 1);
    if (v.kind == Value::Kind::Classes) return v.classes;
  }
  if (paramLevel_ > 0) return out;  // one level of call-site inference at a time
  struct Level {
    int& n;
    explicit Level(int& x) : n(x) { ++n; }
    ~Level() { --n; }
  } level(paramLevel_);
  // One level up: the arguments passed at the workspace call sites of this function.
  FunctionRef self{path, func.qualName, func.defLine};
  size_t argPos = pos;
  if (func.isMethod && pos > 0) argPos = pos - 1;  // `self` is not passed explicitly
  std::string klassName = func.klass != kNone ? m.classes[func.klass].name : "";
  for (const auto& file : index_.loadedFiles()) {
    auto cf = index_.file(file);
    if (!cf) continue;
    const Module& cm = (*cf)->model();
    for (const auto& call : cm.calls) {
      int32_t callee = calleeOf(cm, call);
      std::string_view last = terminalName(cm, callee);
      if (last.empty() || (last != func.name && !(func.name == "__init__" && last == klassName))) continue;
      Value cv = eval(file, call.function, callee, depth + 1);
      auto targets = targetsOf(cv, depth + 1);
      if (std::find(targets.begin(), targets.end(), self) == targets.end()) continue;
      const auto& args = cm.expressions[call.expression].arguments;
      int32_t arg = kNone;
      for (const auto& a : args)
        if (a.keyword == param) arg = a.value;
      size_t positional = 0;
      for (const auto& a : args) {
        if (arg != kNone) break;
        if (a.positional() && positional++ == argPos) arg = a.value;
      }
      if (arg == kNone) continue;
      Value av = eval(file, call.function, arg, depth + 1);
      if (av.kind == Value::Kind::Instances) out.insert(av.classes.begin(), av.classes.end());
    }
  }
  return out;
}

CallResolver::Value CallResolver::moduleSymbol(const std::string& path, std::string_view name, int depth) {
  if (depth > kMaxDepth) return Value::unknown();
  auto f = index_.file(path);
  if (!f) return Value::unknown();
  Guard guard(active_, "s:" + path + ":" + std::string(name));
  if (!guard.entered) return Value::unknown();
  const Module& m = (*f)->model();
  Value v;
  for (const auto& fn : m.functions)
    if (fn.parent == kNone && fn.klass == kNone && fn.name == name) {
      v.kind = Value::Kind::Functions;
      v.functions = {FunctionRef{path, fn.qualName, fn.defLine}};
    }
  for (const auto& c : m.classes)
    if (c.parent == kNone && c.klass == kNone && c.name == name) {
      v = Value{};
      v.kind = Value::Kind::Classes;
      v.classes = {ClassRef{path, c.qualName}};
    }
  if (v.kind != Value::Kind::Unknown) return v;
  for (const auto& ib : m.imports) {
    if (ib.local != name) continue;
    auto split = index_.splitImport(ib.target, path);
    if (!split) continue;
    // `import a.b` binds `a` (target "a"); `import a.b as x` binds x to a.b.
    Value mod;
    mod.kind = Value::Kind::Module;
    mod.module = split->first;
    std::string_view rest = split->second;
    while (!rest.empty() && mod.kind != Value::Kind::Unknown) {
      size_t dot = rest.find('.');
      mod = attribute(mod, rest.substr(0, dot), depth + 1);
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    if (mod.kind != Value::Kind::Unknown) return mod;
  }
  // Module-level assignment: NAME = RHS.
  for (const auto& a : m.assignments) {
    if (m.statements[a.statement].parentBlock != 0 || !isName(m, a.target, name)) continue;
    Value r = eval(path, kNone, a.value, depth + 1);
    if (r.kind != Value::Kind::Unknown) v = r;
  }
  return v;
}

CallResolver::Value CallResolver::lookupName(const std::string& path, int32_t fn, std::string_view name,
                                             uint32_t before, int depth) {
  auto f = index_.file(path);
  if (!f) return Value::unknown();
  Guard guard(active_, "n:" + path + ":" + std::to_string(fn) + ":" + std::string(name));
  if (!guard.entered) return Value::unknown();
  const Module& m = (*f)->model();
  if (fn != kNone) {
    const auto& func = m.functions[fn];
    if (name == "self" && func.isMethod && func.klass != kNone) {
      Value v;
      v.kind = Value::Kind::Instances;
      v.classes = {ClassRef{path, m.classes[func.klass].qualName}};
      return v;
    }
    Value best;
    uint32_t bestAt = 0;
    bool found = false;
    // The last binding before the use wins; else the first one after it.
    auto consider = [&](const Value& v, int32_t stmt) {
      if (v.kind == Value::Kind::Unknown) return;
      uint32_t at = m.statements[stmt].bytes.start;
      if (!found || (at < before && (bestAt >= before || at > bestAt)) ||
          (bestAt >= before && at >= before && at < bestAt)) {
        best = v;
        bestAt = at;
        found = true;
      }
    };
    for (const auto& a : m.assignments) {
      if (m.statements[a.statement].function != fn || !isName(m, a.target, name)) continue;
      Value v = eval(path, fn, a.value, depth + 1);
      if (v.kind == Value::Kind::Unknown) {
        for (const auto& call : m.calls) {
          if (call.statement != a.statement) continue;
          Value cv = eval(path, fn, calleeOf(m, call), depth + 1);
          if (cv.kind == Value::Kind::Classes) {
            v.kind = Value::Kind::Instances;
            v.classes.insert(cv.classes.begin(), cv.classes.end());
          }
        }
      }
      consider(v, a.statement);
    }
    // for TARGET in ITER:   (targets: NAME, or `i, NAME` over enumerate(...)/zip(...))
    for (const auto& loop : m.forLoops) {
      if (m.statements[loop.statement].function != fn) continue;
      size_t which = loop.targets.size();
      for (size_t t = 0; t < loop.targets.size(); ++t)
        if (isName(m, loop.targets[t], name)) which = t;
      if (which == loop.targets.size()) continue;
      const auto& iter = m.expressions[loop.iterable];
      bool overCall = iter.kind == Kind::Call;
      Value v;
      if (overCall && isName(m, iter.object, "enumerate") && which == 1) {
        if (iter.arguments.empty()) continue;
        v = eval(path, fn, iter.arguments[0].value, depth + 1);
      } else if (overCall && isName(m, iter.object, "zip")) {
        if (which >= iter.arguments.size()) continue;
        v = eval(path, fn, iter.arguments[which].value, depth + 1);
      } else if (loop.targets.size() == 1) {
        v = eval(path, fn, loop.iterable, depth + 1);
      }
      if (v.kind != Value::Kind::Instances) continue;
      consider(v, loop.statement);
    }
    if (found) return best;
    for (const auto& p : func.parameters)
      if (p.name == name) return Value::instances(parameterTypes(path, fn, name, depth + 1));
  }
  return moduleSymbol(path, name, depth + 1);
}

CallResolver::Value CallResolver::attribute(const Value& base, std::string_view name, int depth) {
  if (depth > kMaxDepth) return Value::unknown();
  switch (base.kind) {
    case Value::Kind::Module: {
      Value v = moduleSymbol(base.module, name, depth + 1);
      if (v.kind != Value::Kind::Unknown) return v;
      // A submodule of a package: pkg/__init__.py -> pkg/name.py or pkg/name/__init__.py.
      if (base.module.size() >= 11 && base.module.substr(base.module.size() - 11) == "__init__.py") {
        if (auto sub = index_.moduleFile("." + std::string(name), base.module)) {
          Value m;
          m.kind = Value::Kind::Module;
          m.module = *sub;
          return m;
        }
      }
      return Value::unknown();
    }
    case Value::Kind::Classes: {
      // Class.method -> the function (called unbound).
      Value v;
      for (const auto& c : base.classes)
        if (auto fn = method(c, name, false, depth + 1)) v.functions.push_back(*fn);
      if (!v.functions.empty()) v.kind = Value::Kind::Functions;
      return v;
    }
    case Value::Kind::Instances: {
      Value v;
      for (const auto& c : base.classes)
        if (auto fn = method(c, name, false, depth + 1)) v.functions.push_back(*fn);
      if (!v.functions.empty()) {
        v.kind = Value::Kind::Functions;
        return v;
      }
      std::set<ClassRef> types;
      for (const auto& c : base.classes) {
        auto t = attributeTypes(c, name, depth + 1);
        types.insert(t.begin(), t.end());
      }
      if (!types.empty()) return Value::instances(std::move(types));
      if (passthroughMethod(name)) {
        Value p;
        p.kind = Value::Kind::Passthrough;
        p.classes = base.classes;
        return p;
      }
      return Value::unknown();
    }
    case Value::Kind::Super: {
      Value v;
      for (const auto& c : base.classes)
        if (auto fn = method(c, name, true, depth + 1)) v.functions.push_back(*fn);
      if (!v.functions.empty()) v.kind = Value::Kind::Functions;
      return v;
    }
    default: return Value::unknown();
  }
}

CallResolver::Value CallResolver::call(const Value& callee) {
  if (callee.kind == Value::Kind::Classes) return Value::instances(callee.classes);
  if (callee.kind == Value::Kind::Passthrough) return Value::instances(callee.classes);
  return Value::unknown();
}

CallResolver::Value CallResolver::eval(const std::string& path, int32_t fn, int32_t expr, int depth) {
  if (depth > kMaxDepth || expr == kNone) return Value::unknown();
  auto f = index_.file(path);
  if (!f) return Value::unknown();
  const Module& m = (*f)->model();
  const auto& e = m.expressions[expr];
  switch (e.kind) {
    case Kind::Name: return lookupName(path, fn, e.name, UINT32_MAX, depth + 1);
    case Kind::Attribute: {
      Value base = eval(path, fn, e.object, depth + 1);
      if (base.kind == Value::Kind::Unknown) return base;
      return attribute(base, e.name, depth + 1);
    }
    case Kind::Call: {
      if (isName(m, e.object, "super")) {  // super() / super(C, self): the current class's bases
        if (fn == kNone || m.functions[fn].klass == kNone) return Value::unknown();
        Value v;
        v.kind = Value::Kind::Super;
        v.classes = {ClassRef{path, m.classes[m.functions[fn].klass].qualName}};
        return v;
      }
      Value callee = eval(path, fn, e.object, depth + 1);
      if (callee.kind == Value::Kind::Unknown) return callee;
      return call(callee);
    }
    case Kind::Subscript: {  // a container's member
      Value v = eval(path, fn, e.object, depth + 1);
      return v.kind == Value::Kind::Instances ? v : Value::unknown();
    }
    default: return Value::unknown();  // an operator, a literal, a comprehension: not a plain chain
  }
}

std::vector<FunctionRef> CallResolver::targetsOf(const Value& v, int depth) {
  std::vector<FunctionRef> out;
  switch (v.kind) {
    case Value::Kind::Functions: out = v.functions; break;
    case Value::Kind::Classes:
      for (const auto& c : v.classes)
        if (auto fn = method(c, "__init__", false, depth + 1)) out.push_back(*fn);
      break;
    case Value::Kind::Instances:
      for (const auto& c : v.classes) {
        if (auto fn = method(c, "__call__", false, depth + 1))
          out.push_back(*fn);
        else if (auto fw = method(c, "forward", false, depth + 1))
          out.push_back(*fw);
      }
      break;
    default: break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<FunctionRef> CallResolver::resolveCall(const std::string& path, int32_t callIndex) {
  auto f = index_.file(path);
  if (!f) return {};
  const Module& m = (*f)->model();
  if (callIndex < 0 || static_cast<size_t>(callIndex) >= m.calls.size()) return {};
  const auto& c = m.calls[callIndex];
  return targetsOf(eval(path, c.function, calleeOf(m, c), 0), 0);
}

std::vector<FunctionRef> CallResolver::calleesOfStatement(const std::string& path, int32_t stmt) {
  std::vector<FunctionRef> out;
  auto f = index_.file(path);
  if (!f) return out;
  const Module& m = (*f)->model();
  for (size_t ci = 0; ci < m.calls.size(); ++ci) {
    if (m.calls[ci].statement != stmt) continue;
    for (auto& t : resolveCall(path, static_cast<int32_t>(ci))) out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<FunctionRef> CallResolver::calleesOfFunction(const FunctionRef& fn) {
  std::vector<FunctionRef> out;
  int32_t fi = functionIndex(fn);
  auto f = index_.file(fn.path);
  if (fi == kNone || !f) return out;
  const Module& m = (*f)->model();
  for (size_t ci = 0; ci < m.calls.size(); ++ci) {
    if (m.calls[ci].function != fi) continue;
    for (auto& t : resolveCall(fn.path, static_cast<int32_t>(ci))) out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<FunctionRef> CallResolver::callers(const FunctionRef& fn) {
  std::vector<FunctionRef> out;
  std::string name = fn.qualName.substr(fn.qualName.rfind('.') == std::string::npos ? 0 : fn.qualName.rfind('.') + 1);
  for (const auto& file : index_.loadedFiles()) {
    auto f = index_.file(file);
    if (!f) continue;
    const Module& m = (*f)->model();
    for (size_t ci = 0; ci < m.calls.size(); ++ci) {
      const auto& c = m.calls[ci];
      if (c.function == kNone) continue;
      auto targets = resolveCall(file, static_cast<int32_t>(ci));
      if (std::find(targets.begin(), targets.end(), fn) == targets.end()) continue;
      const auto& caller = m.functions[c.function];
      out.push_back(FunctionRef{file, caller.qualName, caller.defLine});
    }
    (void)name;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<FunctionRef> CallResolver::referencedFunctions(const std::string& path, int32_t function, int32_t expr) {
  Value v = eval(path, function, expr, 0);
  return v.kind == Value::Kind::Functions ? v.functions : std::vector<FunctionRef>{};
}

std::vector<FunctionRef> CallResolver::threadTargets() {
  std::vector<FunctionRef> out;
  for (const auto& file : index_.loadedFiles()) {
    auto f = index_.file(file);
    if (!f) continue;
    const Module& m = (*f)->model();
    for (const auto& c : m.calls) {
      int32_t callee = calleeOf(m, c);
      if (callee == kNone) continue;
      const auto& args = m.expressions[c.expression].arguments;
      const auto& ce = m.expressions[callee];
      int32_t target = kNone;
      if (std::string_view n = terminalName(m, callee); n.ends_with("Thread")) {
        for (const auto& a : args)
          if (a.keyword == "target") target = a.value;
      } else if (ce.kind == Kind::Attribute && ce.name == "submit" && !args.empty() && args[0].positional()) {
        target = args[0].value;
      }
      if (target == kNone) continue;
      for (auto& fn : referencedFunctions(file, c.function, target)) out.push_back(std::move(fn));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::set<ClassRef> CallResolver::instanceTypes(const std::string& path, int32_t function, int32_t expr) {
  Value v = eval(path, function, expr, 0);
  return v.kind == Value::Kind::Instances ? v.classes : std::set<ClassRef>{};
}

}  // namespace kl::planner
