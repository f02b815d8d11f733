#include "cli/ncu_output.h"

#include <cstdio>

#include "cli/profile_common.h"

namespace kl::cli {
namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string fmt(const std::optional<double>& v, const char* f = "%.1f") {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, f, *v);
  return b;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

std::filesystem::path catalogPath(const Args& args) {
  if (auto db = args.get("--db")) return *db;
  std::filesystem::path root = args.getOr("--root", ".");
  if (!std::filesystem::is_directory(root)) throw InputError("--root " + root.string() + ": not a directory");
  return ncu::defaultCatalogPath(root);
}

nlohmann::json kernelJson(const ncu::KernelRow& k) {
  return {{"name", k.name},
          {"base_name", k.baseName},
          {"family", k.family},
          {"bound", std::string(ncu::boundName(k.bound))},
          {"sm_pct", opt(k.smPct)},
          {"mem_pct", opt(k.memPct)},
          {"launches", k.launches},
          {"profiled_launches", k.profiled},
          {"models", k.models},
          {"runs", k.runs},
          {"total_time_ns", opt(k.totalNs)},
          {"mean_duration_ns", opt(k.meanNs)},
          {"limiter", std::string(ncu::memoryLevelName(k.limiter))},
          {"detail", k.detail},
          {"roofline",
           {{"intensity_flop_per_byte", opt(k.intensity)},
            {"flops_per_s", opt(k.flopsPerSec)},
            {"dram_bytes_per_s", opt(k.bytesPerSec)},
            {"peak_flops_per_s", opt(k.peakFlopsPerSec)},
            {"peak_dram_bytes_per_s", opt(k.peakBytesPerSec)},
            {"missing", k.rooflineMissing}}}};
}

void printKernelTable(std::ostream& out, const std::vector<ncu::KernelRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& k : rows)
    cells.push_back({std::string(ncu::boundName(k.bound)), fmt(k.smPct), fmt(k.memPct), std::to_string(k.launches),
                     std::to_string(k.models.size()), k.family, k.baseName});
  printTable(out, {"bound", "SM%", "Mem%", "launches", "models", "family", "kernel"}, cells,
             {false, true, true, true, true, false, false}, 70);
}

void printKernelCsv(std::ostream& out, const std::vector<ncu::KernelRow>& rows) {
  out << "name,base_name,family,bound,sm_pct,mem_pct,launches,profiled_launches,models,total_time_ns,"
         "intensity_flop_per_byte\n";
  for (const auto& k : rows)
    out << csvField(k.name) << ',' << csvField(k.baseName) << ',' << csvField(k.family) << ','
        << ncu::boundName(k.bound) << ',' << (k.smPct ? fmt(k.smPct, "%.2f") : "") << ','
        << (k.memPct ? fmt(k.memPct, "%.2f") : "") << ',' << k.launches << ',' << k.profiled << ','
        << csvField(joined(k.models, ";")) << ',' << (k.totalNs ? fmt(k.totalNs, "%.0f") : "") << ','
        << (k.intensity ? fmt(k.intensity, "%.6g") : "") << '\n';
}

}  // namespace kl::cli
