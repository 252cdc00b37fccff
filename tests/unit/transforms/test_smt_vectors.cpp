// SMT vectors: every case of smt-vectors.json (and of the files in
// KC_SMT_VECTORS, separated by ',' or ':') through TransformDryRun, the code
// path of `kconnectd transform`. vectors/kafka-deviations.json holds cases in
// the same notation for places where kconnectd once differed from Kafka's
// transforms, taken from Kafka's source. Compared as PIPELINE-VECTORS.md says:
// records structurally (Connect schema equality, Java value equality with
// maps unordered), errors by stage and top-level message.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include "tests/support/vector_file.h"
#include "worker/transforms/dry_run.h"

using namespace kc;
using namespace kc::transforms;
namespace nt = kc::data::notation;

namespace {

// Cases we knowingly do not reproduce, with the reason.
const std::map<std::string, std::string> kSkip = {};

std::string compare_records(const Json& got_j, const Json& want_j) {
  auto got = nt::record_from_json(got_j);
  auto want = nt::record_from_json(want_j);
  if (!got) return "bad output notation: " + got.error().to_string();
  if (!want) return "bad expected notation: " + want.error().to_string();
  const auto& g = got->record;
  const auto& w = want->record;
  std::string diff = "\n  got  " + got_j.dump() + "\n  want " + want_j.dump();
  if (g.topic != w.topic) return "topic differs" + diff;
  if (g.kafka_partition != w.kafka_partition) return "partition differs" + diff;
  if (g.timestamp != w.timestamp) return "timestamp differs" + diff;
  if (!data::schema_equals(g.key_schema, w.key_schema)) return "key schema differs" + diff;
  if (!(g.key == w.key)) return "key differs" + diff;
  if (!data::schema_equals(g.value_schema, w.value_schema)) return "value schema differs" + diff;
  if (!(g.value == w.value)) return "value differs" + diff;
  if (g.headers.size() != w.headers.size()) return "header count differs" + diff;
  for (size_t i = 0; i < g.headers.size(); ++i) {
    const auto& a = g.headers.list()[i];
    const auto& b = w.headers.list()[i];
    if (a.key != b.key || !data::schema_equals(a.schema, b.schema) || !(a.value == b.value))
      return "header " + std::to_string(i) + " differs" + diff;
  }
  if (got->sink && (g.original_topic != w.original_topic || g.kafka_offset != w.kafka_offset))
    return "sink fields differ" + diff;
  return "";
}

// Java's default toString ends in "@<hex hash>", which differs run to run.
// (Hand-written rather than std::regex: GCC 12's <regex> trips -Wmaybe-uninitialized under ASan -O2.)
std::string normalize_hash(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i + 1;
    if (s[i] == '@') while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j])) && !std::isupper(static_cast<unsigned char>(s[j]))) ++j;
    if (s[i] == '@' && j > i + 1) out += "@<hash>";
    else out.append(s, i, j - i);
    i = j;
  }
  return out;
}

// Empty = agreement; otherwise what differs.
std::string run_case(const Json& c) {
  Config config;
  config["transforms"] = "t";
  config["transforms.t.type"] = std::string(kTransformPackage) + c["transform"].get<std::string>();
  for (const auto& [k, v] : c["config"].items()) config["transforms.t." + k] = v.get<std::string>();
  if (c.contains("predicate")) {
    const Json& p = c["predicate"];
    config["predicates"] = "p";
    config["predicates.p.type"] = std::string(kPredicatePackage) + p["class"].get<std::string>();
    for (const auto& [k, v] : p["config"].items()) config["predicates.p." + k] = v.get<std::string>();
    config["transforms.t.predicate"] = "p";
    config["transforms.t.negate"] = p.value("negate", false) ? "true" : "false";
  }
  const Json& error = c["error"];
  std::string stage = error.is_null() ? "" : error["stage"].get<std::string>();
  std::string message = error.is_null() ? "" : error["message"].get<std::string>();

  std::vector<ConfigError> errors;
  auto dry = TransformDryRun::create(config, &errors);
  if (!dry) {
    std::string got_stage = errors.at(0).key.rfind("predicates.", 0) == 0 ? "configure-predicate" : "configure";
    if (stage.empty()) return "configure failed: " + errors[0].key + ": " + errors[0].message;
    if (got_stage != stage) return "stage " + got_stage + " != " + stage;
    if (normalize_hash(errors[0].message) != message) return "config error '" + errors[0].message + "' != '" + message + "'";
    return "";
  }
  if (stage == "configure" || stage == "configure-predicate") return "configure succeeded, expected: " + message;
  Json out = dry->process(c["input"]);
  if (!stage.empty()) {
    if (!out.is_object() || !out.contains("error")) return "succeeded, expected error: " + message + "\n  got " + out.dump();
    std::string got = out["error"]["message"].get<std::string>();
    if (out["error"]["stage"] != "apply") return "stage " + out["error"]["stage"].get<std::string>();
    return got == message ? "" : "error '" + got + "' != '" + message + "'";
  }
  if (out.is_object() && out.contains("error")) return "failed: " + out["error"].dump();
  if (c["output"].is_null()) return out.is_null() ? "" : "expected drop, got " + out.dump();
  if (out.is_null()) return "dropped, expected " + c["output"].dump();
  return compare_records(out, c["output"]);
}

// Runs the cases of `path` whose names start with `prefix` (all when empty).
kc::test::VectorOutcome run_file(const std::string& path, const std::string& prefix = "") {
  return kc::test::run_vector_file(
      path, run_case, [](const Json& c) { return kSkip.count(c.value("name", std::string("?"))) > 0; }, prefix);
}

}  // namespace

TEST_CASE("SMT vectors: smt-vectors.json", "[pipeline][vector]") {
  auto o = run_file(std::string(KC_SHARED_DIR) + "/testdata/smt-vectors.json");
  CHECK(o.total >= 183);
  CHECK(o.failures.empty());
}

TEST_CASE("SMT vectors: extra files from KC_SMT_VECTORS", "[pipeline][vector]") {
  const auto paths = kc::test::vector_files_from_env("KC_SMT_VECTORS");
  if (paths.empty()) SUCCEED("KC_SMT_VECTORS not set");
  for (const auto& path : paths) CHECK(run_file(path).failures.empty());
}

namespace {
const std::string kDeviations = std::string(KC_SOURCE_DIR) + "/tests/unit/transforms/vectors/kafka-deviations.json";
}  // namespace

TEST_CASE("Kafka deviations: SetSchemaMetadata passes a schemaless null key or value through", "[pipeline][vector]") {
  auto o = run_file(kDeviations, "SetSchemaMetadata");
  CHECK(o.total == 2);
  CHECK(o.failures.empty());
}

TEST_CASE("Kafka deviations: ExtractField V2 paths refuse an incomplete backtick pair and read escaped backticks",
          "[pipeline][vector]") {
  auto o = run_file(kDeviations, "ExtractField");
  CHECK(o.total == 5);
  CHECK(o.failures.empty());
}

TEST_CASE("Kafka deviations: Cast config errors use Kafka's texts", "[pipeline][vector]") {
  auto o = run_file(kDeviations, "Cast");
  CHECK(o.total == 4);
  CHECK(o.failures.empty());
}
