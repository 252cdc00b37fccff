// Pure helpers of worker/rest: URL parsing/decoding and the JSON shapes.
#include <catch2/catch.hpp>

#include "worker/rest/json_codec.h"
#include "worker/api/url.h"

using namespace kc::rest;
using nlohmann::json;

TEST_CASE("parse_http_url handles listener and leader URLs", "[rest][url]") {
  auto a = parse_http_url("http://0.0.0.0:8083");
  REQUIRE(a.ok());
  CHECK(a->scheme == "http");
  CHECK(a->host == "0.0.0.0");
  CHECK(a->port == 8083);
  CHECK(a->base_path.empty());

  auto b = parse_http_url("http://:8083");
  REQUIRE(b.ok());
  CHECK(b->host == "0.0.0.0");

  auto c = parse_http_url("http://w1:8083/");
  REQUIRE(c.ok());
  CHECK(c->host == "w1");
  CHECK(c->base_path.empty());

  auto d = parse_http_url("http://[::1]:0/prefix/");
  REQUIRE(d.ok());
  CHECK(d->host == "::1");
  CHECK(d->port == 0);
  CHECK(d->base_path == "/prefix");

  auto e = parse_http_url("HTTPS://host");
  REQUIRE(e.ok());
  CHECK(e->scheme == "https");
  CHECK(e->port == 443);

  CHECK_FALSE(parse_http_url("host:8083").ok());
  CHECK_FALSE(parse_http_url("http://h:99999").ok());
  CHECK_FALSE(parse_http_url("http://h:80x").ok());
  CHECK_FALSE(parse_http_url("").ok());
}

TEST_CASE("percent decoding of paths and queries", "[rest][url]") {
  CHECK(percent_decode("my%20conn", false) == std::optional<std::string>("my conn"));
  CHECK(percent_decode("a+b", false) == std::optional<std::string>("a+b"));
  CHECK(percent_decode("a+b", true) == std::optional<std::string>("a b"));
  CHECK_FALSE(percent_decode("bad%2", false).has_value());
  CHECK_FALSE(percent_decode("bad%zz", false).has_value());

  auto segs = split_path("/connectors/my%20conn-1//config/");
  REQUIRE(segs.has_value());
  CHECK(*segs == std::vector<std::string>{"connectors", "my conn-1", "config"});
  CHECK(split_path("/")->empty());

  auto q = parse_query("expand=status&expand=info&x&y=a%26b+c");
  REQUIRE(q.has_value());
  REQUIRE(q->size() == 4);
  CHECK((*q)[1] == std::pair<std::string, std::string>{"expand", "info"});
  CHECK((*q)[2] == std::pair<std::string, std::string>{"x", ""});
  CHECK((*q)[3] == std::pair<std::string, std::string>{"y", "a&b c"});

  CHECK(strip_query_param("forward=true&includeTasks=true&forward=x", "forward") == "includeTasks=true");
  CHECK(strip_query_param("", "forward").empty());
  CHECK(percent_encode_segment("my conn/1") == "my%20conn%2F1");
}

TEST_CASE("entity JSON shapes match Connect", "[rest][json]") {
  ConnectorInfo info{"c1", {{"name", "c1"}, {"connector.class", "X"}}, {{"c1", 0}, {"c1", 1}}, ConnectorType::Source};
  json j = to_json(info);
  CHECK(j == json::parse(R"({"name":"c1","config":{"name":"c1","connector.class":"X"},
        "tasks":[{"connector":"c1","task":0},{"connector":"c1","task":1}],"type":"source"})"));

  // Filled field by field: GCC 12 at -O3 raises a false
  // -Wmaybe-uninitialized on the strings of a brace-initialized aggregate
  // (Release build), here and for TaskInfo below.
  ConnectorStateInfo st;
  st.name = "c1";
  st.connector.state = ConnectState::Running;
  st.connector.worker_id = "w1:8083";
  st.tasks.resize(2);
  st.tasks[0].id = 1;
  st.tasks[0].state = ConnectState::Failed;
  st.tasks[0].worker_id = "w2:8083";
  st.tasks[0].trace = "boom";
  st.tasks[1].id = 0;
  st.tasks[1].state = ConnectState::Running;
  st.tasks[1].worker_id = "w1:8083";
  st.type = ConnectorType::Sink;
  CHECK(to_json(st) == json::parse(R"({"name":"c1","connector":{"state":"RUNNING","worker_id":"w1:8083"},
        "tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},
                 {"id":1,"state":"FAILED","worker_id":"w2:8083","trace":"boom"}],"type":"sink"})"));

  CHECK(to_json(PluginInfo{"a.B", PluginType::HeaderConverter, ""}) ==
        json::parse(R"({"class":"a.B","type":"header_converter"})"));
  TaskInfo task_info;
  task_info.id.connector = "c1";
  task_info.id.task = 2;
  task_info.config["k"] = "v";
  CHECK(to_json(task_info) == json::parse(R"({"id":{"connector":"c1","task":2},"config":{"k":"v"}})"));
  CHECK(json::parse(error_body(404, "nope")) == json::parse(R"({"error_code":404,"message":"nope"})"));
}

TEST_CASE("create and put-config request validation", "[rest][json]") {
  auto ok = parse_create_request(R"({"name":" c1 ","config":{"connector.class":"X","tasks.max":2,"b":true},
                                     "initial_state":"paused"})");
  REQUIRE(ok.ok());
  CHECK(ok.value().name == "c1");
  CHECK(ok.value().config.at("name") == "c1");
  CHECK(ok.value().config.at("tasks.max") == "2");
  CHECK(ok.value().config.at("b") == "true");
  CHECK(ok.value().initial_state == TargetState::Paused);
  CHECK_FALSE(ok.value().allow_replace);

  auto bad_json = parse_create_request("{not json");
  REQUIRE_FALSE(bad_json.ok());
  CHECK(bad_json.error().http_status() == 400);
  CHECK_FALSE(parse_create_request("").ok());
  CHECK(parse_create_request(R"({"config":{}})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"","config":{}})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"c1"})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"c1","config":[]})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"c1","config":{"a":{"b":1}}})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"c1","config":{"name":"c2"}})").error().http_status() == 400);
  CHECK(parse_create_request(R"({"name":"c1","config":{},"initial_state":"SLEEPING"})").error().http_status() == 400);
  CHECK(parse_create_request(R"(["c1"])").error().http_status() == 400);

  auto put = parse_put_config_request("my conn", R"({"connector.class":"X"})");
  REQUIRE(put.ok());
  CHECK(put.value().allow_replace);
  CHECK(put.value().config.at("name") == "my conn");
  CHECK(parse_put_config_request("a", R"({"name":"b"})").error().http_status() == 400);
  CHECK(parse_put_config_request("a", "[1]").error().http_status() == 400);
}

TEST_CASE("body parsing stops at 64 levels of nesting, before building deeper", "[rest][json][hostile]") {
  const auto nest = [](size_t n) { return std::string(n, '[') + std::string(n, ']'); };
  CHECK(parse_json_body(nest(64)).ok());
  CHECK(parse_ordered_json_body(nest(64)).ok());
  for (size_t depth : {65u, 60'000u}) {
    auto plain = parse_json_body(nest(depth));
    REQUIRE_FALSE(plain.ok());
    CHECK(plain.error().http_status() == 400);
    CHECK(plain.error().message ==
          "Invalid JSON in request body: the body nests deeper than 64 levels of arrays and objects");
    CHECK_FALSE(parse_ordered_json_body(nest(depth)).ok());
  }
  // Objects count as levels too, and brackets inside strings do not.
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"k\":";
  objects += "1" + std::string(65, '}');
  CHECK_FALSE(parse_json_body(objects).ok());
  CHECK(parse_json_body(R"({"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})").ok());
  auto offsets = parse_offsets_request(R"({"offsets":[{"partition":{"p":)" + nest(70) + R"(},"offset":null}]})");
  REQUIRE_FALSE(offsets.ok());
  CHECK(offsets.error().message.find("nests deeper than 64") != std::string::npos);
}

TEST_CASE("body parse errors name the key of an out-of-range number and never quote the token", "[rest][json][hostile]") {
  auto big = parse_json_body(R"({"config":{"tasks.max":1e999}})");
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().message == "Invalid JSON in request body: the number for key 'tasks.max' is out of range");
  auto in_array = parse_ordered_json_body(R"({"offsets":[{"offset":{"pos":[2e400]}}]})");
  REQUIRE_FALSE(in_array.ok());
  CHECK(in_array.error().message == "Invalid JSON in request body: the number for key 'pos' is out of range");
  for (const char* body : {R"({"p":"hunter22)", R"({"p":hunter22})", R"({"p":1234hunter22})"}) {
    INFO(body);
    auto r = parse_json_body(body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.rfind("Invalid JSON in request body: ", 0) == 0);
    CHECK(r.error().message.find("hunter22") == std::string::npos);
  }
}

TEST_CASE("dump_json replaces invalid UTF-8 instead of throwing", "[rest][json][hostile]") {
  CHECK(dump_json(json{{"name", "a\xFF"}}) == "{\"name\":\"a\xEF\xBF\xBD\"}");
  CHECK(error_body(404, "Connector \xFE not found") ==
        "{\"error_code\":404,\"message\":\"Connector \xEF\xBF\xBD not found\"}");
}
