// CSV records, numbers and units, and the importer on every layout of the real data.
#include <doctest/doctest.h>

#include <string>

#include "core/ncu/csv.h"
#include "core/ncu/report.h"
#include "core/ncu/units.h"
#include "tests/support/test_support.h"

using namespace kl::ncu;
using kl::test::dataPath;
using kl::test::readFile;

namespace {

size_t countLines(const std::string& text, const std::string& needle) {
  size_t n = 0, p = 0;
  while ((p = text.find(needle, p)) != std::string::npos) {
    ++n;
    p += needle.size();
  }
  return n;
}

NcuReport load(const std::string& rel) {
  auto r = readNcuFile(dataPath(rel));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return std::move(r).value();
}

}  // namespace

TEST_CASE("parseNumber handles ncu's number spellings") {
  CHECK(parseNumber("13,485") == 13485.0);
  CHECK(parseNumber("9,495.42") == doctest::Approx(9495.42));
  CHECK(parseNumber("1,275,068,416") == 1275068416.0);
  CHECK(parseNumber("3995313115.40") == doctest::Approx(3995313115.40));
  CHECK(parseNumber("27.595.520") == 27595520.0);
  CHECK(parseNumber("1.234,5") == doctest::Approx(1234.5));
  CHECK(parseNumber("-2.5") == -2.5);
  CHECK(parseNumber("1e-05") == doctest::Approx(1e-5));
  CHECK_FALSE(parseNumber("n/a"));
  CHECK_FALSE(parseNumber(""));
  CHECK_FALSE(parseNumber("CachePreferNone"));
  CHECK(parseNumber("1,23") == doctest::Approx(1.23));  // not a thousands group: decimal comma
  CHECK_FALSE(parseNumber("1,2,3"));
}

TEST_CASE("normaliseUnit reduces auto-scaled units to base units") {
  auto f = [](const char* u) { return normaliseUnit(u); };
  CHECK(f("Mbyte").base == "byte");
  CHECK(f("Mbyte").factor == 1e6);
  CHECK(f("Kbyte").factor == 1e3);
  CHECK(f("Gbyte/s").base == "byte/s");
  CHECK(f("Gbyte/s").factor == 1e9);
  CHECK(f("Gbyte/second").factor == 1e9);
  CHECK(f("usecond").base == "ns");
  CHECK(f("usecond").factor == 1e3);
  CHECK(f("us").factor == 1e3);
  CHECK(f("msecond").factor == 1e6);
  CHECK(f("nsecond").factor == 1);
  CHECK(f("Ghz").base == "Hz");
  CHECK(f("Ghz").factor == 1e9);
  CHECK(f("cycle/second").base == "Hz");
  CHECK(f("cycle/nsecond").factor == doctest::Approx(1e9));
  CHECK(f("Kcycle").factor == 1e3);
  CHECK(f("inst/cycle").base == "inst/cycle");
  CHECK(f("byte/cycle").base == "byte/cycle");
  CHECK(f("%").base == "%");
  CHECK(f("register/thread").known);
  CHECK(f("furlong").known == false);
  CHECK(f("furlong").base == "furlong");
}

TEST_CASE("CSV records: quotes, commas inside quotes, doubled quotes, trailing comma") {
  std::string text = "\"a,b\",\"say \"\"hi\"\"\",c,\n\"multi\nline\",x\n";
  size_t pos = 0, line = 0;
  CsvRecord r = parseCsvRecord(text, pos, line);
  REQUIRE(r.fields.size() == 4);
  CHECK(r.fields[0] == "a,b");
  CHECK(r.fields[1] == "say \"hi\"");
  CHECK(r.fields[2] == "c");
  CHECK(r.fields[3] == "");
  r = parseCsvRecord(text, pos, line);
  REQUIRE(r.fields.size() == 2);
  CHECK(r.fields[0] == "multi\nline");
  CHECK(r.line == 2);
  CHECK(isToolMessageLine("==PROF== Connected to process 1"));
  CHECK(isToolMessageLine("==ERROR== Option"));
  CHECK_FALSE(isToolMessageLine("== not a message"));
}

TEST_CASE("details page (ncu 2025, RTX 5090): ragged rows, rules, separators, units") {
  const std::string rel = "ncu/dsocr_v2/kernel_0001.details.csv";
  std::string text = readFile(dataPath(rel));
  NcuReport rep = load(rel);
  CHECK(rep.format == NcuFormat::Details);
  REQUIRE(rep.launches.size() == 1);
  const NcuLaunch& l = rep.launches[0];
  // Rows in the file (minus the header) = metrics + rules; rule rows name a rule in column 16.
  size_t rows = countLines(text, "\n") - 1;
  size_t ruleRows = countLines(text, "\"SOLBottleneck\"") + countLines(text, "\"SOLFPRoofline\"") +
                    countLines(text, "\"IssueSlotUtilization\"") + countLines(text, "\"TheoreticalOccupancy\"") +
                    countLines(text, "\"AchievedOccupancy\"");
  CHECK(l.rules.size() == ruleRows);
  CHECK(l.metrics.size() + l.rules.size() == rows);
  CHECK(l.id == 0);
  CHECK(l.processId == 1740670);
  CHECK(l.cc == "12.0");
  REQUIRE(l.grid);
  CHECK(*l.grid == Dim3{224, 1, 1});
  CHECK(*l.block == Dim3{32, 4, 1});
  CHECK(l.kernelName.rfind("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16", 0) == 0);
  // "Elapsed Cycles","cycle","13,485"
  const Metric* cyc = l.find("Elapsed Cycles");
  REQUIRE(cyc);
  CHECK(cyc->value == 13485.0);
  CHECK(cyc->text == "13,485");
  // "dram__bytes_read.sum","Mbyte","2.33" -> bytes
  const Metric* rd = l.find("dram__bytes_read.sum");
  REQUIRE(rd);
  CHECK(*rd->value == doctest::Approx(2.33e6));
  CHECK(rd->unit == "byte");
  CHECK(rd->rawUnit == "Mbyte");
  // "Duration","us","6.75" -> ns
  const Metric* dur = l.find("Duration", "GPU Speed Of Light");
  REQUIRE(dur);
  CHECK(*dur->value == doctest::Approx(6750));
  CHECK(dur->unit == "ns");
  CHECK(*l.find("SM Frequency")->value == doctest::Approx(1.99e9));
  CHECK(*l.find("Memory Throughput", "Memory Workload")->value == doctest::Approx(345.14e9));
  // n/a stays missing, text kept.
  const Metric* na = l.find("flop_count_sp.sum");
  REQUIRE(na);
  CHECK_FALSE(na->value);
  CHECK(na->text == "n/a");
  // Rule row.
  CHECK(l.rules[0].name == "SOLBottleneck");
  CHECK(l.rules[0].section == "SpeedOfLight");
  CHECK(l.rules[0].description.find("0.7 full waves") != std::string::npos);
}

TEST_CASE("roofline-chart section: 21 columns with Body Item Label") {
  NcuReport rep = load("ncu/dsocr_v2/kernel_0001.section_SpeedOfLight_RooflineChart.csv");
  REQUIRE(rep.launches.size() == 1);
  const NcuLaunch& l = rep.launches[0];
  bool found = false;
  for (const Metric& m : l.metrics)
    if (m.name == "Theoretical Predicated-On FFMA Operations") {
      found = true;
      CHECK(m.bodyLabel == "Single Precision Roofline");
      CHECK(*m.value == 43520.0);
    }
  CHECK(found);
  CHECK(l.rules.size() == 1);
  CHECK(l.rules[0].name == "SOLFPRoofline");
}

TEST_CASE("legacy layout (2020, V100): Kernel Time, stdout and ==PROF== before the header") {
  NcuReport rep = load("ncu/xplacer/nsight_gaussian_matrix3.log");
  CHECK(rep.format == NcuFormat::LegacyDetails);
  REQUIRE(rep.launches.size() == 1);
  const NcuLaunch& l = rep.launches[0];
  CHECK(l.kernelName == "Fan2(float*,float*,float*,int,int,int)");
  CHECK(l.kernelTime == "2020-May-29 12:21:10");
  CHECK(*l.grid == Dim3{1, 1, 1});
  CHECK(*l.block == Dim3{16, 1, 1});
  CHECK(*l.find("Duration")->value == 3520.0);
  CHECK(*l.find("SM Frequency")->value == doctest::Approx(915530303.03));
  CHECK(l.find("SM Frequency")->unit == "Hz");
  CHECK(rep.diagnostics.size() == 2);  // ==PROF== Connected / Disconnected
  CHECK(rep.diagnostics[0].rfind("==PROF== Connected", 0) == 0);

  NcuReport bfs = load("ncu/xplacer/nsight_bfs_graph4096.log");
  std::string text = readFile(dataPath("ncu/xplacer/nsight_bfs_graph4096.log"));
  // Distinct IDs in the file = launches; count the "Duration" rows, one per launch.
  CHECK(bfs.launches.size() == countLines(text, "\"Duration\""));
  CHECK(bfs.launches.size() == 13);
}

TEST_CASE("only ==ERROR== lines: a one-line error quoting ncu") {
  auto r = readNcuFile(dataPath("ncu/negative/raw.csv"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("ncu reported an error") != std::string::npos);
  CHECK(r.error().message.find("==ERROR== Option '--section .*SpeedOfLight.*' did not match any section.") !=
        std::string::npos);
  CHECK(r.error().message.find('\n') == std::string::npos);
}

TEST_CASE("bad input gives a clear error, never a crash") {
  CHECK_FALSE(parseNcuCsv("", "e.csv").ok());
  CHECK_FALSE(parseNcuCsv("hello\nworld\n", "e.csv").ok());
  CHECK_FALSE(parseNcuCsv("\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Value\"\n", "h.csv").ok());
  CHECK(parseNcuCsv("\"unterminated", "u.csv").error().message.find("u.csv") == 0);
  CHECK_FALSE(readNcuFile(dataPath("ncu/does-not-exist.csv")).ok());
}

TEST_CASE("nsys cuda_gpu_kern_sum CSV") {
  NcuReport rep = load("ncu/nsys/all-stage.summary_cuda_gpu_kern_sum.csv");
  CHECK(rep.format == NcuFormat::NsysKernSum);
  std::string text = readFile(dataPath("ncu/nsys/all-stage.summary_cuda_gpu_kern_sum.csv"));
  CHECK(rep.launches.size() == countLines(text, "\n") - 1);  // 113 kernels
  CHECK(rep.launches.size() == 113);
  // 24.9,1231822285,329035,3743.7,3712.0,2079,5856,416.2,"std::enable_if<...(int)7...>(T13)"
  const NcuLaunch& first = rep.launches[0];
  CHECK(first.invocations == 329035);
  CHECK(*first.find("Duration")->value == doctest::Approx(3743.7));
  CHECK(*first.find("Duration")->minimum == 2079);
  CHECK(*first.find("Total Time")->value == 1231822285.0);
  CHECK(first.kernelName.find("(int)7") != std::string::npos);
}

TEST_CASE("raw page (synthetic): names row, units row, one row per launch") {
  NcuReport rep = load("ncu/synthetic/raw_page.csv");
  CHECK(rep.format == NcuFormat::Raw);
  REQUIRE(rep.launches.size() == 3);
  const NcuLaunch& l = rep.launches[0];
  CHECK(l.kernelName == "triton_poi_fused_add_mul_0");
  CHECK(*l.find("dram__bytes.sum")->value == doctest::Approx(8.39e6));
  CHECK(*l.find("gpu__time_duration.sum")->value == doctest::Approx(5120));
  CHECK(*l.find("dram__cycles_elapsed.avg.per_second")->value == doctest::Approx(2.6e9));
  CHECK(*l.find("sm__cycles_elapsed.avg.per_second")->value == doctest::Approx(1.755e9));
  CHECK(*l.find("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")->value == 2097152.0);
  const Metric* s = l.find("launch__func_cache_config");
  REQUIRE(s);
  CHECK_FALSE(s->value);
  CHECK(s->text == "CachePreferNone");
  CHECK(rep.launches[2].block == Dim3{640, 1, 1});
  CHECK_FALSE(rep.launches[2].find("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")->value);
  CHECK(rep.diagnostics.size() == 3);
}

TEST_CASE("--print-summary per-kernel (synthetic): invocations and min/max/average") {
  NcuReport rep = load("ncu/synthetic/summary_per_kernel.csv");
  CHECK(rep.format == NcuFormat::Summary);
  REQUIRE(rep.launches.size() == 2);
  CHECK(rep.launches[0].invocations == 12);
  const Metric* d = rep.launches[0].find("Duration");
  CHECK(*d->value == doctest::Approx(5020));
  CHECK(*d->minimum == doctest::Approx(4900));
  CHECK(*d->maximum == doctest::Approx(5300));
  CHECK(*rep.launches[0].find("Elapsed Cycles")->value == 9495);
  CHECK(rep.launches[1].invocations == 3);
  CHECK(*rep.launches[1].find("Duration")->value == doctest::Approx(1.2e6));
}
