// Record-path throughput, records/s on one core (items_per_second), for
// issue 11 item 9 (see README.md here for the figures):
//   BM_JsonFromConnect/schemas:1|0   JsonConverter.fromConnectData of a
//                                    10-field Struct (goal: >= 1M records/s)
//   BM_JsonToConnect/schemas:1|0     JsonConverter.toConnectData of the same bytes
//   BM_CopyRecord                    copying the SourceRecord (the baseline)
//   BM_TransformChain                copy + InsertField$Value, Cast$Value,
//                                    ReplaceField$Value, TimestampRouter
// Single thread; every benchmark checks its first result so a broken
// conversion cannot pass for a fast one.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "worker/converters/converters.h"
#include "worker/converters/json_converter.h"
#include "worker/data/record.h"
#include "worker/transforms/chain.h"

namespace {

using namespace kc;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_pipeline: %s\n", what.c_str());
  std::abort();
}

template <typename T>
T must(Result<T> r, const char* what) {
  if (!r) die(std::string(what) + ": " + r.error().to_string());
  return std::move(*r);
}

/// The benchmark's value schema: 10 fields of the usual primitive mix, one
/// optional string left null, one Timestamp.
data::SchemaPtr order_schema() {
  static const data::SchemaPtr schema = [] {
    auto opt_string = must(data::SchemaBuilder::string().optional().build(), "optional string");
    auto b = data::SchemaBuilder::struct_().name("com.example.Order");
    b.field("id", must(data::SchemaBuilder::int32().build(), "int32"))
        .field("customer_id", must(data::SchemaBuilder::int64().build(), "int64"))
        .field("product", must(data::SchemaBuilder::string().build(), "string"))
        .field("quantity", must(data::SchemaBuilder::int16().build(), "int16"))
        .field("price", must(data::SchemaBuilder::float64().build(), "float64"))
        .field("discount", must(data::SchemaBuilder::float32().build(), "float32"))
        .field("paid", must(data::SchemaBuilder::boolean().build(), "boolean"))
        .field("coupon", opt_string)
        .field("note", opt_string)
        .field("created", must(data::timestamp_builder().build(), "timestamp"));
    return must(b.build(), "struct");
  }();
  return schema;
}

data::Value order_value() {
  data::Struct s(order_schema());
  s.put_unchecked(0, int32_t{1234567});
  s.put_unchecked(1, int64_t{9876543210123});
  s.put_unchecked(2, std::string("Widget, large (blue)"));
  s.put_unchecked(3, int16_t{3});
  s.put_unchecked(4, 19.99);
  s.put_unchecked(5, 0.15f);
  s.put_unchecked(6, true);
  s.put_unchecked(7, std::string("WINTER-2026"));
  // field 8 ("note") stays null
  s.put_unchecked(9, data::JavaDate{1700000000123});
  return data::Value(std::move(s));
}

std::unique_ptr<converters::Converter> json_converter(bool schemas) {
  return must(converters::make_converter(converters::kJsonConverterClass,
                                         {{"schemas.enable", schemas ? "true" : "false"}}, false),
              "JsonConverter");
}

void BM_JsonFromConnect(benchmark::State& state) {
  auto conv = json_converter(state.range(0) != 0);
  const auto schema = order_schema();
  const auto value = order_value();
  auto first = must(conv->from_connect("orders", schema, value), "fromConnectData");
  size_t bytes = first->size();
  for (auto _ : state) {
    auto out = conv->from_connect("orders", schema, value);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["record_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_JsonFromConnect)->ArgName("schemas")->Arg(1)->Arg(0);

void BM_JsonToConnect(benchmark::State& state) {
  auto conv = json_converter(state.range(0) != 0);
  const auto bytes = *must(conv->from_connect("orders", order_schema(), order_value()), "fromConnectData");
  auto first = must(conv->to_connect("orders", &bytes), "toConnectData");
  if (state.range(0) != 0 && !(first.value == order_value())) die("toConnectData does not give the struct back");
  for (auto _ : state) {
    auto out = conv->to_connect("orders", &bytes);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_JsonToConnect)->ArgName("schemas")->Arg(1)->Arg(0);

data::SourceRecord order_record() {
  data::SourceRecord r;
  r.topic = "orders";
  r.kafka_partition = 0;
  r.key_schema = must(data::SchemaBuilder::string().build(), "key schema");
  r.key = std::string("order-1234567");
  r.value_schema = order_schema();
  r.value = order_value();
  r.timestamp = 1700000000123;
  r.source_partition.emplace_back(data::Value(std::string("file")), data::Value(std::string("orders.txt")));
  r.source_offset.emplace_back(data::Value(std::string("position")), data::Value(int64_t{4096}));
  return r;
}

void BM_CopyRecord(benchmark::State& state) {
  const auto record = order_record();
  for (auto _ : state) {
    data::SourceRecord copy = record;
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CopyRecord);

void BM_TransformChain(benchmark::State& state) {
  std::vector<transforms::ConfigError> errors;
  auto chain = must(transforms::TransformChain::build(
                        {
                            {"transforms", "insert,cast,drop,route"},
                            {"transforms.insert.type", "org.apache.kafka.connect.transforms.InsertField$Value"},
                            {"transforms.insert.static.field", "source"},
                            {"transforms.insert.static.value", "kconnectd"},
                            {"transforms.cast.type", "org.apache.kafka.connect.transforms.Cast$Value"},
                            {"transforms.cast.spec", "id:string"},
                            {"transforms.drop.type", "org.apache.kafka.connect.transforms.ReplaceField$Value"},
                            {"transforms.drop.exclude", "note"},
                            {"transforms.route.type", "org.apache.kafka.connect.transforms.TimestampRouter"},
                            {"transforms.route.topic.format", "${topic}-${timestamp}"},
                            {"transforms.route.timestamp.format", "yyyyMMdd"},
                        },
                        &errors),
                    "TransformChain::build");
  const auto record = order_record();
  {
    data::SourceRecord r = record;
    auto out = must(chain.apply(r), "apply");
    if (out != transforms::Outcome::kKept || r.topic != "orders-20231114" || r.value_schema->fields().size() != 10 ||
        !r.value.is<data::Struct>())
      die("the chain did not give the expected record (topic " + r.topic + ")");
  }
  for (auto _ : state) {
    data::SourceRecord r = record;
    auto out = chain.apply(r);
    benchmark::DoNotOptimize(out);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformChain);

}  // namespace

BENCHMARK_MAIN();
