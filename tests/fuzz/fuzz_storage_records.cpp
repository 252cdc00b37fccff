// libFuzzer target: the decoders of the three internal topics' records
// (worker/storage/records.h), key and value, as the config, offset and
// status stores apply what they read. The first byte picks the topic
// (config, offsets, status); the bytes up to the first NUL are the record
// key and the rest its value. Beyond "never crash": whatever decodes must
// encode to a record that decodes to the same thing, so a worker can always
// read back what another one rewrote.
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "worker/storage/records.h"

namespace {

using namespace kc::storage;

void config_record(std::string_view key, std::string_view value) {
  auto k = parse_config_key(key);
  switch (k.kind) {
    case ConfigKeyKind::Connector: KC_FUZZ_CHECK(connector_config_key(k.name) == key); break;
    case ConfigKeyKind::Commit: KC_FUZZ_CHECK(commit_key(k.name) == key); break;
    case ConfigKeyKind::TargetState: KC_FUZZ_CHECK(target_state_key(k.name) == key); break;
    case ConfigKeyKind::RestartConnector: KC_FUZZ_CHECK(restart_key(k.name) == key); break;
    case ConfigKeyKind::TasksFencing: KC_FUZZ_CHECK(task_count_key(k.name) == key); break;
    case ConfigKeyKind::Task: {
      auto again = parse_config_key(task_config_key({k.name, k.task}));
      KC_FUZZ_CHECK(again.kind == ConfigKeyKind::Task && again.name == k.name && again.task == k.task);
      break;
    }
    case ConfigKeyKind::LoggerCluster: KC_FUZZ_CHECK(logger_cluster_key(k.name) == key); break;
    case ConfigKeyKind::SessionKey:
    case ConfigKeyKind::Unknown: break;
  }
  (void)addressable_connector_name(k.name);

  if (auto p = decode_properties(value)) {
    auto again = decode_properties(encode_properties(p.value()));
    KC_FUZZ_CHECK(again && again.value() == p.value());
  }
  if (auto c = decode_commit(value)) {
    auto again = decode_commit(encode_commit(c.value()));
    KC_FUZZ_CHECK(again && again.value() == c.value());
  }
  if (auto c = decode_task_count(value)) {
    KC_FUZZ_CHECK(c.value() >= 0);
    auto again = decode_task_count(encode_task_count(c.value()));
    KC_FUZZ_CHECK(again && again.value() == c.value());
  }
  if (auto s = decode_target_state(value)) {
    auto again = decode_target_state(encode_target_state(s.value()));
    KC_FUZZ_CHECK(again && again.value() == s.value());
  }
  if (auto r = decode_restart(value)) {
    auto again = decode_restart(encode_restart(r.value()));
    KC_FUZZ_CHECK(again && again.value().include_tasks == r.value().include_tasks &&
                  again.value().only_failed == r.value().only_failed);
  }
  if (auto l = decode_logger_level(value)) {  // KIP-976: a level name, canonical
    auto again = decode_logger_level(encode_logger_level(l.value()));
    KC_FUZZ_CHECK(again && again.value() == l.value());
  }
  if (auto s = decode_session_key(value)) {
    auto again = decode_session_key(encode_session_key(s.value()));
    KC_FUZZ_CHECK(again && again.value() == s.value());
  }
}

void offset_record(std::string_view key, std::string_view value) {
  auto k = decode_offset_key(key);
  if (k) {
    auto again = decode_offset_key(encode_offset_key(k.value().connector, k.value().partition));
    KC_FUZZ_CHECK(again && again.value().connector == k.value().connector &&
                  again.value().partition == k.value().partition);
  }
  // The value as OffsetBackingStore reads it, and as it is written back.
  auto v = decode_offset_value(value);
  if (v) {
    auto again = decode_offset_value(to_compact_json(v.value()));
    KC_FUZZ_CHECK(again && again.value() == v.value());
  }
  if (k && v) {
    // What a writer would store for the same offset reads back the same, or is refused.
    auto rec = encode_offset_record(k.value().connector, k.value().partition, v.value());
    if (rec && rec.value().value) {
      auto rk = decode_offset_key(rec.value().key);
      auto rv = decode_offset_value(*rec.value().value);
      KC_FUZZ_CHECK(rk && rv && rk.value().partition == k.value().partition && rv.value() == v.value());
    }
  }
}

void status_record(std::string_view key, std::string_view value) {
  if (auto t = parse_topic_status_key(key)) KC_FUZZ_CHECK(topic_status_key(t->first, t->second) == key);
  if (auto k = parse_status_key(key)) {
    KC_FUZZ_CHECK(k->connector.has_value() != k->task.has_value());
    auto again = parse_status_key(k->connector ? connector_status_key(*k->connector) : task_status_key(*k->task));
    KC_FUZZ_CHECK(again && again->connector == k->connector && again->task == k->task);
  }
  if (auto s = decode_status(value)) {
    auto again = decode_status(encode_status(s.value()));
    KC_FUZZ_CHECK(again && again.value() == s.value());
  }
  if (auto t = decode_topic_status(value)) {
    auto again = decode_topic_status(encode_topic_status(t.value()));
    KC_FUZZ_CHECK(again && again.value() == t.value());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  std::string_view value = kc::fuzz::as_text(data + 1, size - 1);
  std::string_view key = kc::fuzz::take_until(value, '\0', value);
  if (key.data() == value.data()) value = {};  // no NUL: a tombstone (key only)
  switch (which % 3) {
    case 0: config_record(key, value); break;
    case 1: offset_record(key, value); break;
    case 2: status_record(key, value); break;
  }
  return 0;
}
