"""Harness of the cluster conformance suite (tests/cluster, ctest label
`cluster`): a `kconnectd mock-broker --brokers 3` with its fault-injection
control port, 3 or 4 `kconnectd run` workers that keep their REST port (and
so their worker id) across restarts, a model of what the cluster was asked
to do, `settle()` that waits until the cluster is quiet and agrees with the
model, and `Checker`, which checks the invariants of issue 9 and counts
every check that passed.

Python 3 standard library only. Reuses http/free_port/wait_for from the
lifecycle harness (tests/integration/lifecycle/kc_harness.py).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration", "lifecycle"))
from kc_harness import free_port, http, wait_for, worker_properties  # noqa: E402

# Worker timings, small for speed. The mock broker waits about
# session.timeout - 1 s in each rebalance before it elects a leader.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_MS = 1000
REBALANCE_DELAY_MS = 5000
GRACEFUL_MS = 2000
GROUP = "cluster-test"

# Prepended to the command of every broker and worker process. Empty by
# default; a suite that must leave nothing behind if it is itself killed
# (a ctest timeout) sets e.g. ["setpriv", "--pdeathsig", "KILL", "--"].
COMMAND_PREFIX = []

SEQ_TOPIC = "seq"
PIPE_TOPIC = "pipe"

T0 = time.monotonic()


def say(msg):
    print(f"[{time.monotonic() - T0:7.2f}s] {msg}", flush=True)


class Fatal(Exception):
    """The harness itself cannot go on (a process did not start)."""


# ------------------------------------------------------------------ processes

class Broker:
    """`kconnectd mock-broker --brokers N --control-port 0` and a client of
    its control port (one line per command, one reply line)."""

    def __init__(self, kc, work, brokers=3, topics=(f"{SEQ_TOPIC}:4", f"{PIPE_TOPIC}:2")):
        self.bootstrap_file = os.path.join(work, "bootstrap")
        self.control_file = os.path.join(work, "control-port")
        self.out_path = os.path.join(work, "mock-broker.out")
        args = [kc, "mock-broker", "--brokers", str(brokers), "--bootstrap-file", self.bootstrap_file,
                "--control-port", "0", "--control-file", self.control_file]
        for t in topics:
            args += ["--topic", t]
        self.out = open(self.out_path, "ab")
        self.proc = subprocess.Popen(COMMAND_PREFIX + args, stdout=self.out, stderr=subprocess.STDOUT)
        if not wait_for(lambda: os.path.exists(self.bootstrap_file) and open(self.bootstrap_file).read().strip(), 30):
            raise Fatal("mock-broker wrote no bootstrap address")
        self.bootstrap = open(self.bootstrap_file).read().split()[0]
        self.control_port = int(open(self.control_file).read().strip())
        self.sock = None
        self.rfile = None

    def control(self, line):
        """Sends one control command; returns the reply line ("ok ..." or
        "error ..."). Reconnects once if the connection dropped."""
        for attempt in (0, 1):
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(("127.0.0.1", self.control_port), timeout=5)
                    self.rfile = self.sock.makefile("r")
                self.sock.sendall((line + "\n").encode())
                reply = self.rfile.readline().strip()
                if reply:
                    return reply
            except OSError:
                pass
            self.sock = None
        return "error no reply from the control port"

    def last_line(self):
        """The last line the mock broker wrote (e.g. a librdkafka assertion), or ""."""
        try:
            with open(self.out_path, "rb") as f:
                lines = f.read().decode(errors="replace").strip().splitlines()
            return lines[-1] if lines else ""
        except OSError:
            return ""

    def stop(self):
        if self.sock is not None:
            self.sock.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Node:
    """One `kconnectd run` worker. It keeps its port, properties and so its
    worker id across restarts. state: "up", "frozen" (SIGSTOP) or "down"."""

    def __init__(self, n, kc, work, bootstrap, overrides=None):
        self.n = n
        self.kc = kc
        self.bootstrap = bootstrap
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.worker_id = f"127.0.0.1:{self.port}"
        self.out_path = os.path.join(work, f"worker{n}.out")
        props = worker_properties(bootstrap, GROUP, self.url, SESSION_TIMEOUT_MS, HEARTBEAT_MS, REBALANCE_DELAY_MS,
                                  GRACEFUL_MS)
        props["rest.advertised.port"] = str(self.port)
        # Sink consumers: the mock broker waits session timeout - 1 s in
        # each consumer-group rebalance that a member joins, and the
        # consumer default (45 s) would stall every sink hand-over.
        props["consumer.session.timeout.ms"] = str(SESSION_TIMEOUT_MS)
        props["consumer.heartbeat.interval.ms"] = str(HEARTBEAT_MS)
        # A value may be a function of the worker number (per-worker keys
        # such as group.instance.id).
        props.update({k: (v(n) if callable(v) else v) for k, v in (overrides or {}).items()})
        self.props_path = os.path.join(work, f"worker{n}.properties")
        with open(self.props_path, "w") as f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        self.proc = None
        self.state = "down"
        self.starts = 0

    def start(self):
        out = open(self.out_path, "ab")
        out.write(f"\n===== harness: start #{self.starts + 1} =====\n".encode())
        out.flush()
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
        self.proc = subprocess.Popen(COMMAND_PREFIX + [self.kc, "run", self.props_path], stdout=out,
                                     stderr=subprocess.STDOUT, env=env)
        out.close()
        self.state = "up"
        self.starts += 1

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_kib(self):
        """Resident set size of the running process in KiB (VmRSS of
        /proc/<pid>/status), or None when it is not running."""
        if not self.alive():
            return None
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return None

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def kill(self):
        """SIGKILL; waits for the exit."""
        self.signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
        self.state = "down"

    def terminate(self, timeout_s=20):
        """SIGTERM (SIGCONT first if frozen); SIGKILL after `timeout_s`.
        Returns the exit status."""
        if self.state == "frozen":
            self.thaw()
        self.signal(signal.SIGTERM)
        rc = None
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
        self.state = "down"
        return rc

    def freeze(self):
        self.signal(signal.SIGSTOP)
        self.state = "frozen"

    def thaw(self):
        self.signal(signal.SIGCONT)
        self.state = "up"

    def healthy(self):
        code, _ = http("GET", self.url + "/health", timeout=2)
        return code == 200

    def metrics(self):
        """Parsed GET /metrics (Metrics) or None."""
        try:
            import urllib.request
            with urllib.request.urlopen(self.url + "/metrics", timeout=3) as r:
                return Metrics(r.read().decode(errors="replace"))
        except Exception:  # noqa: BLE001 - any failure = no answer
            return None

    def log_tail(self, n=4000):
        try:
            with open(self.out_path, errors="replace") as f:
                return f.read()[-n:]
        except FileNotFoundError:
            return ""


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Metrics:
    """The kconnectd_ families of one worker's GET /metrics that the checks use."""

    def __init__(self, text):
        self.samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = _SAMPLE.match(line)
            if not m:
                continue
            labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(m.group(2) or "")}
            try:
                value = float(m.group(3))
            except ValueError:
                continue
            self.samples.append((m.group(1), labels, value))

    def value(self, name, default=None, **labels):
        for n, ls, v in self.samples:
            if n == "kconnectd_" + name and all(ls.get(k) == str(x) for k, x in labels.items()):
                return v
        return default

    def series(self, name):
        return [(ls, v) for n, ls, v in self.samples if n == "kconnectd_" + name]

    def task_states(self):
        """{(connector, task): state} of the tasks this worker has (task_status == 1)."""
        out = {}
        for ls, v in self.series("task_status"):
            key = (ls.get("connector"), int(ls.get("task", -1)))
            out.setdefault(key, None)
            if v == 1:
                out[key] = (ls.get("state") or "").upper()
        return out

    def counter(self, name):
        """{(connector, task): value} of a per-task counter."""
        return {(ls.get("connector"), int(ls.get("task", -1))): v for ls, v in self.series(name)}

    def epoch(self):
        return self.value("rebalance_epoch", -1)

    def rebalancing(self):
        return self.value("rebalancing", 0) != 0

    def leader_url(self):
        for ls, v in self.series("rebalance_leader_info"):
            if v == 1:
                return ls.get("leader_url")
        return None


# ------------------------------------------------------------------ model

class ConnectorModel:
    """What the cluster was asked for one connector: its config and target state."""

    def __init__(self, name, config, target="RUNNING"):
        self.name = name
        self.config = dict(config)
        self.target = target  # RUNNING, PAUSED, STOPPED

    def expected_tasks(self):
        """Number of tasks the connector generates (builtin.cpp): FileStreamSource
        always 1, the others tasks.max; 0 once STOPPED (KIP-875)."""
        if self.target == "STOPPED":
            return 0
        if self.config["connector.class"].endswith("FileStreamSourceConnector"):
            return 1
        return max(1, int(self.config.get("tasks.max", "1")))

    def is_source(self):
        return not self.config["connector.class"].endswith("FileStreamSinkConnector")


SEQ_CLASS = "kc.connect.SequenceSourceConnector"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def seq_config(tasks, throughput=20):
    return {"connector.class": SEQ_CLASS, "tasks.max": str(tasks), "topic": SEQ_TOPIC, "throughput": str(throughput)}


# ------------------------------------------------------------------ cluster

class Cluster:
    """A broker and `n` workers (up to `max_workers` slots; the others are
    started by join). `model` maps connector name -> ConnectorModel.

    With `bootstrap` the workers use that broker instead of a `kconnectd
    mock-broker` of their own; `broker` is then None (no fault injection,
    no topics created: the broker must create them)."""

    def __init__(self, kc, work, n=3, max_workers=4, overrides=None, brokers=3,
                 topics=(f"{SEQ_TOPIC}:4", f"{PIPE_TOPIC}:2"), bootstrap=None):
        self.kc = kc
        self.work = work
        self.brokers = brokers
        self.coordinator = 1
        if bootstrap:
            self.broker = None
            self.bootstrap = bootstrap
            say(f"external broker {bootstrap}")
        else:
            self.broker = Broker(kc, work, brokers=brokers, topics=topics)
            self.bootstrap = self.broker.bootstrap
            # A fixed coordinator, so that a move is a real move.
            say(f"broker {self.broker.bootstrap}, control port {self.broker.control_port}: "
                f"{self.broker.control(f'coordinator {GROUP} 1')}")
        self.nodes = [Node(i, kc, work, self.bootstrap, overrides) for i in range(max_workers)]
        for node in self.nodes[:n]:
            node.start()
        self.model = {}
        self.pipeline = None  # Pipeline, when one was set up

    def up(self):
        """Workers that are running and not frozen."""
        return [w for w in self.nodes if w.state == "up"]

    def by_id(self, worker_id):
        for w in self.nodes:
            if w.worker_id == worker_id:
                return w
        return None

    def wait_healthy(self, timeout_s=90):
        for w in self.up():
            if not wait_for(lambda: w.healthy() or not w.alive(), timeout_s) or not w.alive():
                raise Fatal(f"worker {w.n} not healthy (exit {w.proc.poll()}); log:\n{w.log_tail()}")

    def leader(self):
        """The up worker that the up workers name as leader (metrics), or None."""
        for w in self.up():
            m = w.metrics()
            if m and m.leader_url():
                url = m.leader_url().rstrip("/")
                for x in self.up():
                    if x.url == url:
                        return x
        return None

    def followers(self):
        lead = self.leader()
        return [w for w in self.up() if w is not lead]

    def stop(self):
        for w in self.nodes:
            if w.state == "frozen":
                w.thaw()
        for w in self.nodes:
            if w.alive():
                w.signal(signal.SIGTERM)
        for w in self.nodes:
            if w.proc is not None and w.alive():
                try:
                    w.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    w.proc.kill()
        if self.broker is not None:
            self.broker.stop()
        if self.pipeline:
            self.pipeline.stop()

    # REST with Connect's retry habits: 409 (rebalance) and refused connections are retried.
    def rest(self, method, path, body=None, via=None, retry_s=30, ok=None):
        """Sends the request through `via` (a Node, default the first up
        worker); retries 409s, 5xx "rebalance" answers and connection errors
        for `retry_s`. Returns (code, body) of the last answer."""
        deadline = time.monotonic() + retry_s
        while True:
            w = via if via is not None else (self.up() or self.nodes)[0]
            code, resp = http(method, w.url + path, body, timeout=15)
            retry = code is None or code == 409 and "already exists" not in json.dumps(resp)
            if code is not None and code >= 500 and "rebalance" in json.dumps(resp).lower():
                retry = True
            if ok is not None and code in ok:
                retry = False
            if not retry or time.monotonic() > deadline:
                return code, resp
            time.sleep(0.5)

    def create(self, name, config, via=None):
        code, resp = self.rest("POST", "/connectors", {"name": name, "config": config}, via=via)
        if code in (200, 201):
            self.model[name] = ConnectorModel(name, config)
        return code, resp


class Pipeline:
    """FileStreamSource(input) -> topic `pipe` -> FileStreamSink(output). The
    harness appends numbered lines to the input; no input line may be
    missing from the output once both connectors run (duplicates allowed)."""

    def __init__(self, work, src="pipe-src", sink="pipe-sink"):
        self.input = os.path.join(work, "pipe-input.txt")
        self.output = os.path.join(work, "pipe-output.txt")
        self.src = src
        self.sink = sink
        self.written = 0
        open(self.input, "a").close()

    def source_config(self):
        return {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": self.input, "topic": PIPE_TOPIC}

    def sink_config(self, tasks=1):
        return {"connector.class": FILE_SINK, "tasks.max": str(tasks), "file": self.output, "topics": PIPE_TOPIC}

    def append(self, n):
        with open(self.input, "a") as f:
            for _ in range(n):
                f.write(f"line-{self.written:06d}\n")
                self.written += 1

    def missing(self):
        """Input line numbers not (yet) in the output."""
        try:
            with open(self.output, errors="replace") as f:
                seen = set(f.read().split())
        except FileNotFoundError:
            seen = set()
        return [i for i in range(self.written) if f"line-{i:06d}" not in seen]

    def stop(self):
        pass


# ------------------------------------------------------------------ snapshots

def normalize_status(st):
    """A ConnectorStateInfo without `trace` (it may differ in wording)."""
    if not isinstance(st, dict):
        return st
    out = {"name": st.get("name"), "type": st.get("type")}
    c = st.get("connector") or {}
    out["connector"] = {"state": c.get("state"), "worker_id": c.get("worker_id")}
    out["tasks"] = sorted(({"id": t.get("id"), "state": t.get("state"), "worker_id": t.get("worker_id")}
                           for t in st.get("tasks") or []), key=lambda t: t["id"] if t["id"] is not None else -1)
    return out


class Snapshot:
    """One look at every up worker: health, metrics and expand=status."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.workers = cluster.up()
        self.health = {}
        self.metrics = {}
        self.status = {}
        for w in self.workers:
            self.health[w.n] = w.healthy()
            self.metrics[w.n] = w.metrics()
            code, body = http("GET", w.url + "/connectors?expand=status", timeout=5)
            if code == 200 and isinstance(body, dict):
                self.status[w.n] = {name: normalize_status((v or {}).get("status")) for name, v in body.items()}
            else:
                self.status[w.n] = None

    def placement(self):
        """{worker n: {(connector, task): state}} from metrics."""
        return {n: (m.task_states() if m else None) for n, m in self.metrics.items()}

    def key(self):
        """What must not change between two looks for the cluster to be quiet."""
        return json.dumps([self.status, {n: sorted(map(list, (p or {}).items()), key=str)
                                         for n, p in self.placement().items()},
                           {n: (m.epoch() if m else None) for n, m in self.metrics.items()}], sort_keys=True)

    def quiet_problems(self, model):
        """Why the cluster is not quiet and converged on `model` (empty = it is)."""
        probs = []
        if not self.workers:
            return ["no worker is up"]
        for w in self.workers:
            if not self.health[w.n]:
                probs.append(f"worker {w.n} not healthy")
            m = self.metrics[w.n]
            if m is None:
                probs.append(f"worker {w.n} has no /metrics")
            elif m.rebalancing():
                probs.append(f"worker {w.n} rebalancing")
            if self.status[w.n] is None:
                probs.append(f"worker {w.n} no expand=status")
        if probs:
            return probs
        epochs = {n: m.epoch() for n, m in self.metrics.items()}
        if len(set(epochs.values())) != 1:
            probs.append(f"generations differ {epochs}")
        views = list(self.status.values())
        if any(v != views[0] for v in views[1:]):
            probs.append("workers' statuses differ")
        up_ids = {w.worker_id for w in self.workers}
        st = views[0]
        for name, cm in model.items():
            s = st.get(name)
            if s is None:
                probs.append(f"{name}: no status")
                continue
            if s["connector"]["state"] != cm.target:
                probs.append(f"{name}: connector {s['connector']['state']}, want {cm.target}")
            if s["connector"]["worker_id"] not in up_ids:
                probs.append(f"{name}: connector on {s['connector']['worker_id']} (not up)")
            want_task = {"RUNNING": "RUNNING", "PAUSED": "PAUSED"}.get(cm.target)
            ids = [t["id"] for t in s["tasks"]]
            if ids != list(range(cm.expected_tasks())):
                probs.append(f"{name}: task ids {ids}, want {list(range(cm.expected_tasks()))}")
            for t in s["tasks"]:
                if t["state"] != want_task:
                    probs.append(f"{name}-{t['id']}: {t['state']}, want {want_task}")
                if t["worker_id"] not in up_ids:
                    probs.append(f"{name}-{t['id']}: on {t['worker_id']} (not up)")
        for name in st:
            if name not in model:
                probs.append(f"{name}: listed but deleted")
        # What runs is what the status says. Until a scheduled rebalance
        # (KIP-415 delay) hands a returning worker its lost tasks back, the
        # status may name a worker that does not run the task: not quiet yet.
        placement = self.placement()
        by_id = {w.worker_id: w.n for w in self.workers}
        for name, s in st.items():
            for t in s["tasks"]:
                n = by_id.get(t["worker_id"])
                got = (placement.get(n) or {}).get((name, t["id"])) if n is not None else None
                if n is not None and got != t["state"]:
                    probs.append(f"{name}-{t['id']}: status {t['state']} on w{n}, its metrics {got}")
        for n, p in placement.items():
            for (cn, t), state in (p or {}).items():
                entry = next((x for x in (st.get(cn) or {}).get("tasks", []) if x["id"] == t), None)
                if entry is None or by_id.get(entry["worker_id"]) != n:
                    probs.append(f"w{n} runs {cn}-{t} ({state}), status {entry}")
        return probs


def settle(cluster, timeout_s, interval=0.7, stable_looks=2):
    """Waits until the cluster is quiet, agrees with the model and looks the
    same `stable_looks` times in a row. Returns (settled, last problems,
    seconds taken)."""
    t0 = time.monotonic()
    deadline = t0 + timeout_s
    prev = None
    same = 0
    probs = ["no look yet"]
    while True:
        snap = Snapshot(cluster)
        probs = snap.quiet_problems(cluster.model)
        k = snap.key()
        if not probs:
            same = same + 1 if k == prev else 1
            if same >= stable_looks:
                return True, [], time.monotonic() - t0
        else:
            same = 0
        prev = k
        if time.monotonic() > deadline:
            return False, probs, time.monotonic() - t0
        time.sleep(interval)


# ------------------------------------------------------------------ invariants

def get_tasks(worker, name, retry_s=15):
    """GET /connectors/{name}/tasks on `worker`. Connect answers 500 "...
    because a rebalance is expected" while a rebalance is pending (reference
    6.2); like a client, retry that for `retry_s`. Returns (code, body)."""
    deadline = time.monotonic() + retry_s
    while True:
        code, body = http("GET", f"{worker.url}/connectors/{name}/tasks", timeout=5)
        if not (code == 500 and "rebalance" in json.dumps(body)) or time.monotonic() > deadline:
            return code, body
        time.sleep(0.5)


class Checker:
    """Checks issue 9's invariants on a settled cluster. `counts` has the
    number of checks that passed per invariant, `failures` the messages of
    those that did not."""

    NAMES = ["broker_alive", "settles", "status_agree", "status_matches_metrics", "task_ids_configured",
             "target_state", "paused_idle", "running_progress", "single_owner", "no_line_lost", "rest_answer"]

    def __init__(self):
        self.counts = {n: 0 for n in self.NAMES}
        self.failures = []

    def ok(self, name, cond, msg):
        if cond:
            self.counts[name] += 1
        else:
            self.failures.append(f"[{name}] {msg}")
            say(f"INVARIANT FAILED [{name}] {msg}")
        return cond

    def report(self):
        total = sum(self.counts.values())
        lines = [f"invariant checks passed: {total}"]
        for n in self.NAMES:
            lines.append(f"  {n:24s} {self.counts[n]}")
        return "\n".join(lines)

    def check_all(self, cluster, window_s=1.5, pipeline_wait_s=30):
        """Every invariant once, on the cluster as it is now. Returns True if all held."""
        before = len(self.failures)
        # The test partner itself: librdkafka's mock cluster can abort on
        # an assertion of its own; every check after that would blame the
        # workers for a broker that is gone.
        if cluster.broker is not None:
            code = cluster.broker.proc.poll()
            if not self.ok("broker_alive", code is None,
                           f"the mock broker exited (status {code}); its last line: {cluster.broker.last_line()}"):
                return False
        s1 = Snapshot(cluster)
        model = cluster.model
        up_ids = {w.worker_id: w for w in s1.workers}
        views = {n: v for n, v in s1.status.items() if v is not None}
        # 1. every worker's /connectors?expand=status agrees.
        base = next(iter(views.values()), None)
        for n, v in views.items():
            diff = [c for c in set(v) | set(base) if v.get(c) != base.get(c)]
            self.ok("status_agree", not diff,
                    f"worker {n} disagrees with worker {next(iter(views))} on {sorted(diff)}: "
                    + "; ".join(f"{c}: {json.dumps(v.get(c))} vs {json.dumps(base.get(c))}" for c in sorted(diff)[:3]))
        if base is None:
            self.ok("status_agree", False, "no worker answered /connectors?expand=status")
            return False
        placement = s1.placement()
        # 5. no task runs on two workers (metrics).
        owners = {}
        for n, p in placement.items():
            for key in (p or {}):
                owners.setdefault(key, []).append(n)
        for key, ns in sorted(owners.items()):
            self.ok("single_owner", len(ns) == 1, f"task {key[0]}-{key[1]} runs on workers {ns}")
        # 2. the reported status matches what runs, per each worker's metrics.
        for name, st in sorted(base.items()):
            for t in st["tasks"]:
                w = up_ids.get(t["worker_id"])
                got = placement.get(w.n, {}).get((name, t["id"])) if w else None
                self.ok("status_matches_metrics", w is not None and got == t["state"],
                        f"{name}-{t['id']}: status {t['state']} on {t['worker_id']}, that worker's metrics say {got}"
                        + ("" if w else " (worker not up)"))
        for n, p in placement.items():
            wid = next(w.worker_id for w in s1.workers if w.n == n)
            for (c, t), state in sorted((p or {}).items()):
                st = base.get(c)
                entry = next((x for x in (st or {}).get("tasks", []) if x["id"] == t), None)
                self.ok("status_matches_metrics",
                        entry is not None and entry["worker_id"] == wid and entry["state"] == state,
                        f"worker {n} runs {c}-{t} ({state}) but status says {json.dumps(entry)}")
        for n, m in s1.metrics.items():
            if m is None:
                continue
            wid = next(w.worker_id for w in s1.workers if w.n == n)
            mine = [c for c, st in base.items() if st["connector"]["worker_id"] == wid]
            active = [c for c in mine if base[c]["connector"]["state"] in ("RUNNING", "PAUSED")]
            running = m.value("worker_connectors_running", 0)
            self.ok("status_matches_metrics", len(active) <= running <= len(mine),
                    f"worker {n} runs {running:g} connectors; status puts {mine} on it ({active} RUNNING/PAUSED)")
        # 3. task ids are exactly the configured ones; STOPPED = "tasks": [].
        for name, cm in sorted(model.items()):
            st = base.get(name)
            via = s1.workers[hash(name) % len(s1.workers)]
            code, tasks = get_tasks(via, name)
            configured = sorted(t["id"]["task"] for t in tasks) if code == 200 and isinstance(tasks, list) else None
            status_ids = [t["id"] for t in st["tasks"]] if st else None
            want = list(range(cm.expected_tasks()))
            self.ok("task_ids_configured", configured == want and status_ids == want,
                    f"{name} ({cm.target}): GET /tasks ids {configured} (code {code}), status ids {status_ids}, "
                    f"want {want}")
            # 4. the model's target state.
            state = st["connector"]["state"] if st else None
            want_task = {"RUNNING": "RUNNING", "PAUSED": "PAUSED"}.get(cm.target)
            bad = [t for t in (st or {}).get("tasks", []) if t["state"] != want_task]
            self.ok("target_state", state == cm.target and not bad,
                    f"{name}: asked {cm.target}, connector {state}, tasks {json.dumps((st or {}).get('tasks'))}")
        for name in base:
            self.ok("target_state", name in model, f"{name} listed but it was deleted (or never created)")
        # 4b. PAUSED/STOPPED connectors poll/put nothing; RUNNING SequenceSources do.
        time.sleep(window_s)
        s2 = {w.n: w.metrics() for w in s1.workers}

        def totals(ms):
            out = {}
            for n, m in ms.items():
                if m is None:
                    continue
                for fam in ("source_task_records_polled_total", "sink_task_records_sent_total"):
                    for (c, t), v in m.counter(fam).items():
                        out[(n, c, t)] = v
            return out
        a, b = totals(s1.metrics), totals(s2)

        def risen(name, a, b):
            return {f"{k[1]}-{k[2]}@w{k[0]}": b[k] - a[k] for k in a if k[1] == name and k in b and b[k] != a[k]}
        for name, cm in sorted(model.items()):
            rise = risen(name, a, b)
            if cm.target in ("PAUSED", "STOPPED"):
                self.ok("paused_idle", not rise, f"{name} is {cm.target} but its counters rose over {window_s}s: {rise}")
                if cm.target == "STOPPED":
                    left = [k for k in owners if k[0] == name]
                    self.ok("paused_idle", not left, f"{name} is STOPPED but workers still have tasks {left}")
            elif cm.config["connector.class"] == SEQ_CLASS:
                # A producer may be reconnecting after a broker fault: allow 10 s.
                deadline = time.monotonic() + 10
                while len(rise) < cm.expected_tasks() and time.monotonic() < deadline:
                    time.sleep(0.5)
                    rise = risen(name, a, totals({w.n: w.metrics() for w in s1.workers}))
                self.ok("running_progress", len(rise) == cm.expected_tasks(),
                        f"{name} RUNNING but only {sorted(rise)} of {cm.expected_tasks()} tasks polled within 10s")
        # 6. the file pipeline loses no line.
        pl = cluster.pipeline
        if pl and all(model.get(c) is not None and model[c].target == "RUNNING" for c in (pl.src, pl.sink)):
            missing = wait_for(lambda: not pl.missing(), pipeline_wait_s, step=0.5) or pl.missing()
            missing = [] if missing is True else missing
            self.ok("no_line_lost", not missing,
                    f"{len(missing)} of {pl.written} input lines not in the sink output after {pipeline_wait_s}s "
                    f"(first {missing[:5]})")
        return len(self.failures) == before
