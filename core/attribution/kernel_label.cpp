#include "core/attribution/kernel_label.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "core/profile/kernel_name.h"

namespace kl::attribution {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool opens(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool closes(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

/// Splits at `sep` where no bracket is open.
std::vector<std::string_view> splitTop(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (opens(c))
      ++depth;
    else if (closes(c) && depth > 0)
      --depth;
    else if (depth == 0 && s.compare(i, sep.size(), sep) == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      i += sep.size() - 1;
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

/// The identifier a scope component starts with ("MulFunctor<float>" -> "MulFunctor",
/// "launch(at::X&)" -> "launch"); "" for "(anonymous namespace)", "{lambda()#1}", "operator()".
std::string_view leadingName(std::string_view comp) {
  size_t n = 0;
  while (n < comp.size() && (std::isalnum(static_cast<unsigned char>(comp[n])) || comp[n] == '_')) ++n;
  std::string_view name = comp.substr(0, n);
  if (name == "operator") return {};
  return name;
}

/// The text between the brackets that open right after `name` in `comp` ("X<a, b>" -> "a, b").
std::string_view bracketed(std::string_view comp, size_t from, char open) {
  if (from >= comp.size() || comp[from] != open) return {};
  int depth = 0;
  for (size_t i = from; i < comp.size(); ++i) {
    if (opens(comp[i]))
      ++depth;
    else if (closes(comp[i]) && --depth == 0)
      return comp.substr(from + 1, i - from - 1);
  }
  return {};
}

bool isPlainType(std::string_view name) {
  static constexpr std::array<std::string_view, 22> kPlain = {
      "float",  "double", "int",    "long",     "short",    "char",         "bool",          "unsigned",
      "signed", "void",   "Half",   "BFloat16", "half",     "__half",       "__nv_bfloat16", "complex",
      "true",   "false",  "size_t", "int64_t",  "uint32_t", "Float8_e4m3fn"};
  return std::find(kPlain.begin(), kPlain.end(), name) != kPlain.end();
}

/// Wrappers that describe where the data is (pointer arrays, offsets, tensor lists), not what
/// the kernel computes.
bool isLayout(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kLayout = {"Array",
                                                              "OffsetCalculator",
                                                              "TrivialOffsetCalculator",
                                                              "TensorListMetadata",
                                                              "TensorListScalarListMetadata",
                                                              "FusedOptimizerTensorListMetadata"};
  return std::find(kLayout.begin(), kLayout.end(), name) != kLayout.end();
}

/// Wrapper templates whose own name says nothing: the tag is inside their arguments. Every layout
/// wrapper, plus ATen's loaders/reducers, the generic launchers whose lambda a kernel runs
/// (`gpu_kernel_impl<F>`) and the generic functors of its multi-tensor (foreach) kernels
/// (`multi_tensor_apply_kernel<TensorListMetadata<1>, BinaryOpScalarFunctor<float, 1, 1, 0>,
/// std::multiplies<float>, float>` -> tag `multiplies`).
bool isWrapper(std::string_view name) {
  static constexpr std::array<std::string_view, 21> kWrappers = {"ReduceOp",
                                                                 "gpu_kernel_impl",
                                                                 "gpu_kernel_impl_nocast",
                                                                 "func_wrapper_t",
                                                                 "LoadWithCast",
                                                                 "StoreWithCast",
                                                                 "LoadWithoutCast",
                                                                 "StoreWithoutCast",
                                                                 "tuple",
                                                                 "pair",
                                                                 "function",
                                                                 "UnaryOpFunctor",
                                                                 "BinaryOpScalarFunctor",
                                                                 "BinaryOpScalarListFunctor",
                                                                 "BinaryOpListAlphaFunctor",
                                                                 "BinaryOpScalarTensor",
                                                                 "PointwiseOpScalarFunctor",
                                                                 "PointwiseOpScalarListFunctor",
                                                                 "PointwiseOpListFunctor",
                                                                 "TernaryOpListFunctor",
                                                                 "TernaryOpScalarFunctor"};
  return isLayout(name) || std::find(kWrappers.begin(), kWrappers.end(), name) != kWrappers.end();
}

std::string tagOf(std::string_view arg, int depth) {
  arg = trim(arg);
  if (arg.empty() || depth > 4) return {};
  if (std::isdigit(static_cast<unsigned char>(arg.front())) || arg.front() == '-') return {};
  auto comps = splitTop(arg, "::");
  bool lambda = false;
  for (auto c : comps)
    if (c.rfind("{lambda", 0) == 0) lambda = true;
  if (lambda) {
    // The function (`f(...)`) or class (followed by `operator()`) the lambda is defined in.
    for (size_t i = 0; i < comps.size(); ++i) {
      std::string_view name = leadingName(comps[i]);
      if (name.empty()) continue;
      size_t after = name.size();
      if (after < comps[i].size() && comps[i][after] == '<') after += bracketed(comps[i], after, '<').size() + 2;
      bool function = after < comps[i].size() && comps[i][after] == '(';
      bool callable = i + 1 < comps.size() && comps[i + 1].rfind("operator()", 0) == 0;
      if (!function && !callable) continue;
      // A lambda of a generic launcher (`gpu_kernel_impl<F>(...)::{lambda(int)#1}`): the tag is F's.
      if (isWrapper(name) && after > name.size())
        for (auto inner : splitTop(bracketed(comps[i], name.size(), '<'), ","))
          if (auto t = tagOf(inner, depth + 1); !t.empty()) return t;
      return std::string(name);
    }
    return "lambda";
  }
  std::string_view last = comps.back();
  std::string_view name = leadingName(last);
  if (name.empty()) return {};
  // "unsigned int", "long long": plain types written in two words.
  if (isPlainType(name)) return {};
  if (isWrapper(name)) {
    for (auto inner : splitTop(bracketed(last, name.size(), '<'), ","))
      if (auto t = tagOf(inner, depth + 1); !t.empty()) return t;
    return {};
  }
  return std::string(name);
}

/// An argument shortened for display: its last scope component, inner template arguments cut
/// except the first one in which it differs from `others` (the arguments of the same position in
/// the kernels it must be told apart from): "at::detail::Array<char*, 2>" against
/// "at::detail::Array<char*, 3>" -> "Array<…, 2>"; against other templates only, its name:
/// "BinaryOpScalarFunctor<float, 1, 1, 0>" against "PointwiseOpScalarFunctor<…>" -> "BinaryOpScalarFunctor".
std::string shortArgument(std::string_view arg, const std::vector<std::string_view>& others, int depth = 0) {
  auto comps = splitTop(trim(arg), "::");
  std::string_view last = comps.back();
  std::string_view name = leadingName(last);
  if (name.empty() || name.size() >= last.size() || last[name.size()] != '<') return std::string(last.substr(0, 24));
  auto inner = splitTop(bracketed(last, name.size(), '<'), ",");
  // The others of the same template: their inner arguments, for the first position that differs.
  std::vector<std::vector<std::string_view>> same;
  for (auto o : others) {
    auto oc = splitTop(trim(o), "::");
    std::string_view ol = oc.back();
    if (leadingName(ol) == name && ol.size() > name.size() && ol[name.size()] == '<')
      same.push_back(splitTop(bracketed(ol, name.size(), '<'), ","));
  }
  if (same.empty()) return std::string(name);  // the name alone tells it apart
  if (depth > 2) return std::string(name) + "<…>";
  for (size_t a = 0; a < inner.size(); ++a) {
    std::vector<std::string_view> differing;
    for (const auto& s : same)
      if (a >= s.size() || s[a] != inner[a]) differing.push_back(a < s.size() ? s[a] : std::string_view());
    if (differing.empty()) continue;
    return std::string(name) + "<" + (a > 0 ? "…, " : "") + shortArgument(inner[a], differing, depth + 1) +
           (a + 1 < inner.size() ? ", …" : "") + ">";
  }
  return std::string(name) + "<…>";
}

/// Byte offset of the start of the code point at or before `i`.
size_t codePointStart(std::string_view s, size_t i) {
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

/// Byte offset after the first `n` code points.
size_t bytesOf(std::string_view s, size_t n) {
  size_t i = 0;
  while (i < s.size() && n > 0) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    --n;
  }
  return i;
}

}  // namespace

std::vector<std::string> templateArguments(std::string_view demangled, std::string_view base) {
  if (base.empty()) return {};
  for (size_t at = demangled.find(base); at != std::string_view::npos; at = demangled.find(base, at + 1)) {
    bool startsName =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(demangled[at - 1])) || demangled[at - 1] == '_');
    size_t after = at + base.size();
    if (!startsName || after >= demangled.size() || demangled[after] != '<') continue;
    std::string_view inside = bracketed(demangled, after, '<');
    if (inside.empty()) return {};
    std::vector<std::string> out;
    for (auto a : splitTop(inside, ",")) out.emplace_back(a);
    return out;
  }
  return {};
}

std::string argumentTag(std::string_view arg) { return tagOf(arg, 0); }

std::vector<std::string> kernelLabels(const std::vector<KernelStat>& kernels, size_t maxWidth) {
  size_t n = kernels.size();
  std::vector<std::string> labels(n), tags(n);
  std::vector<std::vector<std::string>> args(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& k = kernels[i];
    std::string base = k.name.empty() ? k.fullName : k.name;
    args[i] = templateArguments(k.fullName, base);
    for (const auto& a : args[i])
      if (tags[i] = argumentTag(a); !tags[i].empty()) break;
    labels[i] = tags[i].empty() ? base : base + "<" + tags[i] + ">";
  }
  // Still equal: add the first argument in which the group's demangled names differ; one that
  // describes the computation before one that describes the data's layout.
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < n; ++i) groups[labels[i]].push_back(i);
  for (auto& [label, members] : groups) {
    if (members.size() < 2) continue;
    for (size_t i : members) {
      std::string diff;
      for (bool layout : {false, true})
        for (size_t a = 0; a < args[i].size() && diff.empty(); ++a) {
          if (isLayout(leadingName(splitTop(trim(args[i][a]), "::").back())) != layout) continue;
          std::vector<std::string_view> others;  // the group's differing arguments at this position
          for (size_t j : members)
            if (j != i && (a >= args[j].size() || args[j][a] != args[i][a]))
              others.push_back(a < args[j].size() ? std::string_view(args[j][a]) : std::string_view());
          if (!others.empty()) diff = shortArgument(args[i][a], others);
        }
      if (diff.empty() || diff == tags[i]) continue;
      std::string base = kernels[i].name.empty() ? kernels[i].fullName : kernels[i].name;
      labels[i] = base + "<" + (tags[i].empty() ? diff : tags[i] + ", " + diff) + ">";
    }
  }
  // Too long: a label with a template tag keeps the tag and loses the end of its base name
  // ("vectorized_elementwise…<launch_clamp_scalar>"); others keep the part that differs from the
  // other labels in view.
  std::vector<std::string> out(n);
  for (size_t i = 0; i < n; ++i) {
    std::string s = labels[i];
    if (displayWidth(s) <= maxWidth || maxWidth < 8) {
      out[i] = s;
      continue;
    }
    if (size_t lt = s.find('<'); lt != std::string::npos && lt > 0 && s.back() == '>') {
      std::string base = s.substr(0, lt), tag = s.substr(lt);
      if (base.size() > 7 && base.compare(base.size() - 7, 7, "_kernel") == 0) base.resize(base.size() - 7);
      size_t tagWidth = displayWidth(tag);
      if (displayWidth(base) + tagWidth <= maxWidth) {
        out[i] = base + tag;
        continue;
      }
      if (tagWidth + 6 <= maxWidth) {  // at least 5 code points of the base name
        out[i] = base.substr(0, bytesOf(base, maxWidth - tagWidth - 1)) + "…" + tag;
        continue;
      }
    }
    size_t common = 0;  // longest common prefix (code points) with another label
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      size_t p = 0;
      while (p < s.size() && p < labels[j].size() && s[p] == labels[j][p]) ++p;
      common = std::max(common, displayWidth(std::string_view(s).substr(0, codePointStart(s, p))));
    }
    if (common + 8 < maxWidth) {
      out[i] = s.substr(0, bytesOf(s, maxWidth - 1)) + "…";
    } else {
      size_t head = maxWidth / 3;
      size_t from = bytesOf(s, common > 6 ? common - 6 : 0);
      std::string tail = s.substr(from);
      size_t room = maxWidth - head - 1;
      bool cut = displayWidth(tail) > room;
      tail = tail.substr(0, bytesOf(tail, cut ? room - 1 : room));
      out[i] = s.substr(0, bytesOf(s, head)) + "…" + tail + (cut ? "…" : "");
    }
  }
  return out;
}

std::vector<std::string> kernelLabels(const std::vector<std::string>& names, size_t maxWidth) {
  std::vector<KernelStat> ks(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    ks[i].name = profile::baseName(names[i]);
    if (ks[i].name.empty()) ks[i].name = names[i];
    ks[i].fullName = names[i];
  }
  return kernelLabels(ks, maxWidth);
}

}  // namespace kl::attribution
