// The probe's status.json as the runner reads it (docs/probe.md §1): the fields the round uses,
// the probe's fallback notes among them, and nested objects with the same key names ignored.
#include <doctest/doctest.h>

#include <fstream>

#include "core/runner/backend.h"
#include "tests/support/test_support.h"

using namespace kl::runner;

TEST_CASE("probe status: notes, unmodelled ops and the top-level fields") {
  kl::test::TempDir tmp;
  auto path = tmp / "status.json";
  {
    std::ofstream out(path);
    out << R"({"probe_version": "0.1.0", "exit_code": 1, "probe_error": null, "entry_error": "ValueError: x",
      "nvtx_provider": "torch", "outputs": ["/o.sqlite"], "children": [{"pid": 2, "notes": ["child"]}],
      "summary": {"kernels": 12, "unmodelled_ops": {"aten::foo": 3}, "notes": ["nested"]},
      "notes": ["overlay text of /w/a.py unreadable: the file ran un-overlaid", "second \"quoted\""]})";
  }
  ProbeStatus st = readProbeStatus(path);
  CHECK(st.found);
  CHECK(st.exitCode == 1);
  CHECK(st.entryError == "ValueError: x");
  CHECK(st.nvtxProvider == "torch");
  CHECK(st.kernels == 12);
  REQUIRE(st.unmodelledOps.size() == 1);
  CHECK(st.unmodelledOps[0].first == "aten::foo");
  REQUIRE(st.notes.size() == 2);
  CHECK(st.notes[0] == "overlay text of /w/a.py unreadable: the file ran un-overlaid");
  CHECK(st.notes[1] == "second \"quoted\"");
}

TEST_CASE("probe status: no notes key, or an empty list") {
  kl::test::TempDir tmp;
  auto path = tmp / "status.json";
  {
    std::ofstream out(path);
    out << R"({"exit_code": 0, "notes": [], "summary": {"kernels": 0}})";
  }
  ProbeStatus st = readProbeStatus(path);
  CHECK(st.found);
  CHECK(st.exitCode == 0);
  CHECK(st.notes.empty());
}
