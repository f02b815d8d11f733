// `kernlens mcp`: a Model Context Protocol server on stdio (newline-delimited JSON-RPC), for
// coding agents. A front end over the same core as the CLI and the language server:
//  - the JSON-RPC machinery is the language server's (lsp::Server in its Mcp dialect: dispatch,
//    exactly one reply, cancellation, the background pool);
//  - every tool's answer is the `--format json` document of a CLI command, produced by that
//    command (profile: the same flags → ProfileRequest translation and planner::runProfile; the
//    line tools: `kernlens map`; the analyses: their commands), so CLI and MCP share one versioned
//    schema ("schema": "kernlens/<name>@N", core/support/json_schema.h);
//  - the workspace root is fixed at start (--root, default the current directory); a path
//    argument that resolves outside it is refused (core/support/safe_file.h).
// Arguments are validated against each tool's inputSchema (lsp/protocol/json_schema.h): a bad one
// is a JSON-RPC InvalidParams error naming the field; a run or a profile that fails is a tool
// result with isError and the one-line reason. See docs/agents.md.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "cli/focus_spec.h"
#include "cli/profile_args.h"
#include "cli/stdio_server.h"
#include "core/planner/report.h"
#include "core/store/store.h"
#include "core/support/json_schema.h"
#include "core/support/safe_file.h"
#include "lsp/protocol/json_schema.h"
#include "lsp/server/server.h"

namespace kl::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A tool argument that is wrong in a way its schema cannot say (a path outside the workspace, a
/// malformed FILE::QUALNAME): InvalidParams naming the field.
struct ArgumentError : std::runtime_error {
  ArgumentError(const std::string& field, const std::string& message)
      : std::runtime_error("params.arguments." + field + ": " + message) {}
};

struct ToolCall {
  json args;
  fs::path root;
  CancellationToken token;
  /// A progress notification for the call (nothing when the client sent no progressToken).
  std::function<void(const std::string& message)> progress;
};

struct Tool {
  std::string name, title, description;
  json input, output;
  /// The structured answer; throws ArgumentError / UsageError (bad arguments) or InputError (the
  /// run or the profile failed).
  std::function<json(const ToolCall&)> run;
};

// ---- Arguments ------------------------------------------------------------------------------

std::string str(const ToolCall& c, const char* key) { return c.args.value(key, std::string()); }

/// A path argument made absolute inside the workspace (symlinks resolved); ArgumentError when it
/// leaves the workspace or does not exist.
std::string insideRoot(const ToolCall& c, const std::string& field, const std::string& path) {
  auto p = resolveInsideRoot(c.root, path);
  if (!p) throw ArgumentError(field, p.error().message);
  return p->string();
}

/// Runs CLI command `name` with `argv` and returns its JSON document. A UsageError names the
/// flag at fault: it is reworded onto the argument (`--top` → params.arguments.top). A non-zero
/// exit status not in `ok` is an InputError with the command's last line on stderr.
json runCommand(const std::string& name, const std::vector<std::string>& argv, std::vector<int> ok = {0}) {
  const Command& cmd = commands().at(name);
  std::ostringstream out, err;
  Context ctx{out, err};
  int rc = 0;
  try {
    rc = cmd.run(Args(argv, cmd.options), ctx);
  } catch (const UsageError& e) {
    std::string m = e.what();
    if (m.rfind("--", 0) == 0) {
      size_t end = m.find_first_of(": ");
      std::string flag = m.substr(2, end == std::string::npos ? std::string::npos : end - 2);
      std::replace(flag.begin(), flag.end(), '-', '_');
      throw ArgumentError(flag, end == std::string::npos ? m : m.substr(m.find_first_not_of(": ", end)));
    }
    throw std::runtime_error("params.arguments: " + m);
  }
  if (std::find(ok.begin(), ok.end(), rc) == ok.end()) {
    std::string e = err.str();
    while (!e.empty() && e.back() == '\n') e.pop_back();
    if (auto nl = e.rfind('\n'); nl != std::string::npos) e = e.substr(nl + 1);
    throw InputError(e.empty() ? "kernlens " + name + " failed (exit status " + std::to_string(rc) + ")" : e);
  }
  json j = json::parse(out.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError("kernlens " + name + " did not write a JSON document");
  return j;
}

// ---- Schemas --------------------------------------------------------------------------------

json stringArg(const std::string& description) {
  return {{"type", "string"}, {"minLength", 1}, {"description", description}};
}
json intArg(const std::string& description, int minimum) {
  return {{"type", "integer"}, {"minimum", minimum}, {"description", description}};
}
json object(json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", required},
          {"additionalProperties", false}};
}
/// An output schema: the document's tag and the fields every answer has.
json document(const char* tag, json properties) {
  properties["schema"] = {{"type", "string"}, {"const", tag}};
  std::vector<std::string> required;
  for (const auto& [k, v] : properties.items()) required.push_back(k);
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}
const json kArray = {{"type", "array"}};
const json kObject = {{"type", "object"}};
const json kInt = {{"type", "integer"}};
const json kNumber = {{"type", "number"}};
const json kBool = {{"type", "boolean"}};
const json kString = {{"type", "string"}};

const char* kProfileArgHelp =
    "an nsys SQLite export (.sqlite, .sqlite.gz), a .nsys-rep, a PyTorch/Kineto trace (.json, .json.gz), or a "
    "directory of per-rank files; relative to the workspace root";

json linesOutput() {
  return document(json_schema::kLines, {{"source", kString},
                                        {"run", kObject},
                                        {"emulated", kBool},
                                        {"total_gpu_ns", kInt},
                                        {"lines", kArray},
                                        {"kernels_shown", kObject},
                                        {"unmapped", kObject}});
}

// ---- Tools ----------------------------------------------------------------------------------

/// `map` over the latest stored run or a profile, with a filter: where_from, line_costs, explain_line.
json mapLines(const ToolCall& c, std::vector<std::string> filter) {
  std::vector<std::string> argv = {"--root", c.root.string(), "--format", "json"};
  if (c.args.contains("profile"))
    argv.push_back(insideRoot(c, "profile", str(c, "profile")));
  else
    argv.push_back("--store");
  argv.insert(argv.end(), filter.begin(), filter.end());
  return runCommand("map", argv);
}

/// A workspace file argument as the workspace-relative path results use.
std::string relativeFile(const ToolCall& c, const std::string& field) {
  std::string abs = insideRoot(c, field, str(c, field.c_str()));
  auto rootReal = resolveInsideRoot(c.root, ".");
  return fs::path(abs).lexically_relative(rootReal ? *rootReal : c.root).generic_string();
}

json profileTool(const ToolCall& c) {
  std::vector<std::string> argv = {"--root", c.root.string(), "--entry", str(c, "entry")};
  if (c.args.contains("focus")) {
    auto f = parseFunctionSpec(str(c, "focus"));
    if (!f) throw ArgumentError("focus", f.error().message);
    argv.insert(argv.end(), {"--focus", insideRoot(c, "focus", f->file) + "::" + f->qualName});
  }
  if (c.args.contains("lines")) {
    auto l = parseLinesSpec(str(c, "lines"));
    if (!l) throw ArgumentError("lines", l.error().message);
    argv.insert(argv.end(), {"--lines", insideRoot(c, "lines", l->file) + ":" + std::to_string(l->first) + "-" +
                                            std::to_string(l->last)});
  }
  if (c.args.contains("focus") && c.args.contains("lines"))
    throw ArgumentError("lines", "give one of focus and lines (kernel may be combined with focus)");
  if (!c.args.contains("focus") && !c.args.contains("lines") && !c.args.contains("kernel"))
    throw ArgumentError("focus", "one of focus (FILE::QUALNAME), lines (FILE:A-B) or kernel (a regex) is required");
  if (c.args.contains("cwd")) argv.insert(argv.end(), {"--cwd", insideRoot(c, "cwd", str(c, "cwd"))});
  for (const char* key : {"kernel", "backend", "strategy", "gpu"})
    if (c.args.contains(key)) argv.insert(argv.end(), {std::string("--") + key, str(c, key)});
  if (c.args.contains("rounds")) argv.insert(argv.end(), {"--rounds", std::to_string(c.args["rounds"].get<int>())});
  if (c.args.contains("timeout_s"))
    argv.insert(argv.end(), {"--timeout", std::to_string(c.args["timeout_s"].get<double>())});
  if (!c.args.value("baseline", true)) argv.push_back("--no-baseline");
  if (!c.args.value("discovery", true)) argv.push_back("--no-discovery");

  planner::ProfileRequest req;
  try {
    req = profileRequestFromArgs(Args(argv, profileCommandOptions()));
  } catch (const UsageError& e) {  // "--focus: ..." → the argument
    std::string m = e.what();
    size_t end = m.find(": ");
    if (m.rfind("--", 0) != 0 || end == std::string::npos) throw std::runtime_error("params.arguments: " + m);
    std::string flag = m.substr(2, end - 2);
    std::replace(flag.begin(), flag.end(), '-', '_');
    throw ArgumentError(flag == "timeout" ? "timeout_s" : flag, m.substr(end + 2));
  }
  planner::ProfileHooks hooks;
  hooks.loop.onRound = [&c](const planner::LoopProgress& p) { c.progress(p.message); };
  auto res = planner::runProfile(req, hooks, c.token);
  if (c.token.isCancelled()) throw InputError("profile cancelled");
  if (!res) throw InputError(res.error().message);
  return json::parse(planner::renderJson(*res));
}

std::vector<std::string> topArg(const ToolCall& c) {
  if (!c.args.contains("top")) return {};
  return {"--top", std::to_string(c.args["top"].get<int>())};
}

std::vector<Tool> makeTools() {
  std::vector<Tool> t;
  const json profileArg = stringArg(kProfileArgHelp);
  t.push_back(Tool{
      "profile", "Profile: map every GPU kernel to the line that launched it",
      "Runs kernlens's convergence loop (kernlens profile): the entry command runs under a profiler with NVTX "
      "ranges placed around the focus (in an overlay; no workspace file is written), kernels are attributed to the "
      "innermost range, and ranges holding several kernels are refined round after round until each kernel maps to "
      "one line. Answers the line map (GPU time, launches, kernels per line). Sends a progress notification per round "
      "when the call carries a progressToken; a cancelled call stops the program and every process it started. The "
      "run is stored in .kernlens/kernlens.db (where_from, line_costs and explain_line read it).",
      object(
          {{"entry", stringArg("the command to run, e.g. \"python train.py --steps 2\"")},
           {"focus", stringArg("FILE::QUALNAME: the function to profile (file relative to the workspace root)")},
           {"lines", stringArg("FILE:A-B: a region to profile instead of a function (1-based lines)")},
           {"kernel", stringArg("only refine ranges launching a kernel matching this regex")},
           {"backend",
            {{"type", "string"},
             {"enum", {"nsys", "torch", "emulate"}},
             {"description",
              "the profiler (default nsys when installed); emulate models the GPU kernels on CPU "
              "PyTorch and says so (emulated: true)"}}},
           {"strategy", {{"type", "string"}, {"enum", {"edits", "lines"}}}},
           {"rounds", {{"type", "integer"}, {"minimum", 1}, {"maximum", 64}, {"description", "at most (default 8)"}}},
           {"timeout_s", {{"type", "number"}, {"minimum", 1}, {"description", "per-round limit (default 900)"}}},
           {"cwd", stringArg("where the command runs (default: the workspace root)")},
           {"gpu", {{"type", "string"}, {"enum", {"h100", "h200", "a100"}}, {"description", "the emulated GPU"}}},
           {"baseline",
            {{"type", "boolean"}, {"description", "run once uninstrumented for the overhead (default true)"}}},
           {"discovery",
            {{"type", "boolean"}, {"description", "discover the workspace calls that ran (default true)"}}}},
          {"entry"}),
      document(json_schema::kProfile, {{"converged", kBool},
                                       {"stop_reason", kString},
                                       {"rounds", kInt},
                                       {"backend", kString},
                                       {"emulated", kBool},
                                       {"lines", kArray},
                                       {"unmapped", kArray}}),
      profileTool});
  t.push_back(Tool{
      "where_from", "Where from: which lines launched a kernel",
      "The lines that launched the kernels whose name matches a regex (searched in the full and the short name), "
      "with launches and GPU time per line and kernel: from the latest run stored in the workspace, or from a given "
      "profile (its kl: NVTX ranges or Python stacks). The same document as `kernlens map --kernel RE --format json`.",
      object({{"kernel", stringArg("a regex, e.g. \"nvjet_tst_128x320\" or \"gemm|nvjet\"")}, {"profile", profileArg}},
             {"kernel"}),
      linesOutput(), [](const ToolCall& c) {
        return mapLines(c, {"--kernel", str(c, "kernel")});
      }});
  t.push_back(Tool{
      "line_costs", "Line costs: GPU time per line of a file",
      "Every line of a workspace file that launched GPU work: forward and backward GPU time, inclusive time of call "
      "lines, launches and kernels; from the latest stored run or a given profile (`kernlens map --file F`).",
      object({{"file", stringArg("a workspace file, e.g. \"model.py\"")}, {"profile", profileArg}}, {"file"}),
      linesOutput(), [](const ToolCall& c) {
        return mapLines(c, {"--file", relativeFile(c, "file")});
      }});
  t.push_back(Tool{
      "explain_line", "Explain a line: its kernels, variants and verdict",
      "One line (the statement holding it): its kernels with launches and time, the kernel sets it launched per "
      "invocation (variants: dynamic dispatch), whether the loop left it atomic and why, the callee lines measured "
      "inside it; from the latest stored run or a given profile (`kernlens map --line F:N`). An empty `lines` means "
      "the line launched nothing.",
      object({{"file", stringArg("a workspace file")},
              {"line", intArg("1-based line number", 1)},
              {"profile", profileArg}},
             {"file", "line"}),
      linesOutput(), [](const ToolCall& c) {
        return mapLines(c, {"--line", relativeFile(c, "file") + ":" + std::to_string(c.args["line"].get<int>())});
      }});
  t.push_back(
      Tool{"summary", "Summary of a profile",
           "GPU time by kind, the top kernels by total time, per-stream totals (`kernlens summary`).",
           object({{"profile", profileArg}, {"top", intArg("kernel rows (default 20, 0 = all)", 0)}}, {"profile"}),
           document(json_schema::kSummary, {{"window_ns", kInt}, {"totals", kObject}}), [](const ToolCall& c) {
             std::vector<std::string> argv = {insideRoot(c, "profile", str(c, "profile")), "--format", "json"};
             for (auto& a : topArg(c)) argv.push_back(a);
             return runCommand("summary", argv);
           }});
  t.push_back(Tool{"diagnose", "Diagnose a profile",
                   "Findings (idle GPU, synchronisations, small kernels, copies...) with their facts and what to do "
                   "(`kernlens diagnose`).",
                   object({{"profile", profileArg}}, {"profile"}),
                   document(json_schema::kDiagnose, {{"emulated", kBool}, {"findings", kArray}}),
                   [](const ToolCall& c) {
                     return runCommand("diagnose", {insideRoot(c, "profile", str(c, "profile")), "--format", "json"});
                   }});
  t.push_back(Tool{
      "diff", "Diff two profiles",
      "Per-kernel GPU time of run B against run A with a verdict (regression when the metric grew by more than the "
      "threshold) (`kernlens diff A B`; the tool answers the verdict, it does not fail on a regression).",
      object({{"a", stringArg("the baseline profile")},
              {"b", stringArg("the profile compared with it")},
              {"metric", {{"type", "string"}, {"enum", {"total", "busy", "iter"}}}},
              {"threshold_pct", {{"type", "number"}, {"minimum", 0}}},
              {"top", intArg("rows per table (0 = all)", 0)}},
             {"a", "b"}),
      document(json_schema::kDiff, {{"metric", kString}, {"verdict", kString}}), [](const ToolCall& c) {
        std::vector<std::string> argv = {insideRoot(c, "a", str(c, "a")), insideRoot(c, "b", str(c, "b")), "--format",
                                         "json", "--no-fail"};
        if (c.args.contains("metric")) argv.insert(argv.end(), {"--metric", str(c, "metric")});
        if (c.args.contains("threshold_pct"))
          argv.insert(argv.end(), {"--threshold", std::to_string(c.args["threshold_pct"].get<double>())});
        for (auto& a : topArg(c)) argv.push_back(a);
        return runCommand("diff", argv);
      }});
  t.push_back(Tool{"sync", "CPU time blocked in CUDA synchronisation",
                   "Explicit and implicit synchronisations (blocking copies, .item(), cudaDeviceSynchronize) by kind, "
                   "API and source site (`kernlens sync`).",
                   object({{"profile", profileArg}, {"top", intArg("rows per table (0 = all)", 0)}}, {"profile"}),
                   document(json_schema::kSync, {{"emulated", kBool}, {"calls", kInt}, {"blocked_ns", kInt}}),
                   [](const ToolCall& c) {
                     std::vector<std::string> argv = {insideRoot(c, "profile", str(c, "profile")), "--format", "json"};
                     for (auto& a : topArg(c)) argv.push_back(a);
                     return runCommand("sync", argv);
                   }});
  t.push_back(Tool{"nccl", "NCCL collectives",
                   "Collective communication: time per collective and payload, its share of kernel time, overlap with "
                   "compute, stragglers across ranks (`kernlens nccl`).",
                   object({{"profile", profileArg}, {"top", intArg("rows per table (default 50)", 0)}}, {"profile"}),
                   document(json_schema::kNccl, {{"nccl_ns", kInt}, {"kernel_ns", kInt}, {"nccl_share", kNumber}}),
                   [](const ToolCall& c) {
                     std::vector<std::string> argv = {insideRoot(c, "profile", str(c, "profile")), "--format", "json"};
                     for (auto& a : topArg(c)) argv.push_back(a);
                     return runCommand("nccl", argv);
                   }});
  return t;
}

// ---- Resources: the runs of .kernlens/kernlens.db -------------------------------------------

constexpr const char* kRunsUri = "kernlens://runs";

json runJson(const store::RunInfo& r) {
  return {{"id", r.key},
          {"command", r.command},
          {"focus", r.focusFunction.empty() ? r.focusPath : r.focusPath + "::" + r.focusFunction},
          {"backend", r.backend},
          {"emulated", r.emulated},
          {"gpu", r.gpu},
          {"status", store::runStatusName(r.status)},
          {"error", r.error},
          {"started_at", r.startedAt},
          {"ended_at", r.endedAt},
          {"wall_ms", r.wallMs},
          {"git_commit", r.gitCommit},
          {"git_dirty", r.gitDirty},
          {"run_dir", r.runDir},
          {"log", r.logPath},
          {"uri", std::string(kRunsUri) + "/" + r.key}};
}

/// The stored runs, newest first; none when the workspace has no store.
Result<std::vector<store::RunInfo>> storedRuns(const fs::path& root) {
  std::error_code ec;
  auto db = store::Store::dbPathFor(root);
  if (!fs::exists(db, ec)) return std::vector<store::RunInfo>{};
  auto st = store::Store::openFile(db);
  if (!st) return st.error();
  return st->runs(200);
}

/// resources/read: the run list, or one run with its rounds (and, for the latest run, its lines).
Result<json> readResource(const fs::path& root, const std::string& uri) {
  auto runs = storedRuns(root);
  if (!runs) return runs.error();
  if (uri == kRunsUri) {
    json list = json::array();
    for (const auto& r : *runs) list.push_back(runJson(r));
    return json{{"runs", std::move(list)}};
  }
  std::string prefix = std::string(kRunsUri) + "/";
  for (size_t i = 0; i < runs->size(); ++i) {
    const auto& r = (*runs)[i];
    if (uri != prefix + r.key) continue;
    json doc = {{"run", runJson(r)}};
    auto st = store::Store::openFile(store::Store::dbPathFor(root));
    if (!st) return st.error();
    json rounds = json::array();
    if (auto rs = st->rounds(r.id))
      for (const auto& x : *rs)
        rounds.push_back({{"index", x.index},
                          {"status", store::runStatusName(x.status)},
                          {"error", x.error},
                          {"wall_ms", x.wallMs},
                          {"ops", x.totalOps},
                          {"mapped_ops", x.mappedOps},
                          {"gpu_ns", x.totalGpuNs},
                          {"profiles", x.profiles}});
    doc["rounds"] = std::move(rounds);
    if (i == 0 && r.status == store::RunStatus::Ok) {  // the latest run's line map (kernlens map --store)
      try {
        doc["lines"] = runCommand("map", {"--root", root.string(), "--store", "--format", "json"});
      } catch (const std::exception& e) {
        doc["lines_error"] = e.what();
      }
    }
    return doc;
  }
  return Error::notFound("resource not found: " + uri);
}

// ---- The server -----------------------------------------------------------------------------

json textResult(const std::string& text, bool isError) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", isError}};
}

void registerMcp(lsp::Server& server, const fs::path& root) {
  auto tools = std::make_shared<std::vector<Tool>>(makeTools());
  server.addCapabilities({{"tools", {{"listChanged", false}}}, {"resources", {{"listChanged", false}}}});

  server.method<json, json>("tools/list", [tools](const json&, lsp::Reply<json> reply) {
    json list = json::array();
    for (const auto& t : *tools)
      list.push_back({{"name", t.name},
                      {"title", t.title},
                      {"description", t.description},
                      {"inputSchema", t.input},
                      {"outputSchema", t.output}});
    reply(json{{"tools", std::move(list)}});
  });

  server.method<json, json>("tools/call", [&server, tools, root](const json& params, lsp::Reply<json> reply) {
    if (!params.is_object()) return reply.error(lsp::ErrorCode::InvalidParams, "params: expected an object");
    auto name = params.find("name");
    if (name == params.end() || !name->is_string())
      return reply.error(lsp::ErrorCode::InvalidParams, "params.name: expected a string");
    auto tool = std::find_if(tools->begin(), tools->end(), [&](const Tool& t) { return t.name == *name; });
    if (tool == tools->end())
      return reply.error(lsp::ErrorCode::InvalidParams, "params.name: unknown tool " + name->get<std::string>());
    json args = params.value("arguments", json::object());
    lsp::JPath::Root jroot("params");
    if (!lsp::validateJson(tool->input, args, lsp::JPath(jroot).field("arguments")))
      return reply.error(lsp::ErrorCode::InvalidParams, jroot.error);
    json token;
    if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object())
      token = meta->value("progressToken", json());
    auto progress = [&server, token, n = std::make_shared<std::atomic<int>>(0)](const std::string& message) {
      if (token.is_null()) return;
      server.notify("notifications/progress", {{"progressToken", token}, {"progress", ++*n}, {"message", message}});
    };
    Tool t = *tool;
    // background, not backgroundReply: a call cancelled by the end of input (not by the client)
    // still runs and is answered — an analysis ignores the token, a profile stops at once.
    auto work = [t, args, root, progress](const CancellationToken& cancel) -> Result<json> {
      ToolCall call{args, root, cancel, progress};
      try {
        json doc = t.run(call);
        json r = textResult(doc.dump(), false);
        r["structuredContent"] = std::move(doc);
        return r;
      } catch (const ArgumentError& e) {
        return Error::invalid(e.what());
      } catch (const InputError& e) {
        return textResult(e.what(), true);
      } catch (const std::runtime_error& e) {
        std::string m = e.what();
        if (m.rfind("params.", 0) == 0) return Error::invalid(m);
        return textResult(t.name + " failed: " + m, true);
      }
    };
    server.background<Result<json>>("tools/call " + t.name, reply.token(), work,
                                    [reply](Result<json> r) { reply(std::move(r)); });
  });

  server.method<json, json>("resources/list", [&server, root](const json&, lsp::Reply<json> reply) {
    server.background<Result<json>>(
        "resources/list", reply.token(),
        [root](const CancellationToken&) -> Result<json> {
          auto runs = storedRuns(root);
          if (!runs) return runs.error();
          json list = json::array({{{"uri", kRunsUri},
                                    {"name", "runs"},
                                    {"description", "the profiling runs stored in .kernlens/kernlens.db, newest first"},
                                    {"mimeType", "application/json"}}});
          for (const auto& r : *runs)
            list.push_back(
                {{"uri", std::string(kRunsUri) + "/" + r.key},
                 {"name", "run " + r.key},
                 {"description", std::string(store::runStatusName(r.status)) + " " + r.backend + ": " + r.command},
                 {"mimeType", "application/json"}});
          return json{{"resources", std::move(list)}};
        },
        [reply](Result<json> r) { reply(std::move(r)); });
  });

  server.method<json, json>("resources/read", [&server, root](const json& params, lsp::Reply<json> reply) {
    if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string())
      return reply.error(lsp::ErrorCode::InvalidParams, "params.uri: expected a string");
    std::string uri = params["uri"];
    server.background<Result<json>>(
        "resources/read", reply.token(),
        [root, uri](const CancellationToken&) -> Result<json> {
          auto doc = readResource(root, uri);
          if (!doc) {
            if (doc.error().code == Error::Code::NotFound) return Error::invalid("params.uri: " + doc.error().message);
            return doc.error();
          }
          return json{
              {"contents", json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", doc->dump(1)}}})}};
        },
        [reply](Result<json> r) { reply(std::move(r)); });
  });
}

constexpr const char* kUsage =
    "usage: kernlens mcp [--root DIR] [--log-file PATH] [--log-level debug|info|warn|error] [--threads N]\n"
    "\n"
    "Runs kernlens as a Model Context Protocol server on stdin/stdout (newline-delimited JSON-RPC),\n"
    "for coding agents: tools profile, where_from, line_costs, explain_line, summary, diagnose, diff,\n"
    "sync, nccl; resources: the runs stored in DIR/.kernlens/kernlens.db. DIR (default .) is the\n"
    "workspace, fixed at start: no path outside it is read. Client set-up and every tool: docs/agents.md.\n"
    "\n"
    "  --root DIR         the workspace root (default: the current directory)\n"
    "  --log-file PATH    append the server log to PATH instead of stderr\n"
    "  --log-level LEVEL  minimum level logged (default: info)\n"
    "  --threads N        background threads (default: cores - 1, at least 1)\n"
    "\n"
    "exit status: 0 at end of input, 1 bad input (--root not a directory), 2 bad usage.\n";

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  fs::path root = args.getOr("--root", ".");
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw InputError("--root " + root.string() + ": not a directory");
  root = fs::canonical(root, ec);
  if (ec) throw InputError("--root: " + ec.message());
  (void)ctx;  // stdout belongs to the protocol from here on
  lsp::ServerOptions options;
  options.dialect = lsp::Dialect::Mcp;
  options.root = root;
  return serveStdio(args, options, lsp::Framing::Lines, [&root](lsp::Server& server) { registerMcp(server, root); });
}

Registrar reg{Command{"mcp", "run the MCP server for coding agents (Model Context Protocol over stdio)", kUsage,
                      serveOptions({{"--root"}}), run, /*rawOutput=*/true}};

}  // namespace
}  // namespace kl::cli
