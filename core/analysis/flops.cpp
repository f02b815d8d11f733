#include "core/analysis/flops.h"

#include <charconv>

namespace kl::analysis {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

std::vector<int64_t> ints(std::string_view s) {
  std::vector<int64_t> v;
  for (auto t : split(s, ',')) {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    int64_t x = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec == std::errc() && p == t.data() + t.size() && x >= 0) v.push_back(x);
  }
  return v;
}

double prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= static_cast<double>(d[i]);
  return p;
}

bool endsWith(std::string_view s, std::string_view e) {
  return s.size() >= e.size() && s.substr(s.size() - e.size()) == e;
}

}  // namespace

OpShapes parseShapes(std::string_view text) {
  OpShapes o;
  auto parts = split(text, '|');
  if (!parts.empty() && !parts[0].empty())
    for (auto in : split(parts[0], ';')) o.dims.push_back(ints(in));
  if (parts.size() > 1 && !parts[1].empty())
    for (auto t : split(parts[1], ';')) o.types.emplace_back(t);
  if (parts.size() > 2 && !parts[2].empty())
    for (auto c : split(parts[2], ';')) o.concrete.emplace_back(c);
  return o;
}

bool parseNvtxShapes(std::string_view text, std::string& opName, OpShapes& out) {
  auto key = text.find("sizes = [");
  if (key == std::string_view::npos) return false;
  opName = std::string(text.substr(0, text.find(',')));
  size_t i = key + 8;  // at the outer '['
  int depth = 0;
  std::string cur;
  out.dims.clear();
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '[') {
      ++depth;
      if (depth == 2) cur.clear();
    } else if (c == ']') {
      if (depth == 2) out.dims.push_back(ints(cur));
      if (--depth == 0) break;
    } else if (depth >= 2) {
      cur.push_back(c == ' ' ? ',' : c);
    } else if (depth == 1 && c != ',' && c != ' ') {
      // A scalar input at the top level (no brackets): no dims.
    }
  }
  // ints() drops empty tokens made by ", " -> ",,".
  return depth == 0 && !out.dims.empty();
}

bool flopsOf(std::string_view name, const OpShapes& s, OpFlops& out) {
  auto dimsAt = [&](size_t i) -> const std::vector<int64_t>& {
    static const std::vector<int64_t> none;
    return i < s.dims.size() ? s.dims[i] : none;
  };
  auto typeAt = [&](size_t i) { return i < s.types.size() ? dtypeFromTorch(s.types[i]) : DType::Unknown; };
  auto concreteAt = [&](size_t i) -> std::string_view {
    return i < s.concrete.size() ? std::string_view(s.concrete[i]) : "";
  };
  out = {};
  auto mm = [&](size_t a, size_t b) {
    const auto& A = dimsAt(a);
    const auto& B = dimsAt(b);
    if (A.size() != 2 || B.size() != 2 || A[1] != B[0]) return false;
    out.flops = 2.0 * static_cast<double>(A[0]) * static_cast<double>(B[1]) * static_cast<double>(A[1]);
    out.dtype = typeAt(a);
    out.formula = "2*M*N*K";
    return true;
  };
  auto bmm = [&](size_t a, size_t b) {
    const auto& A = dimsAt(a);
    const auto& B = dimsAt(b);
    if (A.size() != 3 || B.size() != 3 || A[0] != B[0] || A[2] != B[1]) return false;
    out.flops = 2.0 * static_cast<double>(A[0]) * static_cast<double>(A[1]) * static_cast<double>(B[2]) *
                static_cast<double>(A[2]);
    out.dtype = typeAt(a);
    out.formula = "2*b*M*N*K";
    return true;
  };
  if (name == "aten::mm" || name == "aten::_scaled_mm") return mm(0, 1);
  if (name == "aten::addmm") return mm(1, 2);
  if (name == "aten::bmm") return bmm(0, 1);
  if (name == "aten::baddbmm") return bmm(1, 2);
  if (name == "aten::matmul") {
    const auto& A = dimsAt(0);
    if (A.size() == 2) return mm(0, 1);
    return bmm(0, 1);
  }
  if (name == "aten::linear") {
    const auto& X = dimsAt(0);
    const auto& W = dimsAt(1);
    if (X.empty() || W.size() != 2 || X.back() != W[1]) return false;
    out.flops = 2.0 * prod(X, 0, X.size() - 1) * static_cast<double>(W[0]) * static_cast<double>(W[1]);
    out.dtype = typeAt(0);
    out.formula = "2*prod(x[:-1])*N*K";
    return true;
  }
  // Attention.
  bool backward = endsWith(name, "_backward");
  std::string_view base = backward ? name.substr(0, name.size() - 9) : name;
  bool bhle = base == "aten::_scaled_dot_product_flash_attention" ||
              base == "aten::_scaled_dot_product_efficient_attention" ||
              base == "aten::_scaled_dot_product_cudnn_attention" || base == "aten::scaled_dot_product_attention" ||
              base == "aten::_scaled_dot_product_flash_attention_for_cpu";
  bool blhe = base == "aten::_flash_attention_forward" || base == "aten::_efficient_attention_forward" ||
              base == "aten::_flash_attention" || base == "aten::_efficient_attention";
  if (backward && base == "aten::_flash_attention") blhe = true;
  if (!bhle && !blhe) return false;
  // Backward ops take grad_out first: q, k, v follow.
  size_t q = backward ? 1 : 0;
  const auto& Q = dimsAt(q);
  const auto& K = dimsAt(q + 1);
  const auto& V = dimsAt(q + 2);
  if (Q.size() != 4 || K.size() != 4 || V.size() != 4) return false;
  double B = static_cast<double>(Q[0]);
  double H = static_cast<double>(bhle ? Q[1] : Q[2]);
  double L = static_cast<double>(bhle ? Q[2] : Q[1]);
  double S = static_cast<double>(bhle ? K[2] : K[1]);
  double E = static_cast<double>(Q[3]), Ev = static_cast<double>(V[3]);
  out.flops = 2.0 * B * H * L * S * (E + Ev);
  out.formula = "attention 2*B*H*L*S*(E+Ev)";
  // is_causal from the concrete inputs, where the signature puts it (forward ops only).
  int causalAt = -1;
  if (!backward) {
    if (base == "aten::_scaled_dot_product_flash_attention")
      causalAt = 4;
    else if (base == "aten::_scaled_dot_product_efficient_attention")
      causalAt = 6;
    else if (base == "aten::_scaled_dot_product_cudnn_attention")
      causalAt = 6;
    else if (base == "aten::scaled_dot_product_attention")
      causalAt = 5;
    else if (base == "aten::_flash_attention_forward")
      causalAt = 8;
  }
  if (causalAt >= 0 && concreteAt(static_cast<size_t>(causalAt)) == "True") {
    out.flops /= 2;
    out.formula += " / 2 (causal)";
  }
  if (backward) {
    out.flops *= 2;
    out.formula = "backward 2 x (" + out.formula + ")";
  }
  out.dtype = typeAt(q);
  return true;
}

}  // namespace kl::analysis
