// The PostgreSQL sink task against a real PostgreSQL 15 (tests/support/
// postgres_fixture.h): insert / upsert / update, each pk.mode, auto.create
// and auto.evolve, table.name.format, delete.enabled tombstones, batches
// larger than batch.size, the Connect -> PostgreSQL type mapping, one
// transaction per put(), config errors and connection failures.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/postgres_fixture.h"
#include "worker/connectors/connector.h"
#include "worker/connectors/postgres/postgres_sink.h"
#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"
#include "worker/data/schema.h"
#include "worker/data/value.h"

using namespace kc;
using namespace kc::connectors;
using kc::test::PostgresServer;

namespace {

/// One server per test process (each TEST_CASE runs in its own process
/// under ctest); each test uses its own tables.
PostgresServer& server() {
  static PostgresServer s;
  return s;
}

ConfigMap base_config(const std::string& topic) {
  return {{"name", "pg-test"},
          {"connector.class", "PostgresSink"},
          {"topics", topic},
          {"connection.url", server().url()},
          {"auto.create", "true"}};
}

std::unique_ptr<SinkTask> start_task(const ConfigMap& config) {
  auto c = make_postgres_sink();
  c->start(config);
  auto task = c->create_sink_task();
  REQUIRE(task);
  task->start(c->task_configs(1).at(0));
  return task;
}

data::SchemaPtr build(data::SchemaBuilder& b) {
  auto r = b.build();
  REQUIRE(r.ok());
  return r.value();
}

/// {id INT64, name STRING (optional)}
data::SchemaPtr person_schema() {
  static data::SchemaPtr s = [] {
    auto b = data::SchemaBuilder::struct_()
                 .name("person")
                 .field("id", data::INT64_SCHEMA())
                 .field("name", data::OPTIONAL_STRING_SCHEMA());
    return b.build().value();
  }();
  return s;
}

Data person(int64_t id, std::optional<std::string> name) {
  data::Struct s(person_schema());
  s.put_unchecked(0, data::Value(id));
  s.put_unchecked(1, name ? data::Value(*name) : data::Value());
  return Data{person_schema(), data::Value(std::move(s))};
}

SinkRecord record(const std::string& topic, int64_t offset, Data value, Data key = Data::null(), int32_t partition = 0) {
  SinkRecord r;
  r.topic = topic;
  r.kafka_partition = partition;
  r.kafka_offset = offset;
  r.key = std::move(key);
  r.value = std::move(value);
  return r;
}

std::string rows_text(const std::string& sql) {
  std::string out;
  for (const auto& row : server().query(sql)) {
    for (size_t i = 0; i < row.size(); ++i) out.append(i ? "|" : "").append(row[i].value_or("NULL"));
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("postgres sink: insert mode with auto.create writes each record as a row in one put") {
  auto task = start_task(base_config("people"));
  task->put({record("people", 0, person(1, "ada")), record("people", 1, person(2, std::nullopt)),
             record("people", 2, person(3, "cy"))});
  CHECK(rows_text("SELECT id, name FROM people ORDER BY id") == "1|ada\n2|NULL\n3|cy\n");
  // Required field -> NOT NULL, optional -> nullable; no primary key in pk.mode=none.
  CHECK(rows_text("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                  "WHERE table_name = 'people' ORDER BY ordinal_position") ==
        "id|bigint|NO\nname|text|YES\n");
  CHECK(server().scalar("SELECT count(*) FROM pg_constraint WHERE conrelid = 'people'::regclass AND contype = 'p'") ==
        "0");
  // insert mode does not deduplicate: the same record again is a second row.
  task->put({record("people", 0, person(1, "ada"))});
  CHECK(server().scalar("SELECT count(*) FROM people WHERE id = 1") == "2");
  task->stop();
}

TEST_CASE("postgres sink: upsert with pk.mode=record_value keeps one row per key, the last record winning") {
  auto cfg = base_config("up");
  cfg["insert.mode"] = "upsert";
  cfg["pk.mode"] = "record_value";
  cfg["pk.fields"] = "id";
  auto task = start_task(cfg);
  // The same key twice in one put (one statement may not update a row twice).
  task->put({record("up", 0, person(1, "a")), record("up", 1, person(2, "b")), record("up", 2, person(1, "a2"))});
  CHECK(rows_text("SELECT id, name FROM up ORDER BY id") == "1|a2\n2|b\n");
  // A re-delivery (as after a crash) changes nothing and adds no row.
  task->put({record("up", 1, person(2, "b")), record("up", 2, person(1, "a2"))});
  task->put({record("up", 3, person(2, "b2"))});
  CHECK(rows_text("SELECT id, name FROM up ORDER BY id") == "1|a2\n2|b2\n");
  CHECK(rows_text("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                  "a.attnum = ANY(i.indkey) WHERE i.indrelid = 'up'::regclass AND i.indisprimary") == "id\n");
  task->stop();
}

TEST_CASE("postgres sink: upsert with every value field as the key (pk.fields empty) is insert-if-absent") {
  auto cfg = base_config("allkey");
  cfg["insert.mode"] = "upsert";
  cfg["pk.mode"] = "record_value";
  auto task = start_task(cfg);
  task->put({record("allkey", 0, person(1, "a")), record("allkey", 1, person(1, "a")),
             record("allkey", 2, person(1, "b"))});
  task->put({record("allkey", 0, person(1, "a"))});
  CHECK(rows_text("SELECT id, name FROM allkey ORDER BY id, name") == "1|a\n1|b\n");
  task->stop();
}

TEST_CASE("postgres sink: update mode changes existing rows only") {
  server().query("CREATE TABLE upd (id BIGINT PRIMARY KEY, name TEXT)");
  server().query("INSERT INTO upd VALUES (1, 'old1'), (2, 'old2')");
  auto cfg = base_config("upd");
  cfg["insert.mode"] = "update";
  cfg["pk.mode"] = "record_value";
  cfg["pk.fields"] = "id";
  cfg["auto.create"] = "false";
  auto task = start_task(cfg);
  task->put({record("upd", 0, person(2, "new2")), record("upd", 1, person(9, "nobody"))});
  CHECK(rows_text("SELECT id, name FROM upd ORDER BY id") == "1|old1\n2|new2\n");
  task->stop();
}

TEST_CASE("postgres sink: pk.mode=kafka keys rows by topic, partition and offset") {
  auto cfg = base_config("kaf");
  cfg["insert.mode"] = "upsert";
  cfg["pk.mode"] = "kafka";
  auto task = start_task(cfg);
  task->put({record("kaf", 10, person(1, "a"), Data::null(), 0), record("kaf", 10, person(2, "b"), Data::null(), 1)});
  task->put({record("kaf", 10, person(1, "a"), Data::null(), 0)});  // re-delivered
  CHECK(rows_text("SELECT __connect_topic, __connect_partition, __connect_offset, id, name FROM kaf "
                  "ORDER BY __connect_partition") == "kaf|0|10|1|a\nkaf|1|10|2|b\n");
  CHECK(rows_text("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'kaf' "
                  "ORDER BY ordinal_position") ==
        "__connect_topic|text\n__connect_partition|integer\n__connect_offset|bigint\nid|bigint\nname|text\n");
  task->stop();

  // Own names through pk.fields.
  auto cfg2 = base_config("kaf2");
  cfg2["pk.mode"] = "kafka";
  cfg2["pk.fields"] = "t,p,o";
  auto task2 = start_task(cfg2);
  task2->put({record("kaf2", 5, person(1, "a"), Data::null(), 3)});
  CHECK(rows_text("SELECT t, p, o, id FROM kaf2") == "kaf2|3|5|1\n");
  task2->stop();
}

TEST_CASE("postgres sink: pk.mode=record_key with a struct key, a primitive key, and delete.enabled tombstones") {
  auto key_schema = [] {
    auto b = data::SchemaBuilder::struct_().field("k", data::INT32_SCHEMA());
    return b.build().value();
  }();
  auto key = [&](int32_t k) {
    data::Struct s(key_schema);
    s.put_unchecked(0, data::Value(k));
    return Data{key_schema, data::Value(std::move(s))};
  };
  auto cfg = base_config("rk");
  cfg["insert.mode"] = "upsert";
  cfg["pk.mode"] = "record_key";
  cfg["delete.enabled"] = "true";
  auto task = start_task(cfg);
  task->put({record("rk", 0, person(100, "a"), key(1)), record("rk", 1, person(200, "b"), key(2)),
             record("rk", 2, person(300, "c"), key(3))});
  CHECK(rows_text("SELECT k, id, name FROM rk ORDER BY k") == "1|100|a\n2|200|b\n3|300|c\n");
  // A tombstone deletes its key's row; order within the put is kept
  // (key 3 deleted, then written again).
  task->put({record("rk", 3, Data::null(), key(2)), record("rk", 4, Data::null(), key(3)),
             record("rk", 5, person(301, "c2"), key(3))});
  CHECK(rows_text("SELECT k, id, name FROM rk ORDER BY k") == "1|100|a\n3|301|c2\n");
  task->stop();

  // A primitive (string) key names its one column through pk.fields.
  auto cfg2 = base_config("rk2");
  cfg2["insert.mode"] = "upsert";
  cfg2["pk.mode"] = "record_key";
  cfg2["pk.fields"] = "the_key";
  cfg2["delete.enabled"] = "true";
  auto task2 = start_task(cfg2);
  task2->put({record("rk2", 0, person(1, "a"), Data::string("x")), record("rk2", 1, person(2, "b"), Data::string("y"))});
  task2->put({record("rk2", 2, Data::null(), Data::string("x"))});
  CHECK(rows_text("SELECT the_key, id FROM rk2") == "y|2\n");
  task2->stop();

  // Without pk.fields a primitive key has no column name.
  auto cfg3 = base_config("rk3");
  cfg3["pk.mode"] = "record_key";
  auto task3 = start_task(cfg3);
  CHECK_THROWS_WITH(task3->put({record("rk3", 0, person(1, "a"), Data::string("x"))}),
                    Catch::Contains("needs exactly one name in pk.fields"));
}

TEST_CASE("postgres sink: a tombstone without delete.enabled is an error naming the record") {
  auto task = start_task(base_config("tomb"));
  CHECK_THROWS_WITH(task->put({record("tomb", 0, person(1, "a")), record("tomb", 7, Data::null(), Data::null(), 2)}),
                    Catch::Contains("topic 'tomb', partition 2, offset 7") && Catch::Contains("null value"));
  // The whole put was one transaction: the good record is not there either.
  CHECK(server().scalar("SELECT to_regclass('tomb') IS NULL") == "t");
}

TEST_CASE("postgres sink: schemaless and non-struct values are errors naming topic, partition and offset") {
  auto task = start_task(base_config("schemaless"));
  data::Map m;
  m.emplace_back(data::Value("id"), data::Value(int64_t{1}));
  CHECK_THROWS_WITH(task->put({record("schemaless", 41, Data{nullptr, data::Value(std::move(m))}, Data::null(), 3)}),
                    Catch::Contains("topic 'schemaless', partition 3, offset 41") &&
                        Catch::Contains("schemas.enable=true"));
  CHECK_THROWS_WITH(task->put({record("schemaless", 42, Data::string("text"))}),
                    Catch::Contains("offset 42") && Catch::Contains("STRING value schema"));
}

TEST_CASE("postgres sink: auto.evolve adds an optional column, and without it a missing column is an error") {
  auto v2 = [] {
    auto b = data::SchemaBuilder::struct_()
                 .name("person")
                 .field("id", data::INT64_SCHEMA())
                 .field("name", data::OPTIONAL_STRING_SCHEMA())
                 .field("age", data::OPTIONAL_INT32_SCHEMA());
    return b.build().value();
  }();
  data::Struct s(v2);
  s.put_unchecked(0, data::Value(int64_t{2}));
  s.put_unchecked(1, data::Value("bo"));
  s.put_unchecked(2, data::Value(int32_t{42}));
  const Data newer{v2, data::Value(s)};

  auto cfg = base_config("evo");
  auto strict = start_task(cfg);
  strict->put({record("evo", 0, person(1, "al"))});
  CHECK_THROWS_WITH(strict->put({record("evo", 1, newer)}),
                    Catch::Contains("missing fields (age)") && Catch::Contains("auto-evolution is disabled"));
  strict->stop();

  cfg["auto.evolve"] = "true";
  auto task = start_task(cfg);
  task->put({record("evo", 1, newer), record("evo", 2, person(3, "cy"))});
  CHECK(rows_text("SELECT id, name, age FROM evo ORDER BY id") == "1|al|NULL\n2|bo|42\n3|cy|NULL\n");

  // A required field without a default cannot be added to existing rows.
  auto v3 = [] {
    auto b = data::SchemaBuilder::struct_().field("id", data::INT64_SCHEMA()).field("must", data::INT32_SCHEMA());
    return b.build().value();
  }();
  data::Struct s3(v3);
  s3.put_unchecked(0, data::Value(int64_t{4}));
  s3.put_unchecked(1, data::Value(int32_t{1}));
  CHECK_THROWS_WITH(task->put({record("evo", 3, Data{v3, data::Value(s3)})}),
                    Catch::Contains("'must', as the field is not optional and does not have a default value"));
  // A required field with a default can.
  auto v4 = [] {
    auto b = data::SchemaBuilder::struct_().field("id", data::INT64_SCHEMA());
    auto d = data::SchemaBuilder::int32();
    d.default_value(data::Value(int32_t{7}));
    b.field("level", d.build().value());
    return b.build().value();
  }();
  data::Struct s4(v4);
  s4.put_unchecked(0, data::Value(int64_t{5}));
  s4.put_unchecked(1, data::Value(int32_t{9}));
  task->put({record("evo", 4, Data{v4, data::Value(s4)})});
  CHECK(rows_text("SELECT id, level FROM evo ORDER BY id") == "1|7\n2|7\n3|7\n5|9\n");
  CHECK(server().scalar("SELECT is_nullable FROM information_schema.columns WHERE table_name = 'evo' AND "
                        "column_name = 'level'") == "NO");
  task->stop();
}

TEST_CASE("postgres sink: a missing table without auto.create is an error") {
  auto cfg = base_config("absent");
  cfg["auto.create"] = "false";
  auto task = start_task(cfg);
  CHECK_THROWS_WITH(task->put({record("absent", 0, person(1, "a"))}),
                    Catch::Contains("table \"absent\" is missing and auto-creation is disabled"));
}

TEST_CASE("postgres sink: table.name.format with ${topic}, and a schema-qualified name") {
  auto cfg = base_config("orders");
  cfg["table.name.format"] = "kafka_${topic}_v1";
  auto task = start_task(cfg);
  task->put({record("orders", 0, person(1, "a"))});
  CHECK(server().scalar("SELECT count(*) FROM kafka_orders_v1") == "1");
  CHECK(server().scalar("SELECT to_regclass('orders') IS NULL") == "t");
  task->stop();

  server().query("CREATE SCHEMA sales");
  cfg["table.name.format"] = "sales.${topic}";
  auto task2 = start_task(cfg);
  task2->put({record("orders", 0, person(1, "a")), record("orders", 1, person(2, "b"))});
  CHECK(server().scalar("SELECT count(*) FROM sales.orders") == "2");
  task2->stop();

  // Identifiers are quoted: a mixed-case topic with a space is one table.
  auto cfg3 = base_config("Odd Name");
  auto task3 = start_task(cfg3);
  task3->put({record("Odd Name", 0, person(1, "a"))});
  CHECK(server().scalar("SELECT count(*) FROM \"Odd Name\"") == "1");
}

TEST_CASE("postgres sink: a put larger than batch.size is written in several statements, all rows present") {
  auto cfg = base_config("big");
  cfg["batch.size"] = "7";
  cfg["insert.mode"] = "upsert";
  cfg["pk.mode"] = "record_value";
  cfg["pk.fields"] = "id";
  auto task = start_task(cfg);
  std::vector<SinkRecord> recs;
  for (int i = 0; i < 1000; ++i) recs.push_back(record("big", i, person(i % 250, std::string("v").append(std::to_string(i)))));
  task->put(recs);
  CHECK(server().scalar("SELECT count(*) FROM big") == "250");
  CHECK(server().scalar("SELECT count(DISTINCT id) FROM big") == "250");
  // The last record of each key wins: id 0 was last written by record 750.
  CHECK(server().scalar("SELECT name FROM big WHERE id = 0") == "v750");
  CHECK(server().scalar("SELECT name FROM big WHERE id = 249") == "v999");
  task->stop();
}

TEST_CASE("postgres sink: Connect types map to PostgreSQL types, nulls and logical types included") {
  auto b = data::SchemaBuilder::struct_();
  b.field("i8", data::INT8_SCHEMA())
      .field("i16", data::INT16_SCHEMA())
      .field("i32", data::INT32_SCHEMA())
      .field("i64", data::INT64_SCHEMA())
      .field("f32", data::FLOAT32_SCHEMA())
      .field("f64", data::FLOAT64_SCHEMA())
      .field("b", data::BOOLEAN_SCHEMA())
      .field("s", data::STRING_SCHEMA())
      .field("by", data::BYTES_SCHEMA())
      .field("dec", data::decimal_builder(2).build().value())
      .field("d", data::date_builder().build().value())
      .field("t", data::time_builder().build().value())
      .field("ts", data::timestamp_builder().build().value())
      .field("opt", data::OPTIONAL_INT32_SCHEMA());
  auto schema = build(b);
  data::Struct s(schema);
  s.put_unchecked(0, data::Value(int8_t{-8}));
  s.put_unchecked(1, data::Value(int16_t{-16000}));
  s.put_unchecked(2, data::Value(int32_t{2000000000}));
  s.put_unchecked(3, data::Value(int64_t{9000000000000000000}));
  s.put_unchecked(4, data::Value(1.5f));
  s.put_unchecked(5, data::Value(0.1));
  s.put_unchecked(6, data::Value(true));
  s.put_unchecked(7, data::Value("héllo 'quoted'"));
  s.put_unchecked(8, data::Value(data::Bytes{std::string("\x00\x01\xff", 3)}));
  s.put_unchecked(9, data::Value(data::BigDecimal::parse("-12345.67").value()));
  s.put_unchecked(10, data::Value(data::JavaDate{19000LL * 86400000}));   // 2022-01-08
  s.put_unchecked(11, data::Value(data::JavaDate{(13 * 3600 + 14 * 60 + 15) * 1000LL + 678}));
  s.put_unchecked(12, data::Value(data::JavaDate{1700000000123LL}));      // 2023-11-14 22:13:20.123 UTC
  // slot 13 (opt) stays null
  auto task = start_task(base_config("types"));
  task->put({record("types", 0, Data{schema, data::Value(s)})});
  CHECK(rows_text("SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = "
                  "'types' ORDER BY ordinal_position") ==
        "i8|smallint|NO\ni16|smallint|NO\ni32|integer|NO\ni64|bigint|NO\nf32|real|NO\nf64|double precision|NO\n"
        "b|boolean|NO\ns|text|NO\nby|bytea|NO\ndec|numeric|NO\nd|date|NO\nt|time without time zone|NO\n"
        "ts|timestamp without time zone|NO\nopt|integer|YES\n");
  CHECK(rows_text("SELECT i8, i16, i32, i64, f32, f64, b, s, encode(by, 'hex'), dec, d, t, ts, opt FROM types") ==
        "-8|-16000|2000000000|9000000000000000000|1.5|0.1|t|héllo 'quoted'|0001ff|-12345.67|2022-01-08|"
        "13:14:15.678|2023-11-14 22:13:20.123|NULL\n");
  task->stop();
}

TEST_CASE("postgres sink: a SQL error fails the put with PostgreSQL's message and rolls the whole put back") {
  server().query("CREATE TABLE typed (id BIGINT PRIMARY KEY, name BOOLEAN)");
  auto cfg = base_config("typed");
  cfg["auto.create"] = "false";
  auto task = start_task(cfg);
  // A STRING field meets a BOOLEAN column: PostgreSQL's message comes through.
  try {
    task->put({record("typed", 0, person(1, "not a bool"))});
    FAIL("put() did not throw");
  } catch (const RetriableError& e) {
    FAIL(std::string("a SQL error is not retriable: ") + e.what());
  } catch (const ConnectError& e) {
    CHECK_THAT(e.what(), Catch::Contains("column \"name\" is of type boolean but expression is of type text") &&
                             Catch::Contains("SQLSTATE 42804"));
  }
  CHECK(server().scalar("SELECT count(*) FROM typed") == "0");

  // One transaction per put: with batch.size=1 every row is its own
  // statement; the second fails (duplicate key in insert mode) and the
  // first, already executed, is rolled back with it.
  auto cfg2 = base_config("atomic");
  cfg2["batch.size"] = "1";
  auto task2 = start_task(cfg2);
  server().query("CREATE TABLE atomic (id BIGINT PRIMARY KEY, name TEXT)");
  task2->put({record("atomic", 0, person(5, "five"))});
  CHECK_THROWS_WITH(task2->put({record("atomic", 1, person(6, "six")), record("atomic", 2, person(5, "again"))}),
                    Catch::Contains("duplicate key value violates unique constraint"));
  CHECK(rows_text("SELECT id, name FROM atomic ORDER BY id") == "5|five\n");
  // The task keeps working after a failed put.
  task2->put({record("atomic", 3, person(7, "seven"))});
  CHECK(rows_text("SELECT id FROM atomic ORDER BY id") == "5\n7\n");
  task2->stop();
}

TEST_CASE("postgres sink: connection refused is a RetriableError until max.retries, then a ConnectError") {
  PostgresServer& pg = server();
  auto cfg = base_config("down");
  cfg["retry.backoff.ms"] = "0";
  cfg["max.retries"] = "2";
  pg.stop();
  auto task = start_task(cfg);  // start() does not connect
  CHECK_THROWS_AS(task->put({record("down", 0, person(1, "a"))}), RetriableError);
  CHECK_THROWS_WITH(task->put({record("down", 0, person(1, "a"))}),
                    Catch::Contains("could not connect to PostgreSQL at 127.0.0.1:" + std::to_string(pg.port())));
  try {
    task->put({record("down", 0, person(1, "a"))});
    FAIL("put() did not throw");
  } catch (const RetriableError&) {
    FAIL("the third failure in a row (max.retries=2) must not be retriable");
  } catch (const ConnectError& e) {
    CHECK_THAT(e.what(), Catch::Contains("gave up after 2 retries"));
  }
  // The database back: the same records go in (a new task, as the runtime
  // would restart a failed one; the retry count of a live one resets too).
  pg.start();
  auto task2 = start_task(cfg);
  task2->put({record("down", 0, person(1, "a"))});
  CHECK(pg.scalar("SELECT count(*) FROM down") == "1");
  // Lost mid-life: the server stops under an open connection.
  pg.stop();
  CHECK_THROWS_AS(task2->put({record("down", 1, person(2, "b"))}), RetriableError);
  pg.start();
  task2->put({record("down", 1, person(2, "b"))});  // reconnects
  CHECK(pg.scalar("SELECT count(*) FROM down") == "2");
  // Restarted between puts: the dropped idle connection is replaced at
  // once, with no failed put.
  pg.stop();
  pg.start();
  CHECK_NOTHROW(task2->put({record("down", 2, person(3, "c"))}));
  CHECK(pg.scalar("SELECT count(*) FROM down") == "3");
  task2->stop();
}

TEST_CASE("postgres sink: bad configs give per-key errors through the plugin registry's validation") {
  const auto& reg = PluginRegistry::builtin();
  REQUIRE(reg.find("PostgresSink"));
  REQUIRE(reg.find("PostgresSinkConnector"));
  CHECK(reg.find("PostgresSink")->class_name == postgres::kPostgresSinkClass);
  CHECK(reg.find("PostgresSink")->type == ConnectorType::Sink);

  auto errors_of = [&](const ConfigMap& c) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& e : reg.validate(c).configs)
      if (!e.value.errors.empty()) out[e.definition.name] = e.value.errors;
    return out;
  };
  ConfigMap good{{"name", "p"},
                 {"connector.class", "PostgresSink"},
                 {"topics", "t"},
                 {"connection.url", "jdbc:postgresql://db.example:5432/shop"},
                 {"connection.password", "s3cret"}};
  CHECK(errors_of(good).empty());
  auto v = reg.validate(good);
  for (const auto& e : v.configs)
    if (e.definition.name == "connection.password") CHECK(e.value.value == std::optional<std::string>("[hidden]"));

  auto bad = good;
  bad["insert.mode"] = "merge";
  bad["pk.mode"] = "row";
  bad["batch.size"] = "0";
  auto errs = errors_of(bad);
  REQUIRE(errs.count("insert.mode"));
  CHECK_THAT(errs["insert.mode"][0], Catch::Equals("Invalid value merge for configuration insert.mode: String must "
                                                   "be one of: insert, upsert, update"));
  REQUIRE(errs.count("pk.mode"));
  CHECK_THAT(errs["pk.mode"][0], Catch::Contains("String must be one of: none, kafka, record_key, record_value"));
  REQUIRE(errs.count("batch.size"));
  CHECK_THAT(errs["batch.size"][0], Catch::Contains("Value must be at least 1"));

  auto upsert = good;
  upsert["insert.mode"] = "upsert";
  errs = errors_of(upsert);
  REQUIRE(errs.count("pk.mode"));
  CHECK_THAT(errs["pk.mode"][0], Catch::Contains("insert.mode=upsert needs a primary key"));

  auto del = good;
  del["delete.enabled"] = "true";
  del["pk.mode"] = "record_value";
  errs = errors_of(del);
  REQUIRE(errs.count("delete.enabled"));
  CHECK_THAT(errs["delete.enabled"][0], Catch::Contains("Deletes are only supported for pk.mode record_key"));

  auto url = good;
  url["connection.url"] = "postgresql://host:notaport:x/db?bogus_option=1";
  errs = errors_of(url);
  REQUIRE(errs.count("connection.url"));
  CHECK_THAT(errs["connection.url"][0], Catch::Contains("not a PostgreSQL connection URI"));
  auto missing = good;
  missing.erase("connection.url");
  CHECK(errors_of(missing).count("connection.url"));

  auto kafka = good;
  kafka["pk.mode"] = "kafka";
  kafka["pk.fields"] = "a,b";
  CHECK(errors_of(kafka).count("pk.fields"));

  // The connector's start() refuses the same configs, naming the key.
  auto c = make_postgres_sink();
  CHECK_THROWS_WITH(c->start(upsert), Catch::Contains("pk.mode: insert.mode=upsert needs a primary key"));
  CHECK_THROWS_WITH(c->start(bad), Catch::Contains("insert.mode: Invalid value merge"));
  CHECK_NOTHROW(c->start(good));
  CHECK(c->task_configs(3).size() == 3);
}
