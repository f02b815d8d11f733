// kernlens/benchHints {count, uri}: the baseline tests/bench/lsp_bench.py holds
// textDocument/inlayHint against — `count` copies of one typical hint for `uri`, serialised once
// per (count, uri), so a request costs only the JSON-RPC round trip of the same bytes. Registered
// only by `kernlens lsp --bench-baseline`; never advertised.
#include <memory>
#include <string>
#include <utility>

#include "core/results/format.h"
#include "lsp/features/all.h"
#include "lsp/server/server.h"

namespace kl::lsp {
namespace {

struct BenchHintsParams {
  uint32_t count = 0;
  std::string uri;
};
bool fromJson(const json& j, BenchHintsParams& p, JPath path) {
  ObjectReader o(j, path);
  return o && o.req("count", p.count) && o.req("uri", p.uri);
}

}  // namespace

void registerBenchBaseline(Server& server) {
  auto cache = std::make_shared<std::pair<std::string, std::string>>();  // key, answer
  server.method<BenchHintsParams, RawJson>(
      "kernlens/benchHints", [cache](const BenchHintsParams& p, Reply<RawJson> reply) {
        std::string key = std::to_string(p.count) + " " + p.uri;
        if (cache->first != key || cache->second.empty()) {
          std::string uri, label;
          appendJson(uri, p.uri);
          appendJson(label, std::string(results::kHintPrefix) + " 1.92 ms · 2 kernels");
          std::string out = "[";
          for (uint32_t i = 0; i < p.count; ++i) {
            if (i) out += ',';
            const std::string line = std::to_string(3000 + i % 1000);
            out += R"({"data":{"gen":1,"line":)" + line + R"(,"uri":)" + uri + R"(},"label":)" + label +
                   R"(,"paddingLeft":true,"position":{"character":19,"line":)" + line + "}}";
          }
          *cache = {key, out + "]"};
        }
        reply(RawJson{cache->second});
      });
}

}  // namespace kl::lsp
