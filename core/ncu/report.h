// An imported Nsight Compute (or nsys kernel-summary) CSV: one NcuLaunch per profiled launch (or
// per aggregated kernel row), with every metric normalised to base units.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::ncu {

/// The CSV layouts we read. Detected from the content, never from the file name.
enum class NcuFormat {
  Details,        // `--page details --csv`: long, one row per (launch, section, metric) + rule rows
  Raw,            // `--page raw --csv`: wide, row 0 metric names, row 1 units, one row per launch
  Summary,        // `--print-summary per-kernel --csv`: Invocations + Minimum/Maximum/Average
  LegacyDetails,  // 2019-2022 details layout with a "Kernel Time" column and old section names
  NsysKernSum,    // `nsys stats -r cuda_gpu_kern_sum --format csv`: time per kernel, no counters
};
std::string_view formatName(NcuFormat f);

using Dim3 = std::array<int64_t, 3>;

/// One metric value. `value` is in base units (`unit`); `text` is the field as printed.
struct Metric {
  std::string section;          // display name ("GPU Speed Of Light Throughput") or "" (raw page)
  std::string bodyLabel;        // roofline-chart body item ("Single Precision Roofline"), often ""
  std::string name;             // label ("Duration") or metric name ("gpu__time_duration.sum")
  std::string unit;             // base unit after normalisation ("ns", "byte", "Hz", "%", ...)
  std::string rawUnit;          // the unit as printed ("usecond", "Mbyte", ...)
  std::optional<double> value;  // nullopt for n/a and string-valued metrics
  std::string text;
  // Summary format only: minimum and maximum over invocations (base units).
  std::optional<double> minimum, maximum;
};

/// An ncu rule result row (SOLBottleneck, ...).
struct RuleResult {
  std::string section;  // section identifier ("SpeedOfLight")
  std::string name;     // "SOLBottleneck"
  std::string type;     // "OPT", "INF", ...
  std::string description;
  std::string speedupType;
  std::optional<double> speedup;
};

struct NcuLaunch {
  int64_t id = -1;         // ncu "ID" (launch index in the report); -1 when the format has none
  std::string kernelName;  // as printed (demangled by default, mangled with --print-kernel-base)
  int64_t processId = 0;
  std::string processName;
  std::string device;
  std::string cc;  // compute capability "12.0"
  std::string context, stream;
  std::optional<Dim3> grid, block;
  std::string kernelTime;   // legacy layout: wall-clock date of the launch
  int64_t invocations = 1;  // >1 for summary rows (ncu Invocations / nsys Instances)
  std::vector<Metric> metrics;
  std::vector<RuleResult> rules;

  /// The first metric called `name` (label or metric name), optionally within a section whose
  /// display name starts with `sectionPrefix`.
  const Metric* find(std::string_view name, std::string_view sectionPrefix = {}) const;
};

struct NcuReport {
  NcuFormat format = NcuFormat::Details;
  std::vector<NcuLaunch> launches;
  /// `==PROF==` / `==WARNING==` lines and notes about skipped rows.
  std::vector<std::string> diagnostics;
};

/// Parses any supported CSV layout. Errors (one line): no table at all; output holding only
/// `==ERROR==` lines (their first line is quoted); a header we do not recognise.
/// `sourceName` prefixes messages ("run.csv: ...").
Result<NcuReport> parseNcuCsv(std::string_view text, std::string_view sourceName);
Result<NcuReport> readNcuFile(const std::filesystem::path& path);

/// "(32, 4, 1)" -> {32,4,1}; a plain "224" -> {224,1,1}.
std::optional<Dim3> parseDim3(std::string_view text);
std::string formatDim3(const Dim3& d);

}  // namespace kl::ncu
