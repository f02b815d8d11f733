// Command-line splitting, shell quoting and launch-template expansion; the quoting is checked
// by running the expanded text through a real /bin/sh (and a nested `bash -c '...'`).
#include "core/runner/command.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "core/runner/launch.h"
#include "core/runner/process.h"
#include "tests/support/test_support.h"

using namespace kl::runner;

namespace {
/// Runs `sh -c line` and returns what a python-free argv dumper printed (one arg per line).
std::vector<std::string> runAndDumpArgs(const std::string& line, const kl::test::TempDir& tmp) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", line};
  spec.stdoutPath = tmp / "out.txt";
  std::filesystem::remove(spec.stdoutPath);
  auto r = runProcess(spec);
  REQUIRE(r.ok());
  CHECK(r->exitCode == 0);
  std::vector<std::string> args;
  std::string text = kl::test::readFile(spec.stdoutPath);
  size_t start = 0;
  for (size_t p; (p = text.find('\x1e', start)) != std::string::npos; start = p + 1)
    args.push_back(text.substr(start, p - start));
  return args;
}
// printf prints each argument followed by a record separator.
const std::vector<std::string> kDump = {"printf", "%s\\036"};
}  // namespace

TEST_CASE("splitCommandLine follows sh word splitting without expansion") {
  auto w = splitCommandLine(R"(python  train.py --name "a b" 'c d' e\ f "x\"y" '$HOME' "")");
  REQUIRE(w.ok());
  CHECK(*w == std::vector<std::string>{"python", "train.py", "--name", "a b", "c d", "e f", "x\"y", "$HOME", ""});
  CHECK_FALSE(splitCommandLine("python 'oops").ok());
  CHECK_FALSE(splitCommandLine("python \"oops").ok());
  CHECK_FALSE(splitCommandLine("   ").ok());
  CHECK_FALSE(splitCommandLine("a\\").ok());
}

TEST_CASE("shellQuote round-trips through /bin/sh") {
  kl::test::TempDir tmp;
  std::vector<std::string> words = {"plain",       "with space", "it's",   "$HOME",     "`id`", "a\"b",
                                    "back\\slash", "",           "{rank}", "new\nline", "*"};
  auto argv = kDump;
  argv.insert(argv.end(), words.begin(), words.end());
  CHECK(shellQuote("abc-_./=:,@%+9") == "abc-_./=:,@%+9");
  CHECK(shellQuote("") == "''");
  CHECK(shellQuote("it's") == "'it'\\''s'");
  CHECK(runAndDumpArgs(shellJoin(argv), tmp) == words);
}

TEST_CASE("expandTemplate: placeholders, quoting contexts, errors") {
  kl::test::TempDir tmp;
  std::vector<std::string> words = {"it's", "a b", "$X", "\"q\""};
  auto argv = kDump;
  argv.insert(argv.end(), words.begin(), words.end());
  std::string cmd = shellJoin(argv);
  std::map<std::string, std::string> v = {{"cmd", cmd}, {"cwd", shellQuote("/tmp/a dir")}, {"out", shellQuote("/o")}};
  SUBCASE("bare") {
    auto t = expandTemplate("{cmd}", v);
    REQUIRE(t.ok());
    CHECK(runAndDumpArgs(*t, tmp) == words);
  }
  SUBCASE("inside single quotes: one more shell level (the ssh pattern)") {
    auto t = expandTemplate("bash -c '{cmd}'", v);
    REQUIRE(t.ok());
    CHECK(runAndDumpArgs(*t, tmp) == words);
  }
  SUBCASE("inside double quotes") {
    auto t = expandTemplate("bash -c \"{cmd}\"", v);
    REQUIRE(t.ok());
    CHECK(runAndDumpArgs(*t, tmp) == words);
  }
  SUBCASE("cwd and out, literal braces") {
    auto t = expandTemplate("cd {cwd} && echo {{x}} {out} && {cmd}", v);
    REQUIRE(t.ok());
    CHECK(t->find("cd '/tmp/a dir' && echo {x} /o && ") == 0);
  }
  SUBCASE("errors") {
    CHECK(expandTemplate("ssh host {cwd}", v).error().message.find("no {cmd}") != std::string::npos);
    CHECK(expandTemplate("{cmd} {nope}", v).error().message.find("{nope}") != std::string::npos);
    CHECK_FALSE(expandTemplate("{cmd", v).ok());
    CHECK_FALSE(expandTemplate("'{cmd}", v).ok());
  }
}

TEST_CASE("slurm wrapper: per-rank output names expanded by each task's shell") {
  kl::test::TempDir tmp;
  LaunchOptions o;
  o.kind = LaunchKind::Slurm;
  o.slurm.ntasks = 2;
  std::vector<std::string> command = {"printf", "%s\\036", "out/profile{rank}.sqlite", "it's"};
  auto spec = wrapCommand(o, command, tmp.path(), tmp / "out", tmp.path());
  REQUIRE(spec.ok());
  REQUIRE(spec->argv.size() > 3);
  CHECK(spec->argv[0] == "srun");
  CHECK(std::find(spec->argv.begin(), spec->argv.end(), "--ntasks=2") != spec->argv.end());
  CHECK(spec->argv[spec->argv.size() - 3] == "/bin/sh");
  // Run the task's shell line as Slurm would, with SLURM_PROCID set.
  ProcessSpec task;
  task.argv = {"/bin/sh", "-c", spec->argv.back()};
  task.env = {{"SLURM_PROCID", "3"}};
  task.stdoutPath = tmp / "task.txt";
  auto r = runProcess(task);
  REQUIRE(r.ok());
  CHECK(kl::test::readFile(task.stdoutPath) == std::string("out/profile.rank3.sqlite\x1eit's\x1e"));

  o.kind = LaunchKind::Local;
  auto local = wrapCommand(o, command, tmp.path(), tmp / "out", tmp.path());
  REQUIRE(local.ok());
  CHECK(local->argv[2] == "out/profile.sqlite");

  o.kind = LaunchKind::Slurm;
  o.slurm.mode = SlurmMode::Sbatch;
  auto sb = wrapCommand(o, command, tmp.path(), tmp / "out", tmp.path());
  REQUIRE(sb.ok());
  CHECK(sb->argv[0] == "sbatch");
  CHECK(std::find(sb->argv.begin(), sb->argv.end(), "--wait") != sb->argv.end());
  CHECK(kl::test::readFile(tmp / "job.sh").find("exec srun") != std::string::npos);
  CHECK(describeLaunch(o) == "slurm:sbatch -n2");
  CHECK(*parseSlurmMode("srun") == SlurmMode::Srun);
  CHECK(*parseSlurmMode("sbatch") == SlurmMode::Sbatch);
  CHECK_FALSE(parseSlurmMode("mpirun").ok());
}

TEST_CASE("slurmJobId reads sbatch --parsable output") {
  kl::test::TempDir tmp;
  kl::test::writeFile(tmp / "o.log", "42;local\n");
  CHECK(slurmJobId(tmp / "o.log") == std::optional<std::string>("42"));
  kl::test::writeFile(tmp / "p.log", "sbatch: error: nope\n");
  CHECK_FALSE(slurmJobId(tmp / "p.log").has_value());
}
