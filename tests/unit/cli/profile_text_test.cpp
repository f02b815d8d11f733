// `kernlens profile`'s per-line annotation: the figures of the line's results::LineView in the
// editor's words (expected strings written out by hand from the inputs).
#include "cli/profile_text.h"

#include <doctest/doctest.h>

using namespace kl;

namespace {
results::KernelStat kernel(const std::string& name, int64_t ns, uint64_t launches,
                           attribution::Pass pass = attribution::Pass::Forward) {
  results::KernelStat k;
  k.name = k.fullName = k.opName = name;
  k.totalNs = ns;
  k.launches = launches;
  k.pass = pass;
  return k;
}
}  // namespace

TEST_CASE("profile text: a line's annotation reads as its hint and hover") {
  results::LineResult l;
  l.gpuNs = 1'330'000;
  l.backwardNs = 910'000;
  l.ops = 4;
  l.invocations = 2;
  l.kernels = {kernel("dconv", 910'000, 2, attribution::Pass::Backward), kernel("conv", 420'000, 2)};
  CHECK(cli::lineAnnotation(results::describeLine(l, {}), 4) ==
        "420 µs + bwd 910 µs · 4 launches · 2 invocations · bwd:dconv x2, conv x2");

  results::LineResult a;
  a.gpuNs = 1'920'000;
  a.ops = 1;
  a.atomic = true;
  a.atomicReason = attribution::AtomicReason::Library;
  a.kernels = {kernel("adam", 1'000'000, 1, attribution::Pass::Optimizer), kernel("k1", 500'000, 1),
               kernel("k2", 300'000, 1), kernel("k3", 120'000, 1)};
  CHECK(cli::lineAnnotation(results::describeLine(a, {}), 2) ==
        "1.92 ms · 1 launch · ATOMIC (library) · optimizer · adam, k1, +2 more");
}
