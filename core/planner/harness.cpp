#include "core/planner/harness.h"

#include <cctype>
#include <system_error>

#include "core/nvtx/naming.h"

namespace kl::planner {

namespace fs = std::filesystem;
using python::kNone;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

using Items = std::vector<std::pair<std::string, std::string>>;

/// The `name=value` items of a directive comment ("a=1, b=(2, 3)") with their value expressions:
/// the text is read as the keyword arguments of a Python call, so strings, brackets and a
/// trailing comment are Python's. A positional item, a splat or a syntax error is an error.
struct DirectiveItems {
  python::SourceFilePtr file;                          // "_(<text>\n)"
  std::vector<std::pair<std::string, int32_t>> items;  // name, value Expression
  std::string value(int32_t e) const {
    const auto& b = file->model().expressions[static_cast<size_t>(e)].bytes;
    return file->text().substr(b.start, b.size());
  }
};
Result<DirectiveItems> directiveItems(std::string_view text, std::string_view key, std::string_view expects) {
  std::string what = "'# kernlens: " + std::string(key) + "'";
  auto parsed = python::SourceFile::parse("_(" + std::string(text) + "\n)");
  if (!parsed) return parsed.error();
  DirectiveItems out{*parsed, {}};
  const python::Module& m = out.file->model();
  const python::Statement* st = m.moduleBlock().statements.size() == 1
                                    ? &m.statements[static_cast<size_t>(m.moduleBlock().statements[0])]
                                    : nullptr;
  if (!m.errors.empty() || !st || st->call == python::kNone || m.calls[static_cast<size_t>(st->call)].bytes.start != 0)
    return Error::invalid(what + " expects " + std::string(expects) + " items, got '" + std::string(trim(text)) + "'");
  for (const auto& a :
       m.expressions[static_cast<size_t>(m.calls[static_cast<size_t>(st->call)].expression)].arguments) {
    if (a.keyword.empty()) {
      const auto& b = m.expressions[static_cast<size_t>(a.value)].bytes;
      std::string item = (a.splat == python::Expression::Argument::Splat::List   ? "*"
                          : a.splat == python::Expression::Argument::Splat::Dict ? "**"
                                                                                 : "") +
                         out.file->text().substr(b.start, b.size());
      return Error::invalid(what + " expects " + std::string(expects) + " items, got '" + item + "'");
    }
    out.items.emplace_back(a.keyword, a.value);
  }
  return out;
}

/// The text after "# kernlens: <key>" on the lines around a definition.
std::optional<std::string> directive(const python::SourceFile& f, uint32_t firstLine, uint32_t defLine,
                                     std::string_view key) {
  std::string needle = "# kernlens: " + std::string(key);
  uint32_t from = firstLine >= 3 ? firstLine - 3 : 0;
  uint32_t to = std::min(defLine + 1, f.lines().lineCount() - 1);
  for (uint32_t l = from; l <= to; ++l) {
    std::string_view line = std::string_view(f.text()).substr(f.lines().lineStart(l),
                                                              f.lines().lineEnd(l, f.text()) - f.lines().lineStart(l));
    size_t at = line.find(needle);
    if (at != std::string_view::npos) return std::string(trim(line.substr(at + needle.size())));
  }
  return std::nullopt;
}

Result<Items> parseArgsComment(std::string_view text) {
  auto d = directiveItems(text, "args", "name=value");
  if (!d) return d.error();
  Items out;
  for (const auto& [name, e] : d->items) out.emplace_back(name, d->value(e));
  return out;
}

}  // namespace

Result<Items> parseShapesComment(std::string_view text) {
  auto d = directiveItems(text, "shapes", "name=(d0,d1,...)");
  if (!d) return d.error();
  Items out;
  for (const auto& [name, e] : d->items) {
    // A tuple of integer literals, `(8)` included: digits, commas and spaces inside the brackets.
    const python::Expression& x = d->file->model().expressions[static_cast<size_t>(e)];
    std::string shape = d->value(e);
    bool ok = x.nodeType == "tuple" || x.nodeType == "parenthesized_expression";
    bool digit = false;
    for (size_t i = 1; ok && i + 1 < shape.size(); ++i) {
      char c = shape[i];
      if (std::isdigit(static_cast<unsigned char>(c)))
        digit = true;
      else if (c != ',' && c != ' ')
        ok = false;
    }
    if (!ok || !digit)
      return Error::invalid("'# kernlens: shapes': " + name + " needs a tuple of integers like (8,128,512), got '" +
                            shape + "'");
    out.emplace_back(name, shape);
  }
  if (out.empty()) return Error::invalid("'# kernlens: shapes' names no input");
  return out;
}

namespace {

/// The module name of `req.path` and its import root: climb while the directory is a package.
Result<void> locateModule(WorkspaceIndex& index, const HarnessRequest& req, Harness& h) {
  fs::path file = index.root() / req.path;
  fs::path dir = file.parent_path();
  std::vector<std::string> parts;
  std::error_code ec;
  while (fs::is_regular_file(dir / "__init__.py", ec) && dir != index.root().parent_path()) {
    parts.insert(parts.begin(), dir.filename().string());
    dir = dir.parent_path();
  }
  if (file.stem() != "__init__") parts.push_back(file.stem().string());
  for (size_t i = 0; i < parts.size(); ++i) h.module += (i ? "." : "") + parts[i];
  h.sysPath = dir.string();
  if (h.module.empty()) return Error::unsupported("cannot synthesise inputs: " + req.path + " is not importable");
  return {};
}

/// The function's keyword arguments ("x=torch.randn(...), n=3"), from its `shapes` and `args`
/// directives; a parameter with neither keeps its default.
Result<std::string> callArguments(const python::SourceFile& f, const python::Function& fn, const std::string& qualName,
                                  Harness& h) {
  auto ps = fn.parameters;
  if (fn.isMethod && !ps.empty()) ps.erase(ps.begin());
  std::vector<std::pair<std::string, std::string>> shapes, args;
  if (auto c = directive(f, fn.lines.first, fn.defLine, "shapes")) {
    auto s = parseShapesComment(*c);
    if (!s) return s.error();
    shapes = *s;
  }
  if (auto c = directive(f, fn.lines.first, fn.defLine, "args")) {
    auto a = parseArgsComment(*c);
    if (!a) return a.error();
    args = *a;
  }
  std::string call;
  std::vector<std::string> missing;
  for (const auto& p : ps) {
    if (p.splat != python::Parameter::Splat::None) continue;
    std::string value;
    for (const auto& [n, s] : shapes)
      if (n == p.name) value = "torch.randn(" + s + ", device=device)";
    for (const auto& [n, v] : args)
      if (n == p.name && value.empty()) value = v;
    if (value.empty()) {
      if (p.hasDefault) {
        h.notes.push_back(p.name + ": its default");
        continue;
      }
      missing.push_back(p.name);
      continue;
    }
    h.notes.push_back(p.name + " = " + value);
    call += (call.empty() ? "" : ", ") + p.name + "=" + value;
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    return Error::unsupported("cannot synthesise inputs for " + qualName + ": no shape, value or default for " + names +
                              " (add `# kernlens: shapes " + missing[0] +
                              "=(8,128,512)` above the def, or "
                              "`# kernlens: args " +
                              missing[0] + "=...`)");
  }
  return call;
}

/// The constructor arguments of `cls` ("d=16"), from the `args` directives of its __init__ and
/// of the class; "" when it has no __init__.
Result<std::string> constructorArguments(const python::SourceFile& f, const python::Module& m, const python::Class& cls,
                                         int32_t klass) {
  std::string ctorArgs;
  int32_t init = kNone;
  for (size_t i = 0; i < m.functions.size(); ++i)
    if (m.functions[i].klass == klass && m.functions[i].isMethod && m.functions[i].name == "__init__")
      init = static_cast<int32_t>(i);
  if (init == kNone) return ctorArgs;
  const auto& ifn = m.functions[init];
  auto ips = ifn.parameters;
  if (!ips.empty()) ips.erase(ips.begin());
  std::vector<std::pair<std::string, std::string>> iargs;
  for (auto where : {std::make_pair(ifn.lines.first, ifn.defLine), std::make_pair(cls.lines.first, cls.classLine)}) {
    if (auto c = directive(f, where.first, where.second, "args")) {
      auto a = parseArgsComment(*c);
      if (!a) return a.error();
      iargs.insert(iargs.end(), a->begin(), a->end());
    }
  }
  std::vector<std::string> imissing;
  for (const auto& p : ips) {
    if (p.splat != python::Parameter::Splat::None) continue;
    std::string value;
    for (const auto& [n, v] : iargs)
      if (n == p.name && value.empty()) value = v;
    if (value.empty()) {
      if (!p.hasDefault) imissing.push_back(p.name);
      continue;
    }
    ctorArgs += (ctorArgs.empty() ? "" : ", ") + p.name + "=" + value;
  }
  if (!imissing.empty()) {
    std::string names;
    for (const auto& n : imissing) names += (names.empty() ? "" : ", ") + n;
    return Error::unsupported("cannot build " + cls.qualName + ": __init__ needs " + names +
                              " (no default); add `# kernlens: args " + imissing[0] + "=...` above `class " + cls.name +
                              "` or set a harness factory (module:function)");
  }
  return ctorArgs;
}

/// The statement that builds the object a method runs on: the harness factory's, else the
/// class's constructor.
Result<std::string> buildObject(const python::SourceFile& f, const python::Function& fn, const HarnessRequest& req,
                                Harness& h) {
  const auto& m = f.model();
  const auto& cls = m.classes[fn.klass];
  if (!req.factory.empty()) {
    size_t colon = req.factory.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= req.factory.size())
      return Error::invalid("harness factory must be 'module:function', got '" + req.factory + "'");
    h.notes.push_back("object from factory " + req.factory);
    return "obj = importlib.import_module(" + nvtx::pythonLiteral(req.factory.substr(0, colon)) + ")." +
           req.factory.substr(colon + 1) + "()";
  }
  auto ctorArgs = constructorArguments(f, m, cls, fn.klass);
  if (!ctorArgs) return ctorArgs.error();
  h.notes.push_back("object " + cls.qualName + "(" + *ctorArgs + ")");
  return "obj = mod." + cls.qualName + "(" + *ctorArgs + ")";
}

std::string harnessScript(const HarnessRequest& req, const python::Function& fn, const Harness& h,
                          const std::string& build, const std::string& call) {
  std::string s;
  s += "# Generated by kernlens (branch extraction): runs " + req.path + "::" + req.qualName + " in isolation\n";
  s += "# with synthetic inputs. Safe to delete; regenerated on every run.\n";
  s += "import importlib\nimport sys\n\n";
  s += "sys.path.insert(0, " + nvtx::pythonLiteral(h.sysPath) + ")\n";
  s += "import torch  # noqa: E402\n\n";
  s += "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n";
  s += "mod = importlib.import_module(" + nvtx::pythonLiteral(h.module) + ")\n";
  if (fn.isMethod) {
    s += build + "\n";
    s += "if isinstance(obj, torch.nn.Module):\n    obj = obj.to(device)\n";
    s += "fn = obj." + fn.name + "\n";
  } else {
    s += "fn = mod." + fn.name + "\n";
  }
  s += "\n\ndef inputs():\n    return dict(" + call + ")\n\n\n";
  s += "args = inputs()\n";
  s += "for _ in range(" + std::to_string(req.warmup) + "):  # warm-up\n    fn(**args)\n";
  s += "for _ in range(" + std::to_string(req.iterations) + "):\n    fn(**args)\n";
  s += "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n";
  return s;
}

}  // namespace

Result<Harness> generateHarness(WorkspaceIndex& index, const HarnessRequest& req) {
  auto f = index.file(req.path);
  if (!f) return f.error();
  const auto& m = (*f)->model();
  int32_t fi = m.findFunction(req.qualName);
  if (fi == kNone) return Error::notFound(req.path + ": no function " + req.qualName);
  const auto& fn = m.functions[fi];
  if (fn.parent != kNone)
    return Error::unsupported("cannot synthesise inputs: " + req.qualName + " is a nested function");
  if (fn.klass != kNone && m.classes[fn.klass].klass != kNone)
    return Error::unsupported("cannot synthesise inputs: " + req.qualName + " is a method of a nested class");

  Harness h;
  // 1. Module name and import root.
  if (auto l = locateModule(index, req, h); !l) return l.error();
  // 2. Inputs of the function.
  auto call = callArguments(**f, fn, req.qualName, h);
  if (!call) return call.error();
  // 3. The object for a method.
  std::string build;
  if (fn.isMethod) {
    auto b = buildObject(**f, fn, req, h);
    if (!b) return b.error();
    build = std::move(*b);
  }
  // 4. The script.
  h.script = harnessScript(req, fn, h, build, *call);
  return h;
}

}  // namespace kl::planner
