// Config providers' allowed.paths (KIP-993), stricter than Kafka: the check
// runs on canonical paths, so a symlink or ".." that leads out of the
// allowed tree is refused, naming the path, what it resolves to and the
// rule. Uses real symlinks in a temporary directory.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "worker/providers/config_provider.h"

using kc::providers::ConfigMap;
using kc::providers::ConfigTransformer;
namespace fs = std::filesystem;

namespace {

struct TempTree {
  fs::path root;
  TempTree() : root(fs::temp_directory_path() / ("kc-allowed-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
    fs::create_directories(root / "allowed" / "secrets");
    fs::create_directories(root / "outside");
    std::ofstream(root / "allowed" / "db.properties") << "password=inside\n";
    std::ofstream(root / "allowed" / "secrets" / "token") << "inside-token";
    std::ofstream(root / "outside" / "db.properties") << "password=outside\n";
    std::ofstream(root / "outside" / "token") << "outside-token";
    // A file symlink and a directory symlink inside the tree that point out of it.
    fs::create_symlink(root / "outside" / "db.properties", root / "allowed" / "link.properties");
    fs::create_symlink(root / "outside", root / "allowed" / "linkdir");
    // A symlink inside the tree that stays inside (Kubernetes secret volumes look like this).
    fs::create_symlink(root / "allowed" / "db.properties", root / "allowed" / "alias.properties");
    // A directory provider's file that points out of the tree.
    fs::create_symlink(root / "outside" / "token", root / "allowed" / "secrets" / "escaped");
  }
  ~TempTree() { fs::remove_all(root); }
  std::string at(const std::string& rel) const { return (root / rel).string(); }
};

std::shared_ptr<const ConfigTransformer> limited(const TempTree& t) {
  auto r = ConfigTransformer::from_worker_config(
      {{"config.providers", "file,dir"},
       {"config.providers.file.class", "FileConfigProvider"},
       {"config.providers.file.param.allowed.paths", t.at("allowed")},
       {"config.providers.dir.class", "DirectoryConfigProvider"},
       {"config.providers.dir.param.allowed.paths", t.at("allowed")}});
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("allowed.paths: a symlinked file inside the tree that points outside is refused", "[providers]") {
  TempTree t;
  auto tr = limited(t);
  auto r = tr->transform({{"a", "${file:" + t.at("allowed/link.properties") + ":password}"}});
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "a");
  const std::string m = r.error().message;
  CHECK(m.find("The path " + t.at("allowed/link.properties") + " (resolved to " + t.at("outside/db.properties") +
               ") is not allowed to be accessed") != std::string::npos);
  CHECK(m.find("allowed.paths=" + t.at("allowed")) != std::string::npos);
  CHECK(m.find("outside\n") == std::string::npos);  // never the value
}

TEST_CASE("allowed.paths: a file under a symlinked directory and '..' out of the tree are refused", "[providers]") {
  TempTree t;
  auto tr = limited(t);
  CHECK_FALSE(tr->transform({{"a", "${file:" + t.at("allowed/linkdir/db.properties") + ":password}"}}));
  CHECK_FALSE(tr->transform({{"a", "${file:" + t.at("allowed/../outside/db.properties") + ":password}"}}));
  // ".." through a symlinked directory: lexically inside, really outside.
  CHECK_FALSE(tr->transform({{"a", "${file:" + t.at("allowed/linkdir/../outside/db.properties") + ":password}"}}));
  CHECK_FALSE(tr->transform({{"a", "${dir:" + t.at("allowed/linkdir") + ":token}"}}));
}

TEST_CASE("allowed.paths: symlinks that stay inside the tree still resolve", "[providers]") {
  TempTree t;
  auto tr = limited(t);
  auto r = tr->transform({{"a", "${file:" + t.at("allowed/alias.properties") + ":password}"},
                          {"b", "${file:" + t.at("allowed/./secrets/../db.properties") + ":password}"},
                          {"c", "${dir:" + t.at("allowed/secrets") + ":token}"}});
  REQUIRE(r);
  CHECK(r->config.at("a") == "inside");
  CHECK(r->config.at("b") == "inside");
  CHECK(r->config.at("c") == "inside-token");
}

TEST_CASE("allowed.paths: a directory provider refuses a file in it that links outside", "[providers]") {
  TempTree t;
  auto tr = limited(t);
  auto r = tr->transform({{"a", "${dir:" + t.at("allowed/secrets") + ":escaped}"}});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("(resolved to " + t.at("outside/token") + ") is not allowed to be accessed") !=
        std::string::npos);
}

TEST_CASE("allowed.paths: an allowed path that is itself a symlink is compared by its target", "[providers]") {
  TempTree t;
  fs::create_symlink(t.root / "allowed", t.root / "allowed-link");
  auto r = ConfigTransformer::from_worker_config({{"config.providers", "file"},
                                                  {"config.providers.file.class", "FileConfigProvider"},
                                                  {"config.providers.file.param.allowed.paths", t.at("allowed-link")}});
  REQUIRE(r);
  auto ok = (*r)->transform({{"a", "${file:" + t.at("allowed/db.properties") + ":password}"},
                             {"b", "${file:" + t.at("allowed-link/db.properties") + ":password}"}});
  REQUIRE(ok);
  CHECK(ok->config.at("a") == "inside");
  CHECK(ok->config.at("b") == "inside");
}

TEST_CASE("unresolved(): every placeholder that does not resolve, with key and provider", "[providers]") {
  TempTree t;
  auto tr = limited(t);
  auto errors = tr->unresolved({{"a", "${file:" + t.at("allowed/db.properties") + ":password}"},
                                {"b", "${file:" + t.at("allowed/link.properties") + ":password}"},
                                {"c", "${vault:secret/db:pw}"},
                                {"d", "${file:" + t.at("allowed/db.properties") + ":nokey}"},
                                {"e", "plain"}});
  using Kind = ConfigTransformer::Unresolved::Kind;
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].kind == Kind::Failed);
  CHECK(errors[0].error.field == "b");
  CHECK(errors[0].error.message.starts_with("Failed to resolve config provider file path " +
                                            t.at("allowed/link.properties") + " in 'b': The path "));
  CHECK(errors[1].kind == Kind::NotConfigured);
  CHECK(errors[1].error.field == "c");
  CHECK(errors[1].error.message == "${vault:secret/db:pw}: config provider vault is not configured "
                                   "(config.providers: file, dir)");
  CHECK(errors[2].kind == Kind::MissingKey);
  CHECK(errors[2].error.field == "d");
  CHECK(errors[2].error.message.find("config provider file has no key nokey at ") != std::string::npos);
}
