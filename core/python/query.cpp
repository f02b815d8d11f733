#include "core/python/query.h"

#include <map>
#include <mutex>

#include "core/python/queries.h"

namespace kl::python {

namespace {

const char* queryErrorKind(TSQueryError e) {
  switch (e) {
    case TSQueryErrorSyntax: return "syntax error";
    case TSQueryErrorNodeType: return "invalid node type";
    case TSQueryErrorField: return "invalid field name";
    case TSQueryErrorCapture: return "invalid capture name";
    case TSQueryErrorStructure: return "impossible pattern structure";
    case TSQueryErrorLanguage: return "incompatible language";
    default: return "error";
  }
}

}  // namespace

TSNode Match::get(uint32_t index) const {
  for (const Capture& c : captures)
    if (c.index == index) return c.node;
  return TSNode{};
}

Query::Query(Query&&) noexcept = default;
Query& Query::operator=(Query&&) noexcept = default;
Query::~Query() = default;

Result<Query> Query::compile(std::string_view name, std::string_view source) {
  auto lang = pythonLanguage();
  if (!lang) return lang.error();
  uint32_t errorOffset = 0;
  TSQueryError errorType = TSQueryErrorNone;
  Query q;
  q.name_ = std::string(name);
  q.q_ =
      QueryHandle(ts_query_new(*lang, source.data(), static_cast<uint32_t>(source.size()), &errorOffset, &errorType));
  if (!q.q_)
    return Error::invalid("query " + q.name_ + ": " + queryErrorKind(errorType) + " at offset " +
                          std::to_string(errorOffset));

  uint32_t ncap = ts_query_capture_count(q.q_.get());
  for (uint32_t i = 0; i < ncap; ++i) {
    uint32_t len = 0;
    const char* s = ts_query_capture_name_for_id(q.q_.get(), i, &len);
    q.captureNames_.emplace_back(s, len);
  }

  uint32_t npat = ts_query_pattern_count(q.q_.get());
  q.predicates_.resize(npat);
  for (uint32_t p = 0; p < npat; ++p) {
    uint32_t nsteps = 0;
    const TSQueryPredicateStep* steps = ts_query_predicates_for_pattern(q.q_.get(), p, &nsteps);
    uint32_t i = 0;
    while (i < nsteps) {
      // One predicate: String(name) args... Done.
      uint32_t j = i;
      while (j < nsteps && steps[j].type != TSQueryPredicateStepTypeDone) ++j;
      auto str = [&](uint32_t k) {
        uint32_t len = 0;
        const char* s = ts_query_string_value_for_id(q.q_.get(), steps[k].value_id, &len);
        return std::string(s, len);
      };
      std::string where = "query " + q.name_ + ": pattern " + std::to_string(p) + ": ";
      if (j == i || steps[i].type != TSQueryPredicateStepTypeString)
        return Error::invalid(where + "malformed predicate");
      std::string op = str(i);
      Predicate pred{};
      if (op == "eq?")
        pred.op = Predicate::Op::Eq;
      else if (op == "not-eq?")
        pred.op = Predicate::Op::NotEq;
      else if (op == "match?")
        pred.op = Predicate::Op::Match;
      else if (op == "not-match?")
        pred.op = Predicate::Op::NotMatch;
      else
        return Error::unsupported(where + "unsupported predicate #" + op);
      if (j - i != 3 || steps[i + 1].type != TSQueryPredicateStepTypeCapture)
        return Error::invalid(where + "#" + op + " takes a capture and one argument");
      pred.capture = steps[i + 1].value_id;
      if (steps[i + 2].type == TSQueryPredicateStepTypeCapture) {
        if (pred.op == Predicate::Op::Match || pred.op == Predicate::Op::NotMatch)
          return Error::invalid(where + "#" + op + " needs a regex string, not a capture");
        pred.otherCapture = static_cast<int32_t>(steps[i + 2].value_id);
      } else {
        pred.literal = str(i + 2);
        if (pred.op == Predicate::Op::Match || pred.op == Predicate::Op::NotMatch) {
          try {
            pred.regex = std::make_shared<const std::regex>(pred.literal, std::regex::ECMAScript);
          } catch (const std::regex_error& e) {
            return Error::invalid(where + "bad regex \"" + pred.literal + "\": " + e.what());
          }
        }
      }
      q.predicates_[p].push_back(std::move(pred));
      i = j + 1;
    }
  }
  return q;
}

Result<std::shared_ptr<const Query>> Query::embedded(std::string_view name) {
  static std::mutex mu;
  static std::map<std::string, Result<std::shared_ptr<const Query>>, std::less<>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  Result<std::shared_ptr<const Query>> r = [&]() -> Result<std::shared_ptr<const Query>> {
    std::string_view src = embeddedQuery(name);
    if (src.empty()) return Error::notFound("no embedded query grammars/queries/" + std::string(name) + ".scm");
    auto q = compile(name, src);
    if (!q) return q.error();
    return std::shared_ptr<const Query>(std::make_shared<Query>(std::move(*q)));
  }();
  cache.emplace(std::string(name), r);
  return r;
}

int32_t Query::captureIndex(std::string_view name) const {
  for (size_t i = 0; i < captureNames_.size(); ++i)
    if (captureNames_[i] == name) return static_cast<int32_t>(i);
  return -1;
}

Result<uint32_t> Query::requireCapture(std::string_view name) const {
  int32_t i = captureIndex(name);
  if (i < 0) return Error::invalid("query " + name_ + ": no capture @" + std::string(name));
  return static_cast<uint32_t>(i);
}

uint32_t Query::patternCount() const { return ts_query_pattern_count(q_.get()); }

bool Query::predicatesHold(const TSQueryMatch& m, std::string_view text) const {
  if (m.pattern_index >= predicates_.size()) return true;
  for (const Predicate& p : predicates_[m.pattern_index]) {
    auto firstOf = [&](uint32_t cap) -> TSNode {
      for (uint16_t k = 0; k < m.capture_count; ++k)
        if (m.captures[k].index == cap) return m.captures[k].node;
      return TSNode{};
    };
    for (uint16_t k = 0; k < m.capture_count; ++k) {
      if (m.captures[k].index != p.capture) continue;
      std::string_view left = nodeText(m.captures[k].node, text);
      bool holds = true;
      switch (p.op) {
        case Predicate::Op::Eq:
        case Predicate::Op::NotEq: {
          bool eq;
          if (p.otherCapture >= 0) {
            TSNode other = firstOf(static_cast<uint32_t>(p.otherCapture));
            if (ts_node_is_null(other)) break;  // absent operand: holds
            eq = left == nodeText(other, text);
          } else {
            eq = left == p.literal;
          }
          holds = (p.op == Predicate::Op::Eq) == eq;
          break;
        }
        case Predicate::Op::Match:
        case Predicate::Op::NotMatch: {
          bool found = std::regex_search(left.begin(), left.end(), *p.regex);
          holds = (p.op == Predicate::Op::Match) == found;
          break;
        }
      }
      if (!holds) return false;
    }
  }
  return true;
}

std::vector<Match> Query::matches(TSNode node, std::string_view text, QueryCursor& cursor) const {
  return matches(node, text, cursor, 0, UINT32_MAX);
}

std::vector<Match> Query::matches(TSNode node, std::string_view text, QueryCursor& cursor, uint32_t start,
                                  uint32_t end) const {
  std::vector<Match> out;
  TSQueryCursor* c = cursor.get();
  ts_query_cursor_set_byte_range(c, start, end);
  ts_query_cursor_exec(c, q_.get(), node);
  TSQueryMatch m;
  while (ts_query_cursor_next_match(c, &m)) {
    if (!predicatesHold(m, text)) continue;
    Match mm;
    mm.pattern = m.pattern_index;
    mm.captures.reserve(m.capture_count);
    for (uint16_t k = 0; k < m.capture_count; ++k) mm.captures.push_back({m.captures[k].index, m.captures[k].node});
    out.push_back(std::move(mm));
  }
  return out;
}

}  // namespace kl::python
