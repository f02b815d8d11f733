// Feature state dies with its server: no shared_ptr cycles between the feature context, the store's change
// hooks and hint providers (found by the fuzzer's leak checker; the fuzz build runs LSan, this
// test keeps the g++ build honest).
#include <doctest/doctest.h>

#include <memory>

#include "lsp/features/all.h"
#include "lsp/features/cute_regions.h"
#include "lsp/features/feature_context.h"
#include "tests/unit/lsp/lsp_test_client.h"

using namespace kl::lsp;

TEST_CASE("the feature context, its result store and the CUTE regions are freed with their server") {
  std::weak_ptr<FeatureContext> view;
  std::weak_ptr<ResultStore> store;
  std::weak_ptr<CuteRegions> regions;
  {
    test::TestClient client([&](Server& s) {
      auto v = registerFeatureContext(s);
      view = v;
      store = v->results;
      registerCodeLens(s, v);
      regions = registerCuteRegions(s, v);
      registerDiagnostics(s, v);
      registerHover(s, v);
      registerInlayHints(s, v);
      registerLoadProfile(s, v);
      registerProfileRun(s, v);
    });
    client.request(1, "initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", json::object()}});
    client.notify("initialized", json::object());
    client.take();
    CHECK_FALSE(view.expired());
  }
  CHECK(view.expired());
  CHECK(store.expired());
  CHECK(regions.expired());
}
