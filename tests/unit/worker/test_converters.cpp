// The task converters (worker/converters' converters with the data plane's fast
// paths) and the plugin registry.
#include <catch2/catch.hpp>

#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/converter.h"

using namespace kc::runtime;
using kc::connectors::Data;
namespace data = kc::data;
namespace converters = kc::converters;

TEST_CASE("StringConverter", "[worker][converter]") {
  auto c = make_converter(converters::kStringConverterClass, {}, false);
  REQUIRE(c);
  CHECK(*(*c)->from_connect("t", Data::string("hello")).value() == "hello");
  CHECK_FALSE((*c)->from_connect("t", Data::null()).value().has_value());
  CHECK(*(*c)->from_connect("t", Data{data::INT32_SCHEMA(), data::Value(int32_t{42})}).value() == "42");
  auto d = (*c)->to_connect("t", std::string("x"));
  REQUIRE(d);
  CHECK(d->value == data::Value("x"));
  CHECK(*d->schema == *data::OPTIONAL_STRING_SCHEMA());
  CHECK((*c)->to_connect("t", std::nullopt)->value.is_null());
}

TEST_CASE("ByteArrayConverter", "[worker][converter]") {
  auto c = make_converter("ByteArrayConverter", {}, false);
  REQUIRE(c);
  CHECK(*(*c)->from_connect("t", Data::bytes(std::string("\x00\x01", 2))).value() == std::string("\x00\x01", 2));
  auto wrong = (*c)->from_connect("t", Data::string("s"));  // needs bytes
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message == "Invalid schema type for ByteArrayConverter: STRING");
  auto d = (*c)->to_connect("t", std::string("ab"));
  REQUIRE(d);
  CHECK(d->value.is<data::Bytes>());
}

TEST_CASE("the data plane's fast paths give what from_connect / to_connect give", "[worker][converter]") {
  auto str = make_converter(converters::kStringConverterClass, {}, false);
  auto bin = make_converter(converters::kByteArrayConverterClass, {}, false);
  auto json = make_converter(converters::kJsonConverterClass, {}, false);
  REQUIRE(str);
  REQUIRE(bin);
  REQUIRE(json);
  // Each input through each converter: a view, when offered, equals
  // from_connect's bytes; no view leaves the work (and errors) to it.
  const Data schemaless_map{nullptr, data::Value(data::Map{{data::Value("k"), data::Value(int32_t{1})}})};
  const std::vector<Data> inputs{Data::string("hello"), Data::bytes(std::string("\x00\x01", 2)), Data::null(),
                                 Data::string(std::nullopt), schemaless_map};
  for (const auto* c : {str->get(), bin->get(), json->get()}) {
    for (const auto& d : inputs) {
      std::optional<std::string_view> view;
      if (!c->from_connect_view(d, view)) continue;
      auto full = c->from_connect("t", d);
      REQUIRE(full);
      CHECK(view.has_value() == full->has_value());
      if (view && *full) CHECK(std::string(*view) == **full);
    }
  }
  std::optional<std::string_view> view;
  const Data hello = Data::string("hello");  // the view points into it: keep it alive
  CHECK((*str)->from_connect_view(hello, view));
  CHECK(view == std::optional<std::string_view>("hello"));
  CHECK_FALSE((*str)->from_connect_view(schemaless_map, view));          // Map.toString: from_connect's work
  CHECK_FALSE((*bin)->from_connect_view(Data::string("s"), view));       // its error: from_connect's
  CHECK_FALSE((*json)->from_connect_view(Data::string("hello"), view));  // envelope: never a view
  auto latin = make_converter(converters::kStringConverterClass, {{"converter.encoding", "ISO-8859-1"}}, false);
  REQUIRE(latin);
  CHECK_FALSE((*latin)->from_connect_view(hello, view));  // not the identity
  // to_connect_owned takes the bytes over and builds the same data.
  for (const auto* c : {str->get(), bin->get(), json->get()}) {
    for (const std::optional<std::string>& bytes :
         {std::optional<std::string>("x"), std::optional<std::string>(R"({"schema":{"type":"string","optional":false},"payload":"hi"})"),
          std::optional<std::string>()}) {
      auto a = c->to_connect("t", bytes);
      auto b = c->to_connect_owned("t", std::optional<std::string>(bytes));
      REQUIRE(a.ok() == b.ok());
      if (a) CHECK(*a == *b);
    }
  }
}

TEST_CASE("JsonConverter with and without schemas", "[worker][converter]") {
  auto with = make_converter(converters::kJsonConverterClass, {}, false);
  REQUIRE(with);
  CHECK(*(*with)->from_connect("t", Data::string("hi")).value() ==
        R"({"schema":{"type":"string","optional":false},"payload":"hi"})");
  CHECK(*(*with)->from_connect("t", Data::bytes("ab")).value() ==
        R"({"schema":{"type":"bytes","optional":false},"payload":"YWI="})");
  auto back = (*with)->to_connect("t", std::string(R"({"schema":{"type":"string","optional":false},"payload":"hi"})"));
  REQUIRE(back);
  CHECK(back->value == data::Value("hi"));
  auto bytes = (*with)->to_connect("t", std::string(R"({"schema":{"type":"bytes","optional":false},"payload":"YWI="})"));
  REQUIRE(bytes);
  CHECK(bytes->value == data::Value(data::Bytes{"ab"}));
  CHECK_FALSE((*with)->to_connect("t", std::string(R"({"a":1})")));  // no envelope

  auto without = make_converter("JsonConverter", {{"schemas.enable", "false"}}, false);
  REQUIRE(without);
  CHECK(*(*without)->from_connect("t", Data::string("hi")).value() == R"("hi")");
  const Data m{nullptr, data::Value(data::Map{{data::Value("k"), data::Value(int32_t{1})}})};
  CHECK(*(*without)->from_connect("t", m).value() == R"({"k":1})");
  auto plain = (*without)->to_connect("t", std::string(R"({"a":[1,2]})"));
  REQUIRE(plain);
  CHECK(data::java_to_string(plain->value) == "{a=[1, 2]}");
  CHECK_FALSE((*without)->to_connect("t", std::string("{bad")));

  auto bad = make_converter("JsonConverter", {{"schemas.enable", "maybe"}}, false);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "schemas.enable");
  auto unknown = make_converter("com.example.Nope", {}, false);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("com.example.Nope") != std::string::npos);
}

TEST_CASE("plugin registry resolves Connect class names and aliases", "[worker][connectors]") {
  auto& r = kc::connectors::PluginRegistry::builtin();
  for (const char* name : {"org.apache.kafka.connect.file.FileStreamSourceConnector", "FileStreamSourceConnector",
                           "FileStreamSource"}) {
    auto c = r.create(name);
    REQUIRE(c);
    CHECK((*c)->type() == kc::connectors::ConnectorType::Source);
  }
  CHECK(r.create("FileStreamSink").value()->type() == kc::connectors::ConnectorType::Sink);
  CHECK(r.create("SequenceSource"));
  auto bad = r.create("com.example.Missing");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("com.example.Missing") != std::string::npos);
}

TEST_CASE("SequenceSource makes tasks.max task configs", "[worker][connectors]") {
  auto c = kc::connectors::make_sequence_source();
  c->start({{"name", "seq"}, {"topic", "t"}, {"tasks.max", "3"}});
  auto cfgs = c->task_configs(3);
  REQUIRE(cfgs.size() == 3);
  CHECK(cfgs[2].at("task.id") == "2");
  auto f = kc::connectors::make_file_stream_source();
  CHECK_THROWS(f->start({{"file", "/tmp/x"}}));  // no topic
}

namespace {
/// A source task context whose committed offset for every partition is `seq`
/// (nullopt = none).
struct SeqContext : kc::connectors::SourceTaskContext {
  std::optional<int64_t> seq;
  std::string name = "seq";
  std::optional<kc::connectors::OrderedJson> offset(const kc::connectors::OrderedJson&) const override {
    if (!seq) return std::nullopt;
    return kc::connectors::OrderedJson{{"seq", *seq}};
  }
  const std::string& connector_name() const override { return name; }
  int32_t task_number() const override { return 0; }
};

/// The seqs a SequenceSource task emits in `polls` polls.
std::vector<int64_t> sequence_seqs(const kc::connectors::ConfigMap& cfg, std::optional<int64_t> committed, int polls) {
  SeqContext ctx;
  ctx.seq = committed;
  auto c = kc::connectors::make_sequence_source();
  c->start(cfg);
  auto t = c->create_source_task();
  t->start(c->task_configs(1)[0], ctx);
  std::vector<int64_t> out;
  for (int i = 0; i < polls; ++i)
    for (const auto& r : t->poll()) out.push_back(r.source_offset.at("seq").get<int64_t>());
  t->stop();
  return out;
}
}  // namespace

TEST_CASE("SequenceSource max.records: seqs 0 .. max.records-1 per task in all, then nothing", "[worker][connectors]") {
  const kc::connectors::ConfigMap cfg{{"name", "seq"}, {"topic", "t"}, {"throughput", "0"}, {"max.records", "2500"}};
  auto seqs = sequence_seqs(cfg, std::nullopt, 5);  // 1000 per poll at most
  REQUIRE(seqs.size() == 2500);
  CHECK(seqs.front() == 0);
  CHECK(seqs.back() == 2499);
  // A restarted task resumes after the committed seq and stops at the same end.
  seqs = sequence_seqs(cfg, 2399, 3);
  REQUIRE(seqs.size() == 100);
  CHECK(seqs.front() == 2400);
  CHECK(seqs.back() == 2499);
  CHECK(sequence_seqs(cfg, 2499, 2).empty());
  // Default: no limit.
  auto unlimited = sequence_seqs({{"name", "seq"}, {"topic", "t"}, {"throughput", "0"}}, std::nullopt, 3);
  CHECK(unlimited.size() == 3000);
  auto bad = kc::connectors::make_sequence_source();
  CHECK_THROWS(bad->start({{"topic", "t"}, {"max.records", "lots"}}));
  auto v = kc::connectors::PluginRegistry::builtin().validate(
      {{"connector.class", "SequenceSource"}, {"name", "s"}, {"topic", "t"}, {"max.records", "-2"}});
  CHECK(v.error_count == 1);
}

TEST_CASE("SharedJson: copies share one value, and it reads and compares as the JSON", "[worker][records]") {
  using kc::connectors::OrderedJson;
  using kc::connectors::SharedJson;
  using kc::connectors::SourceRecord;
  SourceRecord r;
  CHECK(r.source_partition.get() == OrderedJson::object());  // default: {} as before
  r.source_partition = OrderedJson{{"filename", "/tmp/in.txt"}};
  SharedJson copy = r.source_partition;
  CHECK(&copy.get() == &r.source_partition.get());  // shared, not copied
  CHECK(copy == r.source_partition);
  CHECK(copy == OrderedJson{{"filename", "/tmp/in.txt"}});
  CHECK_FALSE(copy == OrderedJson{{"filename", "/tmp/other.txt"}});
  const OrderedJson& j = copy;  // where the API wants JSON
  CHECK(j.at("filename") == "/tmp/in.txt");
  CHECK(copy->dump() == R"({"filename":"/tmp/in.txt"})");
}
