// Config providers (KIP-297, KIP-421, KIP-887, KIP-993): the file, directory
// and environment providers, placeholder resolution as Kafka's
// ConfigTransformer does it, the reverse transform of task configs, and
// their use by the Worker and by validation.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/worker_test_util.h"
#include "worker/herder/plugin_config.h"
#include "worker/providers/config_provider.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"

using kc::providers::ConfigMap;
using kc::providers::ConfigTransformer;
namespace fs = std::filesystem;

namespace {

/// A temporary directory removed at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& file, const std::string& text) const { std::ofstream(path / file) << text; }
};

std::shared_ptr<const ConfigTransformer> transformer(const ConfigMap& worker) {
  auto t = ConfigTransformer::from_worker_config(worker);
  REQUIRE(t);
  return *t;
}

const ConfigMap kAllProviders{
    {"config.providers", "file,dir,env"},
    {"config.providers.file.class", "org.apache.kafka.common.config.provider.FileConfigProvider"},
    {"config.providers.dir.class", "org.apache.kafka.common.config.provider.DirectoryConfigProvider"},
    {"config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider"}};

}  // namespace

TEST_CASE("file, dir and env placeholders resolve, unknown ones stay as written", "[providers]") {
  TempDir dir("kc-providers");
  dir.write("db.properties", "user=alice\npassword = s3cret\n");
  fs::create_directories(dir.path / "secrets");
  dir.write("secrets/token", "tok-123");
  ::setenv("KC_PROVIDER_TEST_TOPIC", "orders", 1);
  auto t = transformer(kAllProviders);
  CHECK(t->provider_names() == std::vector<std::string>{"file", "dir", "env"});
  const std::string props = (dir.path / "db.properties").string();
  const ConfigMap raw{{"connection.user", "${file:" + props + ":user}"},
                      {"connection.url", "postgres://${file:" + props + ":user}:${file:" + props + ":password}@db"},
                      {"token", "${dir:" + (dir.path / "secrets").string() + ":token}"},
                      {"topics", "${env:KC_PROVIDER_TEST_TOPIC}"},
                      {"missing.key", "${file:" + props + ":nope}"},
                      {"unknown.provider", "${vault:secret/db:password}"},
                      {"plain", "no placeholder ${here}"}};
  auto r = t->transform(raw);
  REQUIRE(r);
  CHECK(r->config.at("connection.user") == "alice");
  CHECK(r->config.at("connection.url") == "postgres://alice:s3cret@db");
  CHECK(r->config.at("token") == "tok-123");
  CHECK(r->config.at("topics") == "orders");
  CHECK(r->config.at("missing.key") == raw.at("missing.key"));
  CHECK(r->config.at("unknown.provider") == raw.at("unknown.provider"));
  CHECK(r->config.at("plain") == "no placeholder ${here}");
  CHECK(r->resolved_keys == std::set<std::string>{"connection.user", "connection.url", "token", "topics"});
  CHECK(ConfigTransformer::has_placeholders(raw));
  CHECK_FALSE(ConfigTransformer::has_placeholders({{"a", "b"}, {"c", "${nocolon}"}}));

  // Task configs that copy a resolved value get the placeholder back.
  std::vector<ConfigMap> tasks{{{"topics", "orders"}, {"connection.user", "alice"}, {"task.id", "0"}},
                               {{"topics", "other"}}};
  kc::providers::restore_placeholders(raw, *r, tasks);
  CHECK(tasks[0].at("topics") == "${env:KC_PROVIDER_TEST_TOPIC}");
  CHECK(tasks[0].at("connection.user") == raw.at("connection.user"));
  CHECK(tasks[0].at("task.id") == "0");
  CHECK(tasks[1].at("topics") == "other");  // not the resolved value: kept
}

TEST_CASE("provider failures and bad provider settings are clear errors", "[providers]") {
  TempDir dir("kc-providers-err");
  auto t = transformer(kAllProviders);
  auto unreadable = t->transform({{"file", "${file:" + (dir.path / "absent.properties").string() + ":k}"}});
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().field == "file");
  CHECK(unreadable.error().message ==
        "Failed to resolve config provider file path " + (dir.path / "absent.properties").string() +
            " in 'file': Could not read properties from file " + (dir.path / "absent.properties").string());
  auto env_path = t->transform({{"x", "${env:some/path:HOME}"}});
  REQUIRE_FALSE(env_path);
  CHECK(env_path.error().message.find("does not support paths") != std::string::npos);

  // allowed.paths (KIP-993) and allowlist.pattern (KIP-887).
  dir.write("ok.properties", "k=v\n");
  ::setenv("KC_PROVIDER_ALLOWED", "yes", 1);
  ::setenv("KC_PROVIDER_DENIED", "no", 1);
  auto limited = transformer({{"config.providers", "file,env"},
                              {"config.providers.file.class", "FileConfigProvider"},
                              {"config.providers.file.param.allowed.paths", dir.path.string()},
                              {"config.providers.env.class", "EnvVarConfigProvider"},
                              {"config.providers.env.param.allowlist.pattern", "KC_PROVIDER_ALLOW.*"}});
  auto inside = limited->transform({{"a", "${file:" + (dir.path / "ok.properties").string() + ":k}"}});
  REQUIRE(inside);
  CHECK(inside->config.at("a") == "v");
  auto outside = limited->transform({{"a", "${file:" + (dir.path / ".." / "x.properties").string() + ":k}"}});
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message.find("is not allowed to be accessed") != std::string::npos);
  auto env = limited->transform({{"a", "${env:KC_PROVIDER_ALLOWED}"}, {"b", "${env:KC_PROVIDER_DENIED}"}});
  REQUIRE(env);
  CHECK(env->config.at("a") == "yes");
  CHECK(env->config.at("b") == "${env:KC_PROVIDER_DENIED}");

  auto unknown = ConfigTransformer::from_worker_config({{"config.providers", "vault"},
                                                        {"config.providers.vault.class", "com.example.Vault"}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().field == "config.providers.vault.class");
  CHECK(unknown.error().message.find("unknown config provider class") != std::string::npos);
  auto no_class = ConfigTransformer::from_worker_config({{"config.providers", "file"}});
  REQUIRE_FALSE(no_class);
  CHECK(no_class.error().field == "config.providers.file.class");
  auto relative = ConfigTransformer::from_worker_config({{"config.providers", "file"},
                                                         {"config.providers.file.class", "FileConfigProvider"},
                                                         {"config.providers.file.param.allowed.paths", "etc"}});
  REQUIRE_FALSE(relative);
  CHECK(relative.error().field == "config.providers.file.param.allowed.paths");
  // No config.providers: nothing is resolved.
  auto none = transformer({});
  CHECK(none->transform({{"a", "${env:HOME}"}})->config.at("a") == "${env:HOME}");
}

TEST_CASE("validation sees resolved values but shows what was written, passwords are [hidden]", "[providers]") {
  TempDir dir("kc-providers-validate");
  dir.write("c.properties", "batch=oops\ntopic=lines\n");
  auto t = transformer(kAllProviders);
  const std::string props = (dir.path / "c.properties").string();
  const ConfigMap config{{"name", "c"},
                         {"connector.class", "FileStreamSource"},
                         {"file", "/tmp/in.txt"},
                         {"topic", "${file:" + props + ":topic}"},
                         {"batch.size", "${file:" + props + ":batch}"}};
  auto v = kc::herder::validate_resolved(kc::connectors::PluginRegistry::builtin(), t.get(), config);
  auto entry = [&](const std::string& key) {
    for (const auto& e : v.configs)
      if (e.definition.name == key) return e;
    FAIL("no entry " << key);
    return v.configs.front();
  };
  CHECK(entry("topic").value.value == config.at("topic"));
  CHECK(entry("topic").value.errors.empty());
  CHECK(entry("batch.size").value.value == config.at("batch.size"));  // the secret-bearing text, not "oops"
  REQUIRE(entry("batch.size").value.errors.size() == 1);
  CHECK(v.error_count == 1);

  auto failed = kc::herder::validate_resolved(kc::connectors::PluginRegistry::builtin(), t.get(),
                                              {{"name", "c"},
                                               {"connector.class", "FileStreamSource"},
                                               {"file", "${file:/nonexistent/x.properties:f}"},
                                               {"topic", "t"}});
  CHECK(failed.error_count >= 1);
  bool named = false;
  for (const auto& e : failed.configs)
    for (const auto& m : e.value.errors)
      named = named || (e.definition.name == "file" && m.find("Could not read properties") != std::string::npos);
  CHECK(named);

  // A PASSWORD key's value never leaves validation.
  kc::connectors::ConfigKeyDef pw;
  pw.name = "connection.password";
  pw.type = kc::connectors::ConfigType::Password;
  auto hidden = kc::connectors::validate_config("x", {pw}, {}, {{"connection.password", "s3cret"}});
  REQUIRE(hidden.configs.size() == 1);
  CHECK(hidden.configs[0].value.value == std::optional<std::string>("[hidden]"));
}

TEST_CASE("the worker resolves placeholders when a connector and its tasks start", "[providers]") {
  TempDir dir("kc-providers-worker");
  const auto out = dir.path / "out.txt";
  dir.write("sink.properties", "file=" + out.string() + "\n");
  ::setenv("KC_PROVIDER_SINK_TOPIC", "lines", 1);
  auto m = kc::test::start_mock_cluster(1, {{"lines", 1}});
  {
    auto p = kc::storage::Producer::create(m->client_props());
    REQUIRE(p);
    REQUIRE((*p)->send_and_wait("lines", {{"k", std::string("one")}, {"k", std::string("two")}}, 20000));
  }
  kc::runtime::WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  o.config_transformer = transformer(kAllProviders);
  kc::runtime::Worker w(o, nullptr, nullptr);
  const ConfigMap config{{"connector.class", "FileStreamSink"},
                         {"topics", "${env:KC_PROVIDER_SINK_TOPIC}"},
                         {"file", "${file:" + (dir.path / "sink.properties").string() + ":file}"}};
  REQUIRE(w.start_connector("snk", config, kc::storage::TargetState::Started));
  auto tasks = w.connector_task_configs("snk", 10000);
  REQUIRE(tasks);
  REQUIRE(tasks->size() == 1);
  // What goes to the config topic keeps the placeholders.
  CHECK((*tasks)[0].at("file") == config.at("file"));
  CHECK((*tasks)[0].at("topics") == config.at("topics"));
  REQUIRE(w.start_task({"snk", 0}, config, (*tasks)[0], kc::storage::TargetState::Started));
  auto lines = [&] {
    std::ifstream in(out);
    std::vector<std::string> l;
    for (std::string s; std::getline(in, s);) l.push_back(s);
    return l;
  };
  for (int i = 0; i < 1500 && lines().size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(lines() == std::vector<std::string>{"one", "two"});

  // A provider failure fails that task's start with the reason; the worker goes on.
  ConfigMap broken = config;
  broken["file"] = "${file:" + (dir.path / "absent.properties").string() + ":file}";
  auto st = w.start_task({"broken", 0}, broken, broken, kc::storage::TargetState::Started);
  REQUIRE_FALSE(st);
  CHECK(st.error().field == "file");
  CHECK(st.error().message.find("Could not read properties from file") != std::string::npos);
  auto cst = w.start_connector("broken", broken, kc::storage::TargetState::Started);
  REQUIRE_FALSE(cst);
  CHECK(cst.error().message.find("Could not read properties from file") != std::string::npos);
  w.stop_all();
}
