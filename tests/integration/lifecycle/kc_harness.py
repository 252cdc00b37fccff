"""Shared harness of the process-level tests: a `kconnectd mock-broker`
and `kconnectd run` workers on free ports, driven over REST.

Python 3 standard library only. `failures` collects failed checks.
"""
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# Worker defaults (a Worker's `overrides` change them per test).
SESSION_TIMEOUT_MS = 10000
HEARTBEAT_MS = 1000
REBALANCE_DELAY_MS = 2000
GRACEFUL_MS = 5000

T0 = time.monotonic()
failures = []


class Abort(Exception):
    """A step the rest of the test depends on failed."""


def say(msg):
    print(f"[{time.monotonic() - T0:7.2f}s] {msg}", flush=True)


def check(cond, msg):
    if cond:
        say(f"ok: {msg}")
    else:
        say(f"FAIL: {msg}")
        failures.append(msg)
    return cond


_ports_handed_out = set()


def _ephemeral_low():
    """The first port of the kernel's ephemeral range (outgoing connections
    take their local port from it); 32768 when it cannot be read."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A port on 127.0.0.1 that is free now, for a listener that must be
    named before it starts (a worker's advertised URL). Chosen at random
    below the ephemeral range: a port from bind(0) is an ephemeral one, and
    any outgoing connection of a parallel test may take it as its local
    port before the listener binds it (CI: "Address already in use")."""
    high = max(_ephemeral_low() - 1, 20000)
    low = 10000 if high > 12000 else 1024
    for _ in range(200):
        port = random.randint(low, high)
        if port in _ports_handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _ports_handed_out.add(port)
        return port
    raise RuntimeError(f"no free port on 127.0.0.1 in {low}..{high} after 200 tries")


def http(method, url, body=None, timeout=5, raw=None):
    """Sends `body` as JSON (or the bytes `raw` as they are). Returns
    (status, parsed JSON or text); status None = no connection."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read().decode()
            code = r.status
    except urllib.error.HTTPError as e:
        raw = e.read().decode(errors="replace")
        code = e.code
    except (urllib.error.URLError, ConnectionError, socket.timeout, OSError) as e:
        return None, str(e)
    try:
        return code, json.loads(raw) if raw else None
    except ValueError:
        return code, raw


def wait_for(pred, timeout_s, step=0.1):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def worker_properties(bootstrap, group, listener, session_ms, heartbeat_ms, delay_ms, graceful_ms):
    """The worker properties every process-level test starts from: the three
    internal topics with replication 1, the sessioned protocol, short group
    timings (ms) and String converters."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": "connect-configs",
        "config.storage.replication.factor": "1",
        "offset.storage.topic": "connect-offsets",
        "offset.storage.replication.factor": "1",
        "offset.storage.partitions": "25",
        "status.storage.topic": "connect-status",
        "status.storage.replication.factor": "1",
        "status.storage.partitions": "5",
        "connect.protocol": "sessioned",
        "session.timeout.ms": str(session_ms),
        "heartbeat.interval.ms": str(heartbeat_ms),
        "scheduled.rebalance.max.delay.ms": str(delay_ms),
        "listeners": listener,
        "rest.advertised.host.name": "127.0.0.1",
        "offset.flush.interval.ms": "1000",
        "task.shutdown.graceful.timeout.ms": str(graceful_ms),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }


def finish(work, failures):
    """Keeps `work` on failure or with KC_KEEP=1 (else removes it), prints
    the failed checks and returns the exit status (0 = passed)."""
    if failures or os.environ.get("KC_KEEP") == "1":
        print(f"logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed:")
        for f in failures:
            print(f"  - {f}")
        return 1
    print("OK")
    return 0


class Worker:
    def __init__(self, n, kc, work, bootstrap, log_file=False, group="lifecycle-test", overrides=None, args=None,
                 port=None):
        self.n = n
        # `port`: a restarted worker keeps its address (the same worker id).
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.worker_id = f"127.0.0.1:{self.port}"
        self.out_path = os.path.join(work, f"worker{n}.out")  # stdout + stderr
        self.log_file = os.path.join(work, f"worker{n}.log") if log_file else None
        props = worker_properties("127.0.0.1:1", group, "http://127.0.0.1:1", SESSION_TIMEOUT_MS, HEARTBEAT_MS,
                                  REBALANCE_DELAY_MS, GRACEFUL_MS)  # address and port: from the environment
        if self.log_file:
            props["log.file"] = self.log_file
        props.update(overrides or {})
        self.props_path = os.path.join(work, f"worker{n}.properties")
        with open(self.props_path, "w") as f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        env = dict(os.environ)
        # The CONNECT_* overrides of `run` (config/env_overrides.h).
        env["CONNECT_BOOTSTRAP_SERVERS"] = bootstrap
        env["CONNECT_LISTENERS"] = self.url
        env["CONNECT_REST_ADVERTISED_PORT"] = str(self.port)
        self.out = open(self.out_path, "ab")
        # `args`: extra `kconnectd run` options (e.g. --leave-on-shutdown).
        self.proc = subprocess.Popen([kc, "run", self.props_path] + list(args or []), stdout=self.out,
                                     stderr=subprocess.STDOUT, env=env)

    def log(self):
        """Everything the worker logged: stdout/stderr plus log.file (and rotated copies)."""
        text = ""
        paths = [self.out_path]
        if self.log_file:
            paths += [self.log_file + ".1", self.log_file]
        for p in paths:
            try:
                with open(p, errors="replace") as f:
                    text += f.read()
            except FileNotFoundError:
                pass
        return text

    def alive(self):
        return self.proc.poll() is None

    def applied_generation(self):
        """Highest generation whose assignment this worker applied (log)."""
        gens = [int(g) for g in re.findall(r"gen (\d+)\] assignment applied", self.log())]
        return max(gens) if gens else -1

    def rebalances_started(self):
        """How many times this worker logged that a rebalance started."""
        return len(re.findall(r"rebalance started", self.log()))

    def rebalances(self):
        """GET /rebalances (a JSON array of records), or None when it does not answer 200."""
        code, body = http("GET", self.url + "/rebalances", timeout=2)
        return body if code == 200 and isinstance(body, list) else None

    def healthy(self):
        code, _ = http("GET", self.url + "/health", timeout=2)
        return code == 200

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout_s):
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None


def connector_status(workers, connector):
    for w in workers:
        if not w.alive():
            continue
        code, body = http("GET", f"{w.url}/connectors/{connector}/status", timeout=3)
        if code == 200 and isinstance(body, dict) and "tasks" in body:
            return body
    return None


def running_owners(workers, connector):
    """{task id: worker_id} of RUNNING tasks, or {}."""
    st = connector_status(workers, connector)
    if not st:
        return {}
    return {t["id"]: t.get("worker_id") for t in st["tasks"] if t.get("state") == "RUNNING"}


def create_connector(workers, body):
    """POSTs `body` to the workers in turn until one accepts it (retries 409
    rebalance answers and connection errors for 60 s)."""
    deadline = time.monotonic() + 60
    last = None
    while time.monotonic() < deadline:
        for w in workers:
            code, resp = http("POST", w.url + "/connectors", body, timeout=10)
            last = (code, resp)
            if code in (200, 201):
                return True
            if code == 409 and "already exists" in json.dumps(resp):
                return True
            time.sleep(0.3)
    say(f"POST /connectors kept failing: {last}")
    return False


def start_broker(kc, work, topics):
    """Starts `kconnectd mock-broker` with `topics` ("name:partitions") and
    returns (process, bootstrap address); raises Abort if it does not start."""
    bootstrap_file = os.path.join(work, "bootstrap")
    broker_out = open(os.path.join(work, "mock-broker.out"), "wb")
    args = [kc, "mock-broker", "--bootstrap-file", bootstrap_file]
    for t in topics:
        args += ["--topic", t]
    broker = subprocess.Popen(args, stdout=broker_out, stderr=subprocess.STDOUT)
    if not wait_for(lambda: os.path.exists(bootstrap_file) and open(bootstrap_file).read().strip(), 30):
        raise Abort("mock-broker wrote no bootstrap address")
    return broker, open(bootstrap_file).read().split()[0]


def wait_healthy(workers, timeout_s=90):
    """Waits until every worker answers GET /health with 200; Abort otherwise."""
    for w in workers:
        if not wait_for(lambda: w.healthy() or not w.alive(), timeout_s) or not w.alive():
            raise Abort(f"worker {w.n} not healthy (exit {w.proc.poll()}); log:\n{w.log()[-3000:]}")


def stop_all(workers, broker):
    """Thaws the broker (a test may have frozen it), SIGTERM to every worker
    and the broker; SIGKILL what is still alive after 15 s."""
    if broker is not None and broker.poll() is None:
        broker.send_signal(signal.SIGCONT)
    for w in workers:
        if w.alive():
            w.signal(signal.SIGTERM)
    for w in workers:
        if w.wait_exit(15) is None:
            w.proc.kill()
    if broker is not None and broker.poll() is None:
        broker.terminate()
        try:
            broker.wait(timeout=5)
        except subprocess.TimeoutExpired:
            broker.kill()


class Cluster:
    """What a test started, for run_main to stop: its workers and broker."""

    def __init__(self):
        self.workers = []
        self.broker = None


def run_main(prefix, scenario):
    """The shared main of the process-level tests. Makes a work directory,
    runs scenario(kc, work, cluster) with kc = argv[1] (the kconnectd binary)
    and a Cluster the scenario fills, stops what it started, keeps the logs
    on failure or with KC_KEEP=1, and prints the failed checks. An Abort in
    the scenario is one failed check. Returns the exit status (0 = passed)."""
    kc = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix=prefix)
    say(f"work directory {work}")
    cluster = Cluster()
    try:
        scenario(kc, work, cluster)
    except Abort as e:
        say(f"FAIL: {e}")
        failures.append(str(e))
    finally:
        stop_all(cluster.workers, cluster.broker)
    return finish(work, failures)


def leader_and_followers(workers):
    """(leader, followers) from each worker's latest /rebalances record."""
    leader = None
    for w in workers:
        hist = w.rebalances() or []
        if hist and hist[-1].get("is_leader"):
            leader = w
    return leader, [w for w in workers if w is not leader]
