#include "core/nvtx/source_ranges.h"

#include <algorithm>
#include <map>

namespace kl::nvtx {

using python::Expression;
using python::kNone;
using python::Module;

namespace {

bool isRangeApi(std::string_view api) {
  return api == "torch.cuda.nvtx.range" || api == "nvtx.annotate" || api == "nvtx.range";
}

/// 1 push, -1 pop, 0 neither.
int pushPopKind(std::string_view api) {
  if (api == "torch.cuda.nvtx.range_push" || api == "nvtx.push_range") return 1;
  if (api == "torch.cuda.nvtx.range_pop" || api == "nvtx.pop_range") return -1;
  return 0;
}

/// The resolved dotted API `e` names ("" when it is not a name/attribute chain).
std::string apiOf(const Module& m, int32_t e) {
  auto d = m.dottedName(e);
  return d ? m.resolve(*d) : std::string();
}

/// The name argument of an NVTX call: the first positional argument, else msg= / message=.
void fillName(const Module& m, const std::string& text, SourceRange& r, int32_t call) {
  if (call == kNone) return;
  int32_t arg = m.argument(call, 0, "msg");
  if (arg == kNone) arg = m.argument(call, 0, "message");
  if (arg == kNone) return;
  const Expression& e = m.expressions[arg];
  r.nameText = text.substr(e.bytes.start, e.bytes.size());
  if (e.kind == Expression::Kind::String) r.name = e.literal;
}

SourceRange rangeOf(SourceRange::Kind kind, std::string api, int32_t statement, python::ByteRange call,
                    python::ByteRange item, python::ByteRange region) {
  SourceRange r;
  r.kind = kind;
  r.api = std::move(api);
  r.statement = statement;
  r.callBytes = call;
  r.itemBytes = item;
  r.bytes = region;
  return r;
}

}  // namespace

std::vector<SourceRange> sourceRanges(const python::SourceFile& f) {
  const Module& m = f.model();
  const std::string& text = f.text();
  std::vector<SourceRange> out;
  struct PushPop {
    int32_t stmt;
    bool push;
    std::string api;
    int32_t call;  // CallSite
  };
  std::map<int32_t, std::vector<PushPop>> byBlock;  // block -> push/pop statements in order
  for (size_t si = 0; si < m.statements.size(); ++si) {
    const auto& st = m.statements[si];
    int32_t s = static_cast<int32_t>(si);
    if (st.kind == python::StatementKind::With) {
      auto items = m.withItemsOf(s);
      for (const auto& item : items) {
        if (item.value == kNone || m.expressions[item.value].kind != Expression::Kind::Call) continue;
        const Expression& call = m.expressions[item.value];
        std::string api = apiOf(m, call.object);
        if (!isRangeApi(api)) continue;
        SourceRange r = rangeOf(SourceRange::Kind::With, std::move(api), s, call.bytes, item.bytes, st.bytes);
        r.withItemCount = static_cast<uint32_t>(items.size());
        fillName(m, text, r, item.value);
        out.push_back(std::move(r));
      }
    } else if (st.decorated) {
      const std::vector<python::Decorator>* decorators = nullptr;
      if (st.definesFunction != kNone)
        decorators = &m.functions[st.definesFunction].decorators;
      else if (st.definesClass != kNone)
        decorators = &m.classes[st.definesClass].decorators;
      if (!decorators) continue;
      for (const auto& d : *decorators) {
        if (d.expression == kNone) continue;
        const Expression& e = m.expressions[d.expression];
        int32_t call = e.kind == Expression::Kind::Call ? d.expression : kNone;
        std::string api = apiOf(m, call != kNone ? e.object : d.expression);
        if (!isRangeApi(api)) continue;
        SourceRange r = rangeOf(SourceRange::Kind::Decorator, std::move(api), s,
                                call != kNone ? e.bytes : python::ByteRange{}, d.bytes, st.bytes);
        r.function = st.definesFunction;
        fillName(m, text, r, call);
        out.push_back(std::move(r));
      }
    } else if (st.call != kNone) {
      int32_t ce = m.calls[st.call].expression;
      if (ce == kNone) continue;
      std::string api = apiOf(m, m.expressions[ce].object);
      int kind = pushPopKind(api);
      if (kind == 0) continue;
      byBlock[st.parentBlock].push_back({s, kind > 0, std::move(api), ce});
    }
  }
  // Push/pop pairs: within one block, each pop closes the latest open push of its family.
  for (auto& [block, events] : byBlock) {
    (void)block;
    std::map<bool, std::vector<size_t>> open;  // family (torch?) -> indices into out
    for (const PushPop& e : events) {
      bool torch = e.api.rfind("torch.", 0) == 0;
      if (e.push) {
        python::ByteRange call = m.expressions[e.call].bytes;
        SourceRange r = rangeOf(SourceRange::Kind::PushPop, e.api, e.stmt, call, call, m.statements[e.stmt].bytes);
        fillName(m, text, r, e.call);
        open[torch].push_back(out.size());
        out.push_back(std::move(r));
      } else if (!open[torch].empty()) {
        SourceRange& r = out[open[torch].back()];
        open[torch].pop_back();
        r.popStatement = e.stmt;
        r.bytes.end = m.statements[e.stmt].bytes.end;
      }
      // An unmatched pop is not a range; it is ignored.
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SourceRange& a, const SourceRange& b) {
    return a.bytes.start != b.bytes.start ? a.bytes.start < b.bytes.start : a.itemBytes.start < b.itemBytes.start;
  });
  return out;
}

}  // namespace kl::nvtx
