// Drill command construction (exact), the ncu <-> profile join, the roofline SVG.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/ncu/drill.h"
#include "core/ncu/nsys_join.h"
#include "core/ncu/report.h"
#include "core/ncu/roofline_svg.h"
#include "core/runner/command.h"
#include "core/runner/process.h"
#include "tests/support/test_support.h"

using namespace kl::ncu;
using kl::test::dataPath;

TEST_CASE("drill: the exact ncu command for a kl: push/pop range") {
  DrillRequest r;
  r.entry = "python train.py --steps 3";
  r.range = "kl:model.py:10-20:forward";
  CHECK(nvtxIncludeExpression(r.range, "") == "kl:model.py:10-20:forward/");
  CHECK(nvtxIncludeExpression("kl:src/a@b.py:1-2", "kernlens") == "kernlens@kl:src\\/a\\@b.py:1-2/");
  CHECK(drillProfileCommand(r) ==
        "ncu --nvtx --nvtx-include kl:model.py:10-20:forward/ --kernel-id :::1 "
        "--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis "
        "--section Occupancy --section LaunchStats --section SpeedOfLight_RooflineChart "
        "--force-overwrite -o .kernlens/ncu/drill python train.py --steps 3");
  CHECK(drillExportCommand(r) == "ncu --import .kernlens/ncu/drill.ncu-rep --csv --page details --print-units base");
  r.useLaunchCount = true;
  r.launchCount = 5;
  r.range = "kl:my model.py:3-4";
  auto args = drillProfileArgs(r);
  REQUIRE(args.size() > 6);
  CHECK(args[3] == "kl:my model.py:3-4/");
  CHECK(args[4] == "-c");
  CHECK(args[5] == "5");
  CHECK(drillProfileCommand(r).find("'kl:my model.py:3-4/'") != std::string::npos);
  CHECK(kl::runner::shellQuote("it's") == "'it'\\''s'");
  CHECK(kl::runner::shellQuote("") == "''");
}

TEST_CASE("drill: without ncu on PATH it says so and runs nothing") {
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  DrillRequest r;
  r.entry = "true";
  r.range = "kl:x.py:1-2";
  r.ncu = "ncu-definitely-not-installed";
  kl::test::TempDir dir;
  auto res = runDrill(r, dir.path(), *cat, {});
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().message.find("not found on PATH") != std::string::npos);
  CHECK(kl::runner::findExecutable("sh"));
  CHECK_FALSE(kl::runner::findExecutable("ncu-definitely-not-installed"));
}

TEST_CASE("drill: runs a (fake) ncu and imports its CSV") {
  // A stand-in ncu script: the profile step succeeds, the export prints a real details CSV.
  kl::test::TempDir dir;
  std::string csv = dataPath("ncu/dsocr_v2/kernel_0004.details.csv").string();
  kl::test::writeFile(dir / "fake-ncu",
                      "#!/bin/sh\ncase \" $* \" in *' --import '*) cat '" + csv + "';; *) exit 0;; esac\n");
  REQUIRE(std::system(("chmod +x '" + (dir / "fake-ncu").string() + "'").c_str()) == 0);
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  DrillRequest r;
  r.entry = "true";
  r.range = "kl:x.py:1-2";
  r.ncu = (dir / "fake-ncu").string();
  auto res = runDrill(r, dir.path(), *cat, {"m", ""});
  REQUIRE_MESSAGE(res.ok(), (res.ok() ? "" : res.error().message));
  REQUIRE(res->imported.kernels.size() == 1);
  CHECK(res->imported.kernels[0].bound == Bound::Latency);
  CHECK(std::filesystem::exists(res->csvPath));
}

TEST_CASE("join ncu launches to profile kernels: name key + grid/block + launch order") {
  kl::profile::ProfileModel m;
  auto addKernel = [&](const std::string& name, int64_t start, int32_t grid, int32_t block) {
    kl::profile::KernelDetail k;
    k.demangledName = m.strings.intern(name);
    k.grid[0] = grid;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block;
    k.block[1] = k.block[2] = 1;
    m.kernels.push_back(k);
    kl::profile::GpuOp op;
    op.start = start;
    op.end = start + 10;
    op.name = k.demangledName;
    op.detail = static_cast<uint32_t>(m.kernels.size() - 1);
    m.gpuOps.push_back(op);
  };
  // nsys spelling of v2 kernel 0004 (2 x 128), launched 3 times, one launch with another shape.
  const std::string nsysName =
      "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase "
      "&)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) "
      "(instance 1)], std::array<char *, (unsigned long)2>, (int)4, TrivialOffsetCalculator<(int)1, unsigned int>, "
      "TrivialOffsetCalculator<(int)1, unsigned int>, at::native::memory::LoadWithCast<(int)1>, "
      "at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, T4, T5, T6, T7)";
  addKernel(nsysName, 100, 2, 128);
  addKernel(nsysName, 200, 64, 128);
  addKernel(nsysName, 300, 2, 128);
  addKernel("other_kernel", 400, 2, 128);
  auto rep = readNcuFile(dataPath("ncu/dsocr_v2/kernel_0004.details.csv"));
  REQUIRE(rep.ok());
  JoinResult j = joinToProfile(*rep, m);
  REQUIRE(j.matches.size() == 1);
  CHECK(j.matches[0].gpuOp == 0);
  CHECK(j.matches[0].how == "name");
  // ncu profiled with --launch-skip 1: its launch is the 2nd of that shape (op 2, skipping op 1).
  JoinResult skip = joinToProfile(*rep, m, {1});
  REQUIRE(skip.matches.size() == 1);
  CHECK(skip.matches[0].gpuOp == 2);
  JoinResult none = joinToProfile(*rep, m, {5});
  CHECK(none.matches.empty());
  CHECK(none.unmatched.size() == 1);
}

TEST_CASE("roofline SVG") {
  RooflineSvgOptions o;
  o.peakFlopsPerSec = 1e14;
  o.peakBytesPerSec = 2e12;
  std::string svg = rooflineSvg({{"gemm<a&b>", 380, 5.4e13, Bound::Memory}, {"bad", 0, 1, Bound::Compute}}, o);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") == svg.size() - 6);
  CHECK(svg.find("gemm&lt;a&amp;b&gt;") != std::string::npos);
  CHECK(svg.find("class=\"kl-roof\"") != std::string::npos);
  size_t circles = 0, p = 0;
  while ((p = svg.find("<circle", p)) != std::string::npos) ++circles, ++p;
  CHECK(circles == 1);  // the zero-intensity point is skipped
  std::string empty = rooflineSvg({}, {});
  CHECK(empty.find("no kernel has a roofline point") != std::string::npos);
}
