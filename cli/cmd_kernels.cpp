// `kernlens kernels`: the kernel catalogue across runs and models, most popular first.
#include "cli/cli.h"
#include "cli/ncu_output.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  Format format = args.format({Format::Text, Format::Json, Format::Csv});
  std::optional<long long> top = args.getInt("--top");
  if (top && *top < 1) throw UsageError("--top must be at least 1");
  std::filesystem::path db = catalogPath(args);
  if (!args.has("--db") && !std::filesystem::exists(db))
    throw InputError(db.string() + ": no kernel catalogue yet (run `kernlens ncu import FILE...`)");
  auto cat = orFail(ncu::Catalog::open(db));
  if (auto by = args.get("--by")) {
    std::string b = args.choice("--by", {"family", "model", "bound"});
    auto groups = orFail(cat.groups(b == "family"  ? ncu::GroupBy::Family
                                    : b == "model" ? ncu::GroupBy::Model
                                                   : ncu::GroupBy::Bound));
    if (top && static_cast<size_t>(*top) < groups.size()) groups.resize(static_cast<size_t>(*top));
    if (format == Format::Json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& g : groups) {
        nlohmann::json bounds;
        for (int i = 0; i < 5; ++i) bounds[std::string(ncu::boundName(static_cast<ncu::Bound>(i)))] = g.byBound[i];
        arr.push_back({{b, g.key},
                       {"kernels", g.kernels},
                       {"launches", g.launches},
                       {"total_time_ns", g.totalNs ? nlohmann::json(*g.totalNs) : nlohmann::json(nullptr)},
                       {"bounds", bounds},
                       {"top", g.top}});
      }
      ctx.out << arr.dump(2) << "\n";
    } else if (format == Format::Csv) {
      ctx.out << b << ",kernels,launches,total_time_ns,compute,memory,latency,balanced,unknown\n";
      for (const auto& g : groups) {
        ctx.out << '"' << g.key << "\"," << g.kernels << ',' << g.launches << ','
                << (g.totalNs ? std::to_string(static_cast<long long>(*g.totalNs)) : "");
        for (int i = 0; i < 5; ++i) ctx.out << ',' << g.byBound[i];
        ctx.out << '\n';
      }
    } else {
      for (const auto& g : groups) {
        ctx.out << g.key << ": " << g.kernels << " kernel(s), " << g.launches << " launch(es); ";
        for (int i = 0; i < 5; ++i)
          if (g.byBound[i]) ctx.out << ncu::boundName(static_cast<ncu::Bound>(i)) << " " << g.byBound[i] << " ";
        ctx.out << "; top:";
        for (const auto& t : g.top) ctx.out << " " << t;
        ctx.out << "\n";
      }
    }
    return 0;
  }
  auto rows = orFail(cat.kernels());
  if (top && static_cast<size_t>(*top) < rows.size()) rows.resize(static_cast<size_t>(*top));
  if (format == Format::Json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& k : rows) arr.push_back(kernelJson(k));
    ctx.out << arr.dump(2) << "\n";
  } else if (format == Format::Csv) {
    printKernelCsv(ctx.out, rows);
  } else {
    printKernelTable(ctx.out, rows);
  }
  return 0;
}

Registrar reg{Command{"kernels",
                      "the kernel catalogue: most popular kernels across runs and models, and their bound",
                      "usage: kernlens kernels [--top N] [--by family|model|bound] [--format text|json|csv]\n"
                      "                        [--db PATH] [--root DIR]\n"
                      "\n"
                      "Lists the kernels imported with `kernlens ncu import`, most popular first (number of models,\n"
                      "then launches, then total time): name, base name, library family, bound class\n"
                      "(compute|memory|latency|balanced|unknown), mean SM% and memory%, launches, models.\n"
                      "--by groups them (kernels, launches, kernels per bound class, top 3 kernels per group).\n",
                      {{"--top"}, {"--by"}, {"--format"}, {"--db"}, {"--root"}},
                      run}};

}  // namespace
}  // namespace kl::cli
