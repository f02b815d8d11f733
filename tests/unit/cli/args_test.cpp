#include <doctest/doctest.h>

#include <sstream>

#include "cli/cli.h"

using kl::cli::Args;
using kl::cli::OptionSpec;
using kl::cli::UsageError;

namespace {
const std::vector<OptionSpec> kSpec = {
    {"--format"}, {"--flag", false}, {"--tag", true, true}, {"--trim", true, false, 2}};
}

TEST_CASE("Args: values, flags, repeats, positionals") {
  Args a({"file", "--format", "json", "--flag", "--tag=a", "--tag", "b", "--", "--not-an-option"}, kSpec);
  CHECK(a.get("--format") == "json");
  CHECK(a.has("--flag"));
  CHECK(a.values("--tag") == std::vector<std::string>{"a", "b"});
  CHECK(a.positional() == std::vector<std::string>{"file", "--not-an-option"});
}

TEST_CASE("Args: an option with two values") {
  Args a({"f", "--trim", "1ms", "2ms"}, kSpec);
  CHECK(a.values("--trim") == std::vector<std::string>{"1ms", "2ms"});
  CHECK(a.positional() == std::vector<std::string>{"f"});
  Args b({"--trim=1:2"}, kSpec);
  CHECK(b.values("--trim") == std::vector<std::string>{"1:2"});
  CHECK_THROWS_AS(Args({"--trim", "1"}, kSpec), UsageError);
}

TEST_CASE("Args: usage errors") {
  CHECK_THROWS_AS(Args({"--nope"}, kSpec), UsageError);
  CHECK_THROWS_AS(Args({"--format"}, kSpec), UsageError);
  CHECK_THROWS_AS(Args({"--format", "a", "--format", "b"}, kSpec), UsageError);
  CHECK_THROWS_AS(Args({"--flag=1"}, kSpec), UsageError);
  Args a({"--format", "xml"}, kSpec);
  CHECK_THROWS_AS(a.choice("--format", {"text", "json"}), UsageError);
  Args n({"--format", "12x"}, kSpec);
  CHECK_THROWS_AS(n.getInt("--format"), UsageError);
}

TEST_CASE("Args: --format parsed once into its enum") {
  using kl::cli::Format;
  CHECK(Args({}, kSpec).format({Format::Text, Format::Json}) == Format::Text);  // the first is the default
  CHECK(Args({"--format", "csv"}, kSpec).format({Format::Text, Format::Json, Format::Csv}) == Format::Csv);
  CHECK(Args({"--format=perfetto"}, kSpec).format({Format::Csv, Format::Perfetto}) == Format::Perfetto);
  try {
    (void)Args({"--format", "xml"}, kSpec).format({Format::Text, Format::Json});
    FAIL("no UsageError");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "option '--format' must be one of text|json, got 'xml'");
  }
  // Allowed elsewhere is not allowed here.
  CHECK_THROWS_AS(Args({"--format", "csv"}, kSpec).format({Format::Text, Format::Json}), UsageError);
}

TEST_CASE("runMain: exit codes and help") {
  std::ostringstream out, err;
  const char* help[] = {"kernlens", "--help"};
  CHECK(kl::cli::runMain(2, const_cast<char**>(help), out, err) == 0);
  CHECK(out.str().find("usage: kernlens") != std::string::npos);
  const char* bad[] = {"kernlens", "no-such-command"};
  CHECK(kl::cli::runMain(2, const_cast<char**>(bad), out, err) == 2);
  const char* badOpt[] = {"kernlens", "version", "--bogus"};
  CHECK(kl::cli::runMain(3, const_cast<char**>(badOpt), out, err) == 2);
  for (const auto& [name, cmd] : kl::cli::commands()) {
    std::ostringstream o, e;
    std::string n = name;
    const char* argv[] = {"kernlens", n.c_str(), "--help"};
    CHECK_MESSAGE(kl::cli::runMain(3, const_cast<char**>(argv), o, e) == 0, name);
    CHECK_MESSAGE(!o.str().empty(), name);
  }
}
