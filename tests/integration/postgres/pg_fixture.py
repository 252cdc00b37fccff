"""A throwaway PostgreSQL 15 for process-level tests (the Python twin of
tests/support/postgres_fixture.h): initdb in a temporary directory, the
server on a free 127.0.0.1 port with its unix socket in that directory,
trust authentication for user "kc". As root (CI) it runs as the `postgres`
system user (or `nobody`) through runuser; PostgreSQL refuses root.

Missing binaries raise RuntimeError naming the package (postgresql-15):
the test fails, it does not skip. KC_PG_BIN overrides the binary directory.
Python 3 standard library only.
"""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import free_port  # noqa: E402


class PostgresServer:
    def __init__(self):
        self.bin = os.environ.get("KC_PG_BIN") or "/usr/lib/postgresql/15/bin"
        for tool in ("initdb", "pg_ctl", "postgres"):
            if not os.path.exists(os.path.join(self.bin, tool)):
                raise RuntimeError(f"PostgreSQL 15 binaries not found: {self.bin}/{tool} is missing; install the "
                                   "Debian package postgresql-15 (scripts/setup does), or set KC_PG_BIN")
        self.psql = shutil.which("psql") or os.path.join(self.bin, "psql")
        self.dir = tempfile.mkdtemp(prefix="kc-pg-")
        self.user = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
                self.user = "postgres"
            except KeyError:
                self.user = "nobody"
            subprocess.run(["chown", "-R", self.user, self.dir], check=True)
        self.port = free_port()
        self.url = f"postgresql://kc@127.0.0.1:{self.port}/postgres"
        self.running = False
        self._run([f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-U", "kc", "--auth=trust", "-E", "UTF8",
                   "--locale=C", "--no-sync"], "initdb.log")
        self.start()

    def _run(self, args, log):
        if self.user:
            args = ["runuser", "-u", self.user, "--"] + args
        with open(os.path.join(self.dir, log), "ab") as out:
            r = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            text = ""
            for f in ("initdb.log", "pg_ctl.log", "server.log"):
                p = os.path.join(self.dir, f)
                if os.path.exists(p):
                    text += f"\n--- {f}\n" + open(p, errors="replace").read()
            raise RuntimeError(f"PostgreSQL fixture: {' '.join(args)} failed (exit {r.returncode}){text}")

    def start(self):
        self._run([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-w", "-t", "60", "-l", f"{self.dir}/server.log",
                   "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c full_page_writes=off", "start"], "pg_ctl.log")
        self.running = True

    def stop(self):
        if self.running:
            self.running = False
            self._run([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop"],
                      "pg_ctl.log")

    def query(self, sql):
        """Rows of `sql` as lists of strings (psql -At); raises on error."""
        r = subprocess.run([self.psql, "-X", "-At", "-F", "|", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c", sql],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"psql `{sql}` failed: {r.stderr.strip()}")
        return [line.split("|") for line in r.stdout.splitlines() if line]

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
