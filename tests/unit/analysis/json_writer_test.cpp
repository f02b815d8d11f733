// kl::json::Writer: output parses as JSON (checked with an independent parser) and escapes
// everything a profile string can contain.
#include "core/support/json_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

using kl::json::Writer;

TEST_CASE("json writer: nested structure round-trips through an independent parser") {
  std::ostringstream os;
  Writer w(os);
  w.beginObject()
      .field("name", "gemm")
      .field("n", 3)
      .field("big", 1700000000123456789LL)
      .field("neg", -42L)
      .field("u", 18446744073709551615ULL)
      .field("ok", true)
      .key("nothing")
      .null()
      .key("xs")
      .beginArray()
      .value(1.5)
      .value("a")
      .beginObject()
      .endObject()
      .beginArray()
      .endArray()
      .endArray()
      .endObject();
  CHECK(w.complete());
  auto j = nlohmann::json::parse(os.str());
  CHECK(j["name"] == "gemm");
  CHECK(j["n"] == 3);
  CHECK(j["big"].get<int64_t>() == 1700000000123456789LL);
  CHECK(j["neg"] == -42);
  CHECK(j["u"].get<uint64_t>() == 18446744073709551615ULL);
  CHECK(j["ok"] == true);
  CHECK(j["nothing"].is_null());
  CHECK(j["xs"].size() == 4);
  CHECK(j["xs"][0] == 1.5);
}

TEST_CASE("json writer: string escaping") {
  std::string nasty = "q\"b\\s/\n\r\t\b\f";
  nasty.push_back('\x01');
  nasty.push_back('\x1f');
  nasty += "void f<int, 2>(float*) \xE2\x80\xA8 \xC3\xA9";  // U+2028, é
  auto q = kl::json::quoted(nasty);
  CHECK(q.find('\n') == std::string::npos);
  CHECK(q.find("\\u0001") != std::string::npos);
  CHECK(q.find("\\u2028") != std::string::npos);
  auto back = nlohmann::json::parse(q).get<std::string>();
  CHECK(back == nasty);
}

TEST_CASE("json writer: invalid UTF-8 becomes U+FFFD, output stays valid") {
  std::string bad =
      "a\xff"
      "b\xC3"
      "c\xED\xA0\x80"
      "d";  // stray byte, truncated, surrogate
  auto q = kl::json::quoted(bad);
  auto back = nlohmann::json::parse(q).get<std::string>();
  CHECK(back.find('a') == 0);
  CHECK(back.find("\xEF\xBF\xBD") != std::string::npos);
  CHECK(back.find('d') != std::string::npos);
}

TEST_CASE("json writer: html-safe mode hides </script>") {
  auto q = kl::json::quoted("</script><b>&", true);
  CHECK(q.find('<') == std::string::npos);
  CHECK(q.find('>') == std::string::npos);
  CHECK(nlohmann::json::parse(q).get<std::string>() == "</script><b>&");
}

TEST_CASE("json writer: numbers") {
  std::ostringstream os;
  Writer w(os);
  w.beginArray()
      .valueFixed(1234567.891, 3)
      .valueFixed(-0.0001, 3)
      .value(std::nan(""))
      .valueFixed(1.0 / 0.0, 3)
      .value(0.1)
      .endArray();
  CHECK(os.str() == "[1234567.891,0.000,null,null,0.1]");
}

TEST_CASE("json writer: pretty printing is still valid JSON") {
  std::ostringstream os;
  Writer w(os, 2);
  w.beginObject().key("a").beginArray().value(1).value(2).endArray().field("b", "x").endObject();
  CHECK(os.str().find('\n') != std::string::npos);
  auto j = nlohmann::json::parse(os.str());
  CHECK(j["a"][1] == 2);
}
