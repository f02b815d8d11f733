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

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Index just past the bracket matching s[open] ('(' '[' '{'), skipping strings; npos if none.
size_t matchBracket(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') {
      char q = c;
      for (++i; i < s.size() && s[i] != q; ++i)
        if (s[i] == '\\') ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

/// Methods of torch.nn.Module / Tensor that return the same object.
bool passthroughMethod(std::string_view m) {
  static const char* kNames[] = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train",
                                 "eval", "requires_grad_", "type", "share_memory", "apply", "to_empty"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return m == n; });
}

/// "NAME = RHS" / "NAME: T = RHS" (single target; augmented assignments excluded) -> RHS.
std::optional<std::string_view> assignedTo(std::string_view stmt, std::string_view target) {
  stmt = trim(stmt);
  if (stmt.substr(0, target.size()) != target) return std::nullopt;
  std::string_view rest = stmt.substr(target.size());
  if (!rest.empty() && isIdent(rest[0])) return std::nullopt;
  rest = trim(rest);
  if (!rest.empty() && rest[0] == ':') {  // annotation
    size_t eq = rest.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    rest = rest.substr(eq);
  }
  if (rest.size() < 2 || rest[0] != '=' || rest[1] == '=') return std::nullopt;
  return trim(rest.substr(1));
}

}  // namespace

std::vector<std::string> splitArguments(std::string_view args) {
  args = trim(args);
  if (!args.empty() && args.front() == '(') {
    size_t end = matchBracket(args, 0);
    args = args.substr(1, end == std::string_view::npos ? args.size() - 1 : end - 2);
  }
  std::vector<std::string> out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= args.size(); ++i) {
    char c = i < args.size() ? args[i] : ',';
    if (c == '"' || c == '\'') {
      char q = c;
      for (++i; i < args.size() && args[i] != q; ++i)
        if (args[i] == '\\') ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) {
      auto a = trim(args.substr(start, i - start));
      if (!a.empty()) out.emplace_back(a);
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parameters(std::string_view defText) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t open = defText.find('(');
  if (open == std::string_view::npos) return out;
  size_t close = matchBracket(defText, open);
  if (close == std::string_view::npos) return out;
  for (const auto& a : splitArguments(defText.substr(open, close - open))) {
    std::string_view p = a;
    while (!p.empty() && (p[0] == '*' || p[0] == ' ')) p.remove_prefix(1);
    size_t n = 0;
    while (n < p.size() && isIdent(p[n])) ++n;
    if (n == 0) continue;  // "/" or bare "*"
    std::string name(p.substr(0, n));
    std::string ann;
    std::string_view rest = trim(p.substr(n));
    if (!rest.empty() && rest[0] == ':') {
      rest = rest.substr(1);
      size_t eq = rest.find('=');
      ann = std::string(trim(rest.substr(0, eq)));
    }
    out.emplace_back(std::move(name), std::move(ann));
  }
  return out;
}

struct CallResolver::Value {
  enum class Kind { Unknown, Module, Classes, Instances, Functions, Passthrough, Super };
  Kind kind = Kind::Unknown;
  std::string module;             // Module: file path
  std::set<ClassRef> classes;     // Classes / Instances / Passthrough / Super (the current class)
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
    if (m.functions[i].qualName == fn.qualName && m.functions[i].defLine == fn.defLine)
      return static_cast<int32_t>(i);
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
  if (ci == kNone || m.classes[ci].body == kNone) return out;
  std::string_view header = textOf(**f, m.blocks[m.classes[ci].body].header);
  size_t open = header.find('(');
  if (open == std::string_view::npos) return out;
  size_t close = matchBracket(header, open);
  if (close == std::string_view::npos) return out;
  for (const auto& b : splitArguments(header.substr(open, close - open))) {
    if (b.find('=') != std::string::npos) continue;  // metaclass=...
    Value v = eval(c.path, kNone, b, depth + 1);
    if (v.kind != Value::Kind::Classes) continue;
    for (const auto& base : v.classes)
      for (auto& x : mro(base, depth + 1))
        if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(std::move(x));
  }
  return out;
}

std::optional<FunctionRef> CallResolver::method(const ClassRef& c, std::string_view name, bool skipSelf,
                                                int depth) {
  auto chain = mro(c, depth);
  for (size_t k = skipSelf ? 1 : 0; k < chain.size(); ++k) {
    auto f = index_.file(chain[k].path);
    if (!f) continue;
    const Module& m = (*f)->model();
    int32_t ci = m.findClass(chain[k].qualName);
    for (const auto& fn : m.functions)
      if (fn.isMethod && fn.klass == ci && fn.name == name)
        return FunctionRef{chain[k].path, fn.qualName, fn.defLine};
  }
  return std::nullopt;
}

std::set<ClassRef> CallResolver::attributeTypes(const ClassRef& c, std::string_view attr, int depth) {
  std::set<ClassRef> out;
  if (depth > kMaxDepth) return out;
  Guard guard(active_, "a:" + c.path + ":" + c.qualName + ":" + std::string(attr));
  if (!guard.entered) return out;
  std::string target = "self." + std::string(attr);
  for (const auto& k : mro(c, depth)) {
    auto f = index_.file(k.path);
    if (!f) continue;
    const Module& m = (*f)->model();
    int32_t ci = m.findClass(k.qualName);
    for (size_t si = 0; si < m.statements.size(); ++si) {
      const auto& s = m.statements[si];
      if (s.kind != python::StatementKind::Expression || s.function == kNone) continue;
      if (m.functions[s.function].klass != ci) continue;
      auto rhs = assignedTo(textOf(**f, s.bytes), target);
      if (!rhs) continue;
      Value v = eval(k.path, s.function, *rhs, depth + 1);
      if (v.kind == Value::Kind::Instances) {
        out.insert(v.classes.begin(), v.classes.end());
        continue;
      }
      // A container (nn.Sequential / ModuleList / list): every workspace class built in it.
      for (const auto& call : m.calls) {
        if (call.statement != static_cast<int32_t>(si)) continue;
        Value cv = eval(k.path, s.function, textOf(**f, call.calleeBytes), depth + 1);
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
  std::string_view defText = textOf(**f, func.bytes);
  if (size_t d = defText.find("def"); d != std::string_view::npos) defText = defText.substr(d);
  auto params = parameters(defText);
  size_t pos = params.size();
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].first == param) pos = i;
  if (pos == params.size()) return out;
  if (!params[pos].second.empty()) {
    Value v = eval(path, kNone, params[pos].second, depth + 1);
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
    for (size_t ci = 0; ci < cm.calls.size(); ++ci) {
      std::string_view callee = textOf(**cf, cm.calls[ci].calleeBytes);
      std::string_view last = callee.substr(callee.rfind('.') == std::string_view::npos ? 0 : callee.rfind('.') + 1);
      if (last != func.name && !(func.name == "__init__" && last == klassName)) continue;
      Value cv = eval(file, cm.calls[ci].function, callee, depth + 1);
      auto targets = targetsOf(cv, depth + 1);
      if (std::find(targets.begin(), targets.end(), self) == targets.end()) continue;
      std::string_view whole = textOf(**cf, cm.calls[ci].bytes);
      auto args = splitArguments(whole.substr(cm.calls[ci].calleeBytes.size()));
      std::optional<std::string> arg;
      for (const auto& a : args)
        if (a.rfind(std::string(param) + "=", 0) == 0 && a.find("==") == std::string::npos)
          arg = a.substr(param.size() + 1);
      size_t positional = 0;
      for (const auto& a : args) {
        if (arg) break;
        bool kw = false;
        for (size_t i = 0; i < a.size() && isIdent(a[i]); ++i)
          if (i + 1 < a.size() && a[i + 1] == '=' && (i + 2 >= a.size() || a[i + 2] != '=')) kw = true;
        if (kw || a[0] == '*') continue;
        if (positional++ == argPos) arg = a;
      }
      if (!arg) continue;
      Value av = eval(file, cm.calls[ci].function, *arg, depth + 1);
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
      mod = attribute(mod, rest.substr(0, dot), path, depth + 1);
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    if (mod.kind != Value::Kind::Unknown) return mod;
  }
  // Module-level assignment: NAME = RHS.
  for (int32_t si : m.moduleBlock().statements) {
    const auto& s = m.statements[si];
    if (s.kind != python::StatementKind::Expression) continue;
    if (auto rhs = assignedTo(textOf(**f, s.bytes), name)) {
      Value r = eval(path, kNone, *rhs, depth + 1);
      if (r.kind != Value::Kind::Unknown) v = r;
    }
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
    for (size_t si = 0; si < m.statements.size(); ++si) {
      const auto& s = m.statements[si];
      if (s.function != fn) continue;
      Value v;
      if (s.kind == python::StatementKind::Expression) {
        auto rhs = assignedTo(textOf(**f, s.bytes), name);
        if (!rhs) continue;
        v = eval(path, fn, *rhs, depth + 1);
        if (v.kind == Value::Kind::Unknown) {
          for (const auto& call : m.calls) {
            if (call.statement != static_cast<int32_t>(si)) continue;
            Value cv = eval(path, fn, textOf(**f, call.calleeBytes), depth + 1);
            if (cv.kind == Value::Kind::Classes) {
              v.kind = Value::Kind::Instances;
              v.classes.insert(cv.classes.begin(), cv.classes.end());
            }
          }
        }
      } else if (s.kind == python::StatementKind::For && !s.blocks.empty()) {
        // for TARGET in ITER:   (targets: NAME, or `i, NAME` over enumerate(...)/zip(...))
        std::string_view h = textOf(**f, m.blocks[s.blocks[0]].header);
        if (h.substr(0, 4) == "for ") h = h.substr(4);
        size_t in = h.find(" in ");
        if (in == std::string_view::npos) continue;
        auto targets = splitArguments(h.substr(0, in));
        std::string_view iter = trim(h.substr(in + 4));
        if (!iter.empty() && iter.back() == ':') iter = trim(iter.substr(0, iter.size() - 1));
        size_t which = targets.size();
        for (size_t t = 0; t < targets.size(); ++t)
          if (targets[t] == name) which = t;
        if (which == targets.size()) continue;
        if (iter.rfind("enumerate(", 0) == 0 && which == 1) {
          iter = trim(iter.substr(9));
          auto a = splitArguments(iter);
          if (a.empty()) continue;
          v = eval(path, fn, a[0], depth + 1);
        } else if (iter.rfind("zip(", 0) == 0) {
          auto a = splitArguments(trim(iter.substr(3)));
          if (which >= a.size()) continue;
          v = eval(path, fn, a[which], depth + 1);
        } else if (targets.size() == 1) {
          v = eval(path, fn, iter, depth + 1);
        }
        if (v.kind != Value::Kind::Instances) v = Value::unknown();
      } else {
        continue;
      }
      if (v.kind == Value::Kind::Unknown) continue;
      // The last binding before the use wins; else the first one after it.
      if (!found || (s.bytes.start < before && (bestAt >= before || s.bytes.start > bestAt)) ||
          (bestAt >= before && s.bytes.start >= before && s.bytes.start < bestAt)) {
        best = v;
        bestAt = s.bytes.start;
        found = true;
      }
    }
    if (found) return best;
    std::string_view defText = textOf(**f, func.bytes);
    if (size_t d = defText.find("def"); d != std::string_view::npos) defText = defText.substr(d);
    for (const auto& [p, ann] : parameters(defText)) {
      if (p != name) continue;
      return Value::instances(parameterTypes(path, fn, name, depth + 1));
    }
  }
  return moduleSymbol(path, name, depth + 1);
}

CallResolver::Value CallResolver::attribute(const Value& base, std::string_view name, const std::string& path,
                                            int depth) {
  (void)path;
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
    default:
      return Value::unknown();
  }
}

CallResolver::Value CallResolver::call(const Value& callee, std::string_view args, int depth) {
  (void)args;
  (void)depth;
  if (callee.kind == Value::Kind::Classes) return Value::instances(callee.classes);
  if (callee.kind == Value::Kind::Passthrough) return Value::instances(callee.classes);
  return Value::unknown();
}

CallResolver::Value CallResolver::eval(const std::string& path, int32_t fn, std::string_view expr, int depth) {
  if (depth > kMaxDepth) return Value::unknown();
  expr = trim(expr);
  size_t i = 0;
  while (i < expr.size() && isIdent(expr[i])) ++i;
  if (i == 0 || !isIdentStart(expr[0])) return Value::unknown();
  std::string_view primary = expr.substr(0, i);
  Value v;
  auto f = index_.file(path);
  if (!f) return Value::unknown();
  const Module& m = (*f)->model();
  auto skipSpace = [&] {
    while (i < expr.size() && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n' || expr[i] == '\\'))
      ++i;
  };
  skipSpace();
  if (primary == "super" && i < expr.size() && expr[i] == '(') {
    size_t end = matchBracket(expr, i);
    if (end == std::string_view::npos || fn == kNone) return Value::unknown();
    int32_t klass = m.functions[fn].klass;
    if (klass == kNone) return Value::unknown();
    v.kind = Value::Kind::Super;
    v.classes = {ClassRef{path, m.classes[klass].qualName}};
    i = end;
  } else {
    uint32_t before = UINT32_MAX;
    v = lookupName(path, fn, primary, before, depth + 1);
  }
  while (true) {
    skipSpace();
    if (i >= expr.size()) return v;
    char c = expr[i];
    if (c == '.') {
      ++i;
      skipSpace();
      size_t s = i;
      while (i < expr.size() && isIdent(expr[i])) ++i;
      if (s == i) return Value::unknown();
      v = attribute(v, expr.substr(s, i - s), path, depth + 1);
    } else if (c == '(') {
      size_t end = matchBracket(expr, i);
      if (end == std::string_view::npos) return Value::unknown();
      v = call(v, expr.substr(i, end - i), depth + 1);
      i = end;
    } else if (c == '[') {
      size_t end = matchBracket(expr, i);
      if (end == std::string_view::npos) return Value::unknown();
      if (v.kind != Value::Kind::Instances) v = Value::unknown();  // container member
      i = end;
    } else {
      return Value::unknown();  // an operator: not a plain chain
    }
    if (v.kind == Value::Kind::Unknown) return v;
  }
}

std::vector<FunctionRef> CallResolver::targetsOf(const Value& v, int depth) {
  std::vector<FunctionRef> out;
  switch (v.kind) {
    case Value::Kind::Functions:
      out = v.functions;
      break;
    case Value::Kind::Classes:
      for (const auto& c : v.classes)
        if (auto fn = method(c, "__init__", false, depth + 1)) out.push_back(*fn);
      break;
    case Value::Kind::Instances:
      for (const auto& c : v.classes) {
        if (auto fn = method(c, "__call__", false, depth + 1)) out.push_back(*fn);
        else if (auto fw = method(c, "forward", false, depth + 1)) out.push_back(*fw);
      }
      break;
    default:
      break;
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
  return targetsOf(eval(path, c.function, textOf(**f, c.calleeBytes), 0), 0);
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

std::vector<FunctionRef> CallResolver::referencedFunctions(const std::string& path, int32_t function,
                                                           const std::string& expr) {
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
      std::string_view callee = textOf(**f, c.calleeBytes);
      std::string_view args = textOf(**f, c.bytes).substr(c.calleeBytes.size());
      std::optional<std::string> target;
      bool isThread = callee.size() >= 6 && callee.substr(callee.size() - 6) == "Thread";
      bool isSubmit = callee.size() >= 7 && callee.substr(callee.size() - 7) == ".submit";
      auto a = splitArguments(args);
      if (isThread) {
        for (const auto& x : a)
          if (x.rfind("target", 0) == 0) {
            auto rest = trim(std::string_view(x).substr(6));
            if (!rest.empty() && rest[0] == '=') target = std::string(trim(rest.substr(1)));
          }
      } else if (isSubmit && !a.empty()) {
        target = a[0];
      }
      if (!target) continue;
      for (auto& fn : referencedFunctions(file, c.function, *target)) out.push_back(std::move(fn));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::set<ClassRef> CallResolver::instanceTypes(const std::string& path, int32_t function, const std::string& expr) {
  Value v = eval(path, function, expr, 0);
  return v.kind == Value::Kind::Instances ? v.classes : std::set<ClassRef>{};
}

}  // namespace kl::planner
