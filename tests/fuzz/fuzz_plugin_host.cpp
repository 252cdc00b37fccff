// libFuzzer target: the plugin host's handling of what a C plugin returns
// (worker/plugins/plugin_host.cpp, ABI of include/kconnectd/plugin.h).
// A fake plugin, registered as a real one is, runs the input as a program of
// host-API calls: its connector's task_configs builds task configs, and its
// source task's poll builds records (schemas, values, headers, source
// partitions and offsets). The worker side then treats the output as the
// runtime does: task configs are encoded as config-topic records and read
// back; records go through JsonConverter, and their partition and offset
// are encoded as offsets-topic key and value and read back.
//
// The program only passes handles the plugin owns or was given (as a
// correct plugin does), but any mix of kinds, schemas, names and bytes.
// Opcodes are listed in `run` below; every operand comes from the input.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <kconnectd/plugin.h>

#include "tests/fuzz/fuzz_input.h"
#include "worker/converters/json_converter.h"
#include "worker/plugins/plugin_host.h"
#include "worker/storage/records.h"

namespace {

using namespace kc;

const kc_host_api* host = nullptr;

/// Reads operands from the program; past its end everything reads as 0.
struct Program {
  std::string_view bytes;
  uint8_t u8() {
    if (bytes.empty()) return 0;
    auto b = static_cast<uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    return b;
  }
  int64_t i64(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | u8();
    return static_cast<int64_t>(v);
  }
  /// A length byte (0..31) and that many bytes, NUL-free: C strings.
  std::string str() {
    size_t n = u8() % 32;
    std::string s(bytes.substr(0, n));
    bytes.remove_prefix(s.size());
    for (auto& c : s)
      if (c == '\0') c = '0';
    return s;
  }
  /// Raw bytes (NULs kept), for value_set_string / bytes / decimal.
  std::string raw() {
    size_t n = u8() % 32;
    std::string s(bytes.substr(0, n));
    bytes.remove_prefix(s.size());
    return s;
  }
};

Program program;  // the current input (one at a time)

constexpr size_t kSlots = 4;
constexpr size_t kMaxCopies = 8;

/// What the program has made; everything owned is freed at the end.
struct Slots {
  std::array<kc_value*, kSlots> values{};
  std::array<const kc_schema*, kSlots> schemas{};  // NULL = no schema
  std::array<bool, kSlots> schema_owned{};
  std::array<kc_schema_builder*, kSlots> builders{};
  std::array<kc_json*, kSlots> jsons{};
  size_t copies = 0;  // value_copy calls so far (at most kMaxCopies)

  Slots() {
    for (auto& v : values) v = host->value_new();
    for (auto& j : jsons) j = host->json_new();
  }
  ~Slots() {
    for (auto* v : values) host->value_free(v);
    for (size_t i = 0; i < kSlots; ++i) set_schema(i, nullptr, false);
    for (auto* b : builders)
      if (b) host->schema_builder_free(b);
    for (auto* j : jsons) host->json_free(j);
  }
  void set_schema(size_t i, const kc_schema* s, bool owned) {
    if (schema_owned[i] && schemas[i]) host->schema_release(schemas[i]);
    schemas[i] = s;
    schema_owned[i] = owned;
  }
};

/// Schema and value opcodes (shared by both phases). Returns false for an
/// opcode it does not know.
bool schema_or_value_op(uint8_t op, Slots& s) {
  auto slot = [] { return program.u8() % kSlots; };
  switch (op) {
    case 0: {  // predefined schema
      auto i = slot();
      s.set_schema(i, host->schema_predefined(static_cast<kc_schema_type>(program.u8() % 12), program.u8() & 1),
                   false);
      return true;
    }
    case 1: s.set_schema(slot(), nullptr, false); return true;
    case 2: {  // builder: new / array / map / logical
      auto i = slot();
      if (s.builders[i]) host->schema_builder_free(s.builders[i]);
      switch (program.u8() % 4) {
        case 0: s.builders[i] = host->schema_builder_new(static_cast<kc_schema_type>(program.u8() % 12)); break;
        case 1: {
          auto v = s.schemas[slot()];
          s.builders[i] = v ? host->schema_builder_array(v) : nullptr;
          break;
        }
        case 2: {
          auto k = s.schemas[slot()];
          auto v = s.schemas[slot()];
          s.builders[i] = k && v ? host->schema_builder_map(k, v) : nullptr;
          break;
        }
        default: {
          static const char* const names[] = {"org.apache.kafka.connect.data.Decimal",
                                              "org.apache.kafka.connect.data.Date",
                                              "org.apache.kafka.connect.data.Time",
                                              "org.apache.kafka.connect.data.Timestamp"};
          auto name = names[program.u8() % 4];
          s.builders[i] = host->schema_builder_logical(name, static_cast<int32_t>(program.i64(1)) - 8);
        }
      }
      return true;
    }
    case 3: {  // builder setters
      auto* b = s.builders[slot()];
      auto what = program.u8() % 6;
      if (!b) return true;
      switch (what) {
        case 0: host->schema_builder_optional(b); break;
        case 1: host->schema_builder_name(b, program.str().c_str()); break;
        case 2: host->schema_builder_version(b, static_cast<int32_t>(program.i64(4))); break;
        case 3: host->schema_builder_doc(b, program.str().c_str()); break;
        case 4: {
          auto k = program.str();
          host->schema_builder_parameter(b, k.c_str(), program.str().c_str());
          break;
        }
        default: {
          auto name = program.str();
          auto fs = s.schemas[slot()];
          if (fs) host->schema_builder_field(b, name.c_str(), fs);
        }
      }
      return true;
    }
    case 4: {  // build into a schema slot
      auto bi = slot();
      auto si = slot();
      if (!s.builders[bi]) return true;
      auto* built = host->schema_build(s.builders[bi]);
      s.builders[bi] = nullptr;  // freed by schema_build
      if (built) s.set_schema(si, built, true);
      return true;
    }
    case 5: {  // scalar setters
      auto* v = s.values[slot()];
      switch (program.u8() % 13) {
        case 0: host->value_set_null(v); break;
        case 1: host->value_set_int8(v, static_cast<int8_t>(program.u8())); break;
        case 2: host->value_set_int16(v, static_cast<int16_t>(program.i64(2))); break;
        case 3: host->value_set_int32(v, static_cast<int32_t>(program.i64(4))); break;
        case 4: host->value_set_int64(v, program.i64(8)); break;
        case 5: {
          auto bits = static_cast<uint32_t>(program.i64(4));
          float f;
          static_assert(sizeof f == sizeof bits);
          __builtin_memcpy(&f, &bits, sizeof f);
          host->value_set_float32(v, f);
          break;
        }
        case 6: {
          auto bits = static_cast<uint64_t>(program.i64(8));
          double d;
          __builtin_memcpy(&d, &bits, sizeof d);
          host->value_set_float64(v, d);
          break;
        }
        case 7: host->value_set_boolean(v, program.u8() & 1); break;
        case 8: {
          auto r = program.raw();
          host->value_set_string(v, r.data(), r.size());
          break;
        }
        case 9: {
          auto r = program.raw();
          host->value_set_bytes(v, r.data(), r.size());
          break;
        }
        case 10: {
          auto r = program.raw();
          host->value_set_decimal(v, r.data(), r.size(), static_cast<int32_t>(program.i64(1)) - 8);
          break;
        }
        case 11: host->value_set_date(v, program.i64(8)); break;
        default: (program.u8() & 1) ? host->value_set_array(v) : host->value_set_map(v);
      }
      return true;
    }
    case 6: {  // containers: struct of a schema, append, put, struct put, copy
      auto* a = s.values[slot()];
      auto* b = s.values[slot()];
      auto* c = s.values[slot()];
      switch (program.u8() % 5) {
        case 0: {
          auto sc = s.schemas[slot()];
          if (sc) (void)host->value_set_struct(a, sc);
          break;
        }
        case 1:
          if (a != b) (void)host->value_array_append(a, b);
          break;
        case 2:
          if (a != b && a != c && b != c) (void)host->value_map_put(a, b, c);
          break;
        case 3:
          if (a != b) (void)host->value_struct_put(a, program.str().c_str(), b);
          break;
        default:
          // Each copy can double a value (copy a into b, append b to a), so
          // k copies make 2^k elements, and every later reader (to_string,
          // JsonConverter) is linear in that. A real plugin that does so is
          // bounded by connector.call.timeout.ms, not by the host; the
          // program stops at 8 copies so that a run measures the host, not
          // the size of a 2^k value.
          if (a != b && s.copies < kMaxCopies) host->value_copy(a, b), ++s.copies;
      }
      return true;
    }
    case 7: {  // readers a plugin may call on its own values
      auto* v = s.values[slot()];
      (void)host->value_kind(v);
      char* text = host->value_to_string(v);
      host->string_free(text);
      return true;
    }
    default: return false;
  }
}

kc_status task_configs_fn(void*, int32_t max_tasks, kc_task_configs* out) {
  Slots s;
  kc_config* cur = nullptr;
  int made = 0;
  while (!program.bytes.empty()) {
    auto op = program.u8() % 4;
    if (op == 0 && made < max_tasks + 2) {  // a plugin may return more than it was asked for
      cur = host->task_configs_add(out);
      ++made;
    } else if (op == 1 && cur) {
      auto k = program.str();
      host->config_set(cur, k.c_str(), program.str().c_str());
    } else if (op == 2) {
      return KC_OK;  // the rest of the program is the task's poll
    } else if (op == 3) {
      host->set_error(program.str().c_str());
      if (program.u8() == 0xEE) return KC_ERROR;
    }
  }
  return KC_OK;
}

kc_status poll_fn(void*, kc_source_records* out) {
  Slots s;
  kc_source_record* r = nullptr;
  int records = 0;
  while (!program.bytes.empty()) {
    auto op = program.u8() % 16;
    if (schema_or_value_op(op, s)) continue;
    auto slot = [] { return program.u8() % kSlots; };
    switch (op) {
      case 8:
        if (records < 16) r = host->source_records_add(out), ++records;
        break;
      case 9:
        if (r) host->source_record_set_topic(r, program.str().c_str());
        break;
      case 10:
        if (r) host->source_record_set_partition(r, static_cast<int32_t>(program.i64(4)));
        break;
      case 11: {
        auto sc = s.schemas[slot()];
        auto* v = s.values[slot()];
        if (!r) break;
        (program.u8() & 1) ? host->source_record_set_key(r, sc, v) : host->source_record_set_value(r, sc, v);
        break;
      }
      case 12: {
        auto* j = s.jsons[slot()];
        auto k = program.str();
        switch (program.u8() % 4) {
          case 0: host->json_set_string(j, k.c_str(), program.str().c_str()); break;
          case 1: host->json_set_int64(j, k.c_str(), program.i64(8)); break;
          case 2: {
            auto bits = static_cast<uint64_t>(program.i64(8));
            double d;
            __builtin_memcpy(&d, &bits, sizeof d);
            host->json_set_double(j, k.c_str(), d);
            break;
          }
          default: host->json_set_boolean(j, k.c_str(), program.u8() & 1);
        }
        break;
      }
      case 13: {
        auto* j = s.jsons[slot()];
        if (r) host->source_record_set_source_partition(r, j);
        break;
      }
      case 14: {
        auto k = program.str();
        if (!r) break;
        auto* off = host->source_record_source_offset(r);
        host->json_set_int64(off, k.c_str(), program.i64(8));
        break;
      }
      default: {
        auto k = program.str();
        auto sc = s.schemas[slot()];
        auto* v = s.values[slot()];
        if (r) host->headers_add(host->source_record_headers(r), k.c_str(), sc, v);
      }
    }
  }
  return KC_OK;
}

kc_status ok_self(void*, void** self) {
  *self = &program;
  return KC_OK;
}
kc_status ok_create(void*, const kc_connector_context*, void** self) {
  *self = &program;
  return KC_OK;
}
kc_status ok_start(void*, const kc_config*) { return KC_OK; }
kc_status ok_task_start(void*, const kc_config*, const kc_source_task_context*) { return KC_OK; }
kc_status ok_stop(void*) { return KC_OK; }
void no_destroy(void*) {}

const kc_source_task_class source_task = {
    sizeof(kc_source_task_class), ok_self, ok_task_start, poll_fn, nullptr, nullptr, ok_stop, no_destroy,
};

kc_status register_fuzz_plugin(const kc_host_api* h, kc_registrar* reg) {
  host = h;
  static kc_connector_class cls{};
  cls.struct_size = sizeof cls;
  cls.class_name = "fuzz.FuzzSourceConnector";
  cls.type = KC_SOURCE;
  cls.version = "1";
  cls.create = ok_create;
  cls.start = ok_start;
  cls.task_configs = task_configs_fn;
  cls.stop = ok_stop;
  cls.destroy = no_destroy;
  cls.source_task = &source_task;
  return h->register_connector(reg, &cls);
}

struct Context : connectors::SourceTaskContext {
  std::string name = "fuzz";
  std::optional<connectors::OrderedJson> offset(const connectors::OrderedJson&) const override { return std::nullopt; }
  const std::string& connector_name() const override { return name; }
  int32_t task_number() const override { return 0; }
};

connectors::PluginRegistry& registry() {
  static auto* reg = [] {
    auto* r = new connectors::PluginRegistry();
    auto st = connectors::register_plugin(&register_fuzz_plugin, "fuzz", *r);
    KC_FUZZ_CHECK(st.ok());
    return r;
  }();
  return *reg;
}

converters::JsonConverter& converter() {
  static auto* c = [] {
    auto* conv = new converters::JsonConverter();
    KC_FUZZ_CHECK(conv->configure({{"schemas.enable", "true"}}, false).ok());
    return conv;
  }();
  return *c;
}

/// What the runtime does with one polled record.
void produce(const connectors::SourceRecord& r) {
  auto& conv = converter();
  (void)conv.from_connect(r.topic, r.key.schema, r.key.value);
  (void)conv.from_connect(r.topic, r.value.schema, r.value.value);
  for (const auto& h : r.headers.list()) (void)conv.from_connect_header(r.topic, h.key, h.schema, h.value);
  // The offsets-topic record the runtime would write: refused with a reason,
  // or read back as it was.
  auto rec = storage::encode_offset_record("fuzz", *r.source_partition, r.source_offset);
  if (!rec) return;
  auto key = storage::decode_offset_key(rec.value().key);
  KC_FUZZ_CHECK(key && key.value().partition == *r.source_partition);
  auto offset = storage::decode_offset_value(*rec.value().value);
  KC_FUZZ_CHECK(offset && offset.value() == r.source_offset);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  program.bytes = kc::fuzz::as_text(data, size);
  auto conn = registry().create("fuzz.FuzzSourceConnector");
  KC_FUZZ_CHECK(conn.ok());
  auto& c = *conn.value();
  c.start({{"name", "fuzz"}, {"connector.class", "fuzz.FuzzSourceConnector"}});
  // As the leader generates them: tasks.max 2 enforced, under the worker's
  // cap; more than 2 configs is an error, never a longer list.
  std::vector<connectors::ConfigMap> configs;
  try {
    connectors::TasksMax tasks;
    tasks.max_tasks = 2;
    tasks.enforce = true;
    auto generated = connectors::generate_task_configs(c, "fuzz", tasks, 8);
    if (!generated) return 0;
    configs = std::move(generated).value();
  } catch (const connectors::ConnectError&) {
    return 0;
  }
  KC_FUZZ_CHECK(configs.size() <= 2);
  for (const auto& tc : configs) {
    // The leader writes each task config to the config topic (unless the
    // writer's check refuses it); every worker reads it back.
    if (storage::config_map_error(tc)) continue;
    auto back = storage::decode_properties(storage::encode_properties(tc));
    KC_FUZZ_CHECK(back && back.value() == tc);
  }
  auto task = c.create_source_task();
  KC_FUZZ_CHECK(task != nullptr);
  Context ctx;
  task->start(configs.empty() ? connectors::ConfigMap{} : configs[0], ctx);
  for (const auto& r : task->poll()) produce(r);
  task->stop();
  c.stop();
  return 0;
}
