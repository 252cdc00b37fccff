// java.util.Properties.load syntax cases.
#include <catch2/catch.hpp>

#include "config/properties.h"

using kc::config::ConfigError;
using kc::config::parse_properties;
using kc::config::Properties;

TEST_CASE("properties: separators and whitespace", "[config]") {
  auto p = parse_properties("a=1\nb: 2\nc 3\n  d   =   4  \ne\tf\ng=\nh\ni:=j\nk = = v\n");
  CHECK(p.at("a") == "1");
  CHECK(p.at("b") == "2");
  CHECK(p.at("c") == "3");
  CHECK(p.at("d") == "4  ");  // trailing whitespace is kept, as in Java
  CHECK(p.at("e") == "f");
  CHECK(p.at("g").empty());
  CHECK(p.at("h").empty());
  CHECK(p.at("i") == "=j");
  CHECK(p.at("k") == "= v");
}

TEST_CASE("properties: comments and blank lines", "[config]") {
  auto p = parse_properties("# c1\n   ! c2\n\n \t \na=1 # not a comment\n#b=2\\\nc=3\n");
  CHECK(p.size() == 2);
  CHECK(p.at("a") == "1 # not a comment");
  CHECK(p.at("c") == "3");  // a comment line never continues
}

TEST_CASE("properties: line endings and continuations", "[config]") {
  auto p = parse_properties("a=one\\\n    two\\\n\tthree\r\nb=x\ry=z\r\nc=ends\\\\\nd=4");
  CHECK(p.at("a") == "onetwothree");
  CHECK(p.at("b") == "x");
  CHECK(p.at("y") == "z");
  CHECK(p.at("c") == "ends\\");  // even number of backslashes: no continuation
  CHECK(p.at("d") == "4");
  auto q = parse_properties("a=1\\\n\nb=2\nlast=x\\");
  CHECK(q.at("a") == "1");  // an empty line ends the continuation
  CHECK(q.at("b") == "2");
  CHECK(q.at("last") == "x");
  auto r = parse_properties("key\\\n  part=v\\\n  # still value");
  CHECK(r.at("keypart") == "v# still value");
}

TEST_CASE("properties: escapes", "[config]") {
  auto p = parse_properties(
      "k\\ ey=v\nx\\=y=1\nc\\:d:2\ntab=a\\tb\\nc\\rd\\fe\nu=\\u0041\\u00e9\\u20AC\nsp=\\  lead\nother=\\q\\\\\n"
      "emoji=\\uD83D\\uDE00\n");
  CHECK(p.at("k ey") == "v");
  CHECK(p.at("x=y") == "1");
  CHECK(p.at("c:d") == "2");
  CHECK(p.at("tab") == "a\tb\nc\rd\fe");
  CHECK(p.at("u") == "A\xc3\xa9\xe2\x82\xac");
  CHECK(p.at("sp") == "  lead");
  CHECK(p.at("other") == "q\\");
  CHECK(p.at("emoji") == "\xf0\x9f\x98\x80");
}

TEST_CASE("properties: last duplicate wins, UTF-8 passes through", "[config]") {
  auto p = parse_properties("a=1\na=2\nname=k\xc3\xa9y\n");
  CHECK(p.at("a") == "2");
  CHECK(p.at("name") == "k\xc3\xa9y");
}

TEST_CASE("properties: malformed unicode escapes (backslash u) name the line", "[config]") {
  try {
    parse_properties("a=1\n\nb=\\u12G4\n");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).starts_with("line 3: malformed \\uXXXX"));
  }
  try {
    parse_properties("a=1\nb=x\\\n  \\u12");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).starts_with("line 2:"));
  }
}

TEST_CASE("properties: missing file is an error naming the path", "[config]") {
  CHECK_THROWS_WITH(kc::config::load_properties_file("/nonexistent/x.properties"),
                    Catch::Contains("/nonexistent/x.properties"));
}
