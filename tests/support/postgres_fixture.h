#pragma once
// A throwaway PostgreSQL 15 server for tests: initdb in a temporary
// directory, the server on a free 127.0.0.1 port with its unix socket in
// that directory, trust authentication for user "kc". As root (CI) the
// server runs as the unprivileged `postgres` system user (from the
// postgresql-15 package; `nobody` otherwise) through runuser, since
// PostgreSQL refuses to run as root. Torn down (pg_ctl stop -m immediate,
// directory removed) by the destructor.
//
// Missing binaries are an error, not a skip: the constructor throws
// std::runtime_error naming the package to install. KC_PG_BIN overrides the
// binary directory (default /usr/lib/postgresql/15/bin).
//
// Header-only; needs libpq (kc_worker_connectors_postgres brings it).

#include "free_port.h"

#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kc::test {

class PostgresServer {
 public:
  PostgresServer() {
    const char* env = std::getenv("KC_PG_BIN");
    bin_ = env && *env ? env : "/usr/lib/postgresql/15/bin";
    for (const char* tool : {"initdb", "pg_ctl", "postgres"})
      if (!std::filesystem::exists(bin_ + "/" + tool))
        throw std::runtime_error("PostgreSQL 15 binaries not found: " + bin_ + "/" + tool +
                                 " is missing; install the Debian package postgresql-15 (scripts/setup does), or set "
                                 "KC_PG_BIN");
    char tmpl[] = "/tmp/kc-pg-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    if (geteuid() == 0) {
      user_ = getpwnam("postgres") ? "postgres" : "nobody";
      run("chown -R " + user_ + " " + dir_, false);
    }
    port_ = free_port();
    run(bin_ + "/initdb -D " + dir_ + "/data -U kc --auth=trust -E UTF8 --locale=C --no-sync > " + dir_ +
        "/initdb.log 2>&1");
    start();
  }

  ~PostgresServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  /// Starts the server (again) on the same port; waits until it accepts.
  void start() {
    run(bin_ + "/pg_ctl -D " + dir_ + "/data -w -t 60 -l " + dir_ + "/server.log -o \"-p " + std::to_string(port_) +
        " -k " + dir_ + " -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off\" start > " + dir_ +
        "/pg_ctl.log 2>&1");
    running_ = true;
  }

  /// Stops it at once (the connections break, as in a crash).
  void stop() {
    if (!running_) return;
    running_ = false;
    run(bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop > /dev/null 2>&1");
  }

  int port() const { return port_; }
  /// postgresql://kc@127.0.0.1:PORT/postgres
  std::string url() const { return "postgresql://kc@127.0.0.1:" + std::to_string(port_) + "/postgres"; }

  /// Runs `sql`; returns the rows as text (NULL = nullopt). Throws
  /// std::runtime_error with PostgreSQL's message on failure.
  std::vector<std::vector<std::optional<std::string>>> query(const std::string& sql) const {
    std::unique_ptr<PGconn, decltype(&PQfinish)> c(PQconnectdb(url().c_str()), &PQfinish);
    if (PQstatus(c.get()) != CONNECTION_OK)
      throw std::runtime_error("test connection failed: " + std::string(PQerrorMessage(c.get())));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c.get(), sql.c_str()), &PQclear);
    auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      throw std::runtime_error("query `" + sql + "` failed: " + PQresultErrorMessage(r.get()));
    std::vector<std::vector<std::optional<std::string>>> rows;
    for (int i = 0; i < PQntuples(r.get()); ++i) {
      auto& row = rows.emplace_back();
      for (int j = 0; j < PQnfields(r.get()); ++j)
        row.push_back(PQgetisnull(r.get(), i, j) ? std::nullopt : std::optional<std::string>(PQgetvalue(r.get(), i, j)));
    }
    return rows;
  }

  /// The single value of a one-row, one-column query ("" for NULL).
  std::string scalar(const std::string& sql) const {
    auto rows = query(sql);
    if (rows.size() != 1 || rows[0].size() != 1)
      throw std::runtime_error("query `" + sql + "` did not return one value");
    return rows[0][0].value_or("");
  }

 private:
  /// Runs a shell command, as the unprivileged user when root.
  void run(const std::string& cmd, bool as_user = true) const {
    std::string full = as_user && !user_.empty() ? "runuser -u " + user_ + " -- sh -c '" + cmd + "'" : cmd;
    if (std::system(full.c_str()) != 0) {
      std::string log;
      for (const char* f : {"/initdb.log", "/pg_ctl.log", "/server.log"}) {
        std::ifstream in(dir_ + f);
        std::stringstream ss;
        ss << in.rdbuf();
        if (!ss.str().empty()) log += std::string("\n--- ") + f + "\n" + ss.str();
      }
      throw std::runtime_error("PostgreSQL fixture: `" + full + "` failed" + log);
    }
  }

  std::string bin_;
  std::string dir_;
  std::string user_;  ///< "" = run as ourselves
  int port_ = 0;
  bool running_ = false;
};

}  // namespace kc::test
