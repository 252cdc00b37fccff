#!/usr/bin/env python3
"""The per-host log shipper (issue 29 item 3; docs/placement.md): connectors
pinned to hosts with placement labels, on `kconnectd mock-broker`.

usage: test_per_host_shipper.py KCONNECTD

Three workers, worker.labels=host=h1 / h2 / h3, each a static member
(group.instance.id=shipper-hN, static.membership.assignment.file) with its
own input file hN.log; a FileStreamSource ship-hN per host (file = that
host's file, topic log-hN, placement.labels=host=hN, tasks.max=1).

A sampler thread reads GET /cluster (every member's owned connectors and
tasks, through the leader) and GET /connectors/ship-hN/status every 200 ms
for the whole run and records every sample where a pinned connector or task
is owned by, or RUNNING / FAILED on, a worker whose labels don't match (or
any FAILED state: a worker of this build refuses misplaced work with a
FAILED trace). There must be none.

 1. The three connectors run on their hosts; the first lines of each file
    reach their topic.
 2. SIGTERM to h2; lines appended to h2.log (and h1.log, h3.log) while it is
    down; h2 started again on the same port and instance id. ship-h2 waits
    for it (never RUNNING elsewhere; h1 and h3 keep shipping meanwhile),
    runs on h2 again, and every line of h2.log reaches log-h2: 0 lost, 0
    duplicated (the SIGTERM committed the offsets). The logs agree: only
    worker N ever started ship-hN or ship-hN-0.
 3. SIGKILL to h3, away past session.timeout.ms: once the group drops it,
    no worker matches host=h3 and ship-h3 is UNASSIGNED with the placement
    trace, its task too (not left RUNNING on the crashed worker); started
    again, h3 runs it again and no line of h3.log is lost.
 4. A fourth worker without labels joins: for 5 s after its first applied
    assignment it owns no connector and no task, and the three still run
    on their hosts.
 5. ship-h9 (placement.labels=host=h9) matches no worker: UNASSIGNED, with a
    trace naming the selector and every worker's labels.

Why static membership for the restart: the host's worker has a stable
identity, so a SIGTERM sends no LeaveGroup and does not drain (a drain hands
work to other workers, and there is no other worker for pinned work), the
other hosts see no rebalance for it, and with its assignment file it
reports its kept assignment when it rejoins and gets all of it back in that
round. On the embedded broker (librdkafka's mock keeps no
instance ids) the return is a new member and one rebalance, which is the
harder case for the constraint: the sampler covers it.

Python 3 standard library and kcat. Logs are kept on failure or with KC_KEEP=1.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

from kc_harness import (Abort, Worker, check, http, run_main, say, start_broker, wait_for, wait_healthy)

HOSTS = (1, 2, 3)
RESTARTED = 2
CRASHED = 3
SAMPLE_S = 0.2


def connector(n):
    return f"ship-h{n}"


def overrides(work, n):
    o = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
         "scheduled.rebalance.max.delay.ms": "10000"}
    if n in HOSTS:
        o.update({"worker.labels": f"host=h{n}", "group.instance.id": f"shipper-h{n}",
                  "static.membership.assignment.file": os.path.join(work, f"h{n}.assignment")})
    return o


class Sampler(threading.Thread):
    """Every SAMPLE_S: GET /cluster and each connector's status; records
    misplaced work. `labels` maps worker ids to their labels."""

    def __init__(self, cluster, labels):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.labels = labels
        self.stop = threading.Event()
        self.samples = 0            # rounds with at least one answer
        self.cluster_views = 0      # /cluster answers looked at
        self.status_views = 0       # status answers looked at
        self.violations = []        # (time, text)
        self.states = {n: [] for n in HOSTS}  # n -> [(time, connector state, task state, task worker)]
        self.lock = threading.Lock()

    def wrong(self, name, worker_id):
        """The worker id runs `name` (a ship-hN connector or task) but is not host hN."""
        m = re.match(r"ship-h(\d+)", name)
        if not m:
            return False
        return self.labels.get(worker_id, {}).get("host") != f"h{m.group(1)}"

    def note(self, text):
        with self.lock:
            self.violations.append((time.monotonic(), text))
        say(f"VIOLATION: {text}")

    def sample(self):
        workers = [w for w in self.cluster.workers if w.alive()]
        answered = False
        for w in workers:
            code, body = http("GET", w.url + "/cluster?rebalances=0", timeout=2)
            if code != 200 or not isinstance(body, dict):
                continue
            answered = True
            self.cluster_views += 1
            for entry in body.get("workers", []):
                wid = entry.get("worker_id")
                for c in entry.get("connectors") or []:
                    if self.wrong(c, wid):
                        self.note(f"/cluster: connector {c} owned by {wid} {self.labels.get(wid, {})}")
                for t in entry.get("tasks") or []:
                    if self.wrong(t, wid):
                        self.note(f"/cluster: task {t} owned by {wid} {self.labels.get(wid, {})}")
            break
        for n in HOSTS:
            name = connector(n)
            for w in workers:
                code, st = http("GET", f"{w.url}/connectors/{name}/status", timeout=2)
                if code != 200 or not isinstance(st, dict):
                    continue
                answered = True
                self.status_views += 1
                c = st.get("connector", {})
                tasks = st.get("tasks", [])
                for what, s in [(name, c)] + [(f"{name}-{t.get('id')}", t) for t in tasks]:
                    if s.get("state") == "FAILED":
                        self.note(f"status: {what} FAILED on {s.get('worker_id')}: {s.get('trace', '')[:300]}")
                    elif s.get("state") == "RUNNING" and self.wrong(what, s.get("worker_id")):
                        self.note(f"status: {what} RUNNING on {s.get('worker_id')} "
                                  f"{self.labels.get(s.get('worker_id'), {})}")
                t0 = tasks[0] if tasks else {}
                with self.lock:
                    self.states[n].append((time.monotonic(), c.get("state"), t0.get("state"), t0.get("worker_id")))
                break
        if answered:
            self.samples += 1

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                self.sample()
            except Exception as e:  # a sampler that dies would hide violations
                self.note(f"sampler error: {e!r}")
            self.stop.wait(max(0.0, SAMPLE_S - (time.monotonic() - t)))


def topic_lines(bootstrap, topic):
    r = subprocess.run(["kcat", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%s\n"],
                       capture_output=True, text=True, timeout=30)
    return r.stdout.splitlines() if r.returncode == 0 else []


def append(path, lines):
    with open(path, "a") as f:
        for line in lines:
            f.write(line + "\n")


def file_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def wait_lines(bootstrap, n, path, timeout_s):
    """Waits until topic log-hN holds every line of `path`; returns (expected, got)."""
    want = file_lines(path)
    got = wait_for(lambda: (g := topic_lines(bootstrap, f"log-h{n}")) and set(want) <= set(g) and g, timeout_s,
                   step=0.5) or topic_lines(bootstrap, f"log-h{n}")
    return want, got


def starts_in_log(w, name):
    """How often worker w's log says it started connector or task `name`."""
    return len(re.findall(rf"start-(?:connector|task) {re.escape(name)}\b", w.log()))


def on_hosts(cluster, hosts):
    """True when every ship-hN of `hosts` has its connector and task RUNNING on worker N."""
    by_n = {w.n: w for w in cluster.workers if w.alive()}
    for n in hosts:
        st = None
        for w in by_n.values():
            code, body = http("GET", f"{w.url}/connectors/{connector(n)}/status", timeout=2)
            if code == 200:
                st = body
                break
        if not st or n not in by_n:
            return False
        wid = by_n[n].worker_id
        c = st.get("connector", {})
        if c.get("state") != "RUNNING" or c.get("worker_id") != wid:
            return False
        if [(t.get("state"), t.get("worker_id")) for t in st.get("tasks", [])] != [("RUNNING", wid)]:
            return False
    return True


def put_connector(workers, name, config, timeout_s=60):
    """PUT /connectors/NAME/config on the workers in turn until one takes it (409 while rebalancing)."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        for w in workers:
            code, resp = http("PUT", f"{w.url}/connectors/{name}/config", config, timeout=10)
            last = (code, resp)
            if code in (200, 201):
                return True
            time.sleep(0.3)
    say(f"PUT {name} kept failing: {last}")
    return False


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, [f"log-h{n}:1" for n in HOSTS] + ["log-h9:1"])
    paths = {n: os.path.join(work, f"h{n}.log") for n in HOSTS}
    for n in HOSTS:
        append(paths[n], [f"h{n} boot {i}" for i in range(5)])
    ws = {n: Worker(n, kc, work, bootstrap, group="shipper", overrides=overrides(work, n)) for n in HOSTS}
    cluster.workers = list(ws.values())
    labels = {w.worker_id: {"host": f"h{n}"} for n, w in ws.items()}
    sampler = Sampler(cluster, labels)
    wait_healthy(cluster.workers)
    sampler.start()

    # 1. Three connectors, one per host, created together (one rebalance).
    results = {}

    def create(n):
        results[n] = put_connector(cluster.workers, connector(n), {
            "connector.class": "FileStreamSource", "file": paths[n], "topic": f"log-h{n}", "tasks.max": "1",
            "placement.labels": f"host=h{n}"})

    threads = [threading.Thread(target=create, args=(n,)) for n in HOSTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all(results.values()):
        raise Abort(f"cannot create the connectors: {results}")
    if not wait_for(lambda: on_hosts(cluster, HOSTS), 60, step=0.3):
        raise Abort("the three connectors never ran on their hosts")
    say("ship-h1..3 run on h1..h3")
    for n in HOSTS:
        want, got = wait_lines(bootstrap, n, paths[n], 30)
        check(set(want) <= set(got), f"log-h{n} has the first {len(want)} lines of h{n}.log ({len(got)} read)")

    # 2. h2 restarts: SIGTERM, lines appended while it is down, started again.
    old = ws[RESTARTED]
    old_id = old.worker_id
    t_term = time.monotonic()
    old.signal(signal.SIGTERM)
    code = old.wait_exit(40)
    t_down = time.monotonic()
    check(code == 0, f"h{RESTARTED} exits 0 on SIGTERM (exit {code}, {t_down - t_term:.1f} s)")
    for n in HOSTS:
        append(paths[n], [f"h{n} while h{RESTARTED} is down {i}" for i in range(20)])
    # Wait until h1 and h3 shipped their new lines (their work goes on), and
    # at least 1.5 s, to watch ship-h2 while h2 is away (well within
    # session.timeout.ms: the group keeps h2's static identity).
    for n in HOSTS:
        if n == RESTARTED:
            continue
        want, got = wait_lines(bootstrap, n, paths[n], 30)
        check(set(want) <= set(got), f"h{n} keeps shipping while h{RESTARTED} is down ({len(got)}/{len(want)})")
    wait_for(lambda: time.monotonic() - t_down >= 1.5, 5)
    running_elsewhere = [s for s in sampler.states[RESTARTED] if s[0] > t_term and s[2] == "RUNNING" and s[3] != old_id]
    check(not running_elsewhere, f"ship-h2-0 never RUNNING on another worker while h2 is away: {running_elsewhere[:3]}")
    mark = os.path.getsize(old.out_path)
    back = Worker(RESTARTED, kc, work, bootstrap, group="shipper", overrides=overrides(work, RESTARTED),
                  port=old.port)
    t_start = time.monotonic()
    cluster.workers = [back if w is old else w for w in cluster.workers]
    ws[RESTARTED] = back
    append(paths[RESTARTED], [f"h{RESTARTED} after the restart {i}" for i in range(10)])
    if not wait_for(lambda: on_hosts(cluster, HOSTS), 60, step=0.2):
        raise Abort(f"ship-h{RESTARTED} never ran on h{RESTARTED} again")
    t_back = time.monotonic()
    say(f"ship-h{RESTARTED} RUNNING on h{RESTARTED} again {t_back - t_start:.1f} s after the start "
        f"({t_back - t_term:.1f} s after the SIGTERM)")
    with open(back.out_path, "rb") as f:
        f.seek(mark)
        text = f.read().decode(errors="replace")
    joined = text.find("joined as")
    started = text.find(f"start-task ship-h{RESTARTED}-0")
    say(f"restarted h{RESTARTED}: task started {'before' if 0 <= started < joined else 'after'} its first join "
        f"(start at {started}, join at {joined})")
    append(paths[RESTARTED], [f"h{RESTARTED} once it is back {i}" for i in range(10)])
    want, got = wait_lines(bootstrap, RESTARTED, paths[RESTARTED], 40)
    lost = [l for l in want if l not in set(got)]
    dup = len(got) - len(set(got))
    say(f"log-h{RESTARTED}: {len(want)} lines written, {len(got)} read, {len(lost)} lost, {dup} duplicated")
    check(not lost, f"no line of h{RESTARTED}.log lost: {lost[:5]}")
    check(dup == 0, f"no line of h{RESTARTED}.log duplicated ({dup})")
    states = sorted({(s[1], s[2]) for s in sampler.states[RESTARTED] if t_term < s[0] < t_back})
    say(f"ship-h{RESTARTED} (connector, task) states sampled while it waited: {states}")

    # 3. h3 crashes (SIGKILL) and stays away past session.timeout.ms: the
    # group drops it, and with no worker left that matches host=h3, ship-h3
    # is UNASSIGNED with the placement trace (not moved, not delayed onto
    # another host) until h3 is back.
    crashed = ws[CRASHED]
    crashed_id = crashed.worker_id
    t_kill = time.monotonic()
    crashed.proc.kill()
    crashed.proc.wait()
    append(paths[CRASHED], [f"h{CRASHED} while crashed {i}" for i in range(20)])

    def waiting_trace():
        for w in cluster.workers:
            if not w.alive():
                continue
            code, st = http("GET", f"{w.url}/connectors/{connector(CRASHED)}/status", timeout=2)
            c = (st or {}).get("connector", {}) if code == 200 else {}
            if c.get("state") == "UNASSIGNED" and "matches no worker" in c.get("trace", ""):
                return st
        return None

    st = wait_for(waiting_trace, 40, step=0.3)
    t_unassigned = time.monotonic()
    if check(st is not None, f"ship-h{CRASHED} is UNASSIGNED with the placement trace once the group drops "
                             f"h{CRASHED} ({t_unassigned - t_kill:.1f} s after the SIGKILL)"):
        trace = st["connector"]["trace"]
        say(f"ship-h{CRASHED} while h{CRASHED} is gone: {trace}")
        check(f"placement.labels=host=h{CRASHED}" in trace and f"host=h{CRASHED}}}" not in trace,
              f"the trace names the selector, and no worker with host=h{CRASHED}")
        # Its task too: the crashed worker's last word was RUNNING, and the
        # leader overwrites it (nobody else could).
        st = wait_for(lambda: (s := waiting_trace()) and all(
            t.get("state") == "UNASSIGNED" and "matches no worker" in t.get("trace", "") for t in s["tasks"]) and s,
            10, step=0.3)
        check(st is not None and len(st["tasks"]) == 1,
              f"ship-h{CRASHED}-0 is UNASSIGNED with the trace too, not RUNNING on the crashed worker: "
              f"{waiting_trace()}")
    mark = os.path.getsize(crashed.out_path)
    back3 = Worker(CRASHED, kc, work, bootstrap, group="shipper", overrides=overrides(work, CRASHED),
                   port=crashed.port)
    t_start3 = time.monotonic()
    cluster.workers = [back3 if w is crashed else w for w in cluster.workers]
    ws[CRASHED] = back3
    if not wait_for(lambda: on_hosts(cluster, HOSTS), 60, step=0.2):
        raise Abort(f"ship-h{CRASHED} never ran on h{CRASHED} again")
    t_back3 = time.monotonic()
    say(f"ship-h{CRASHED} RUNNING on h{CRASHED} again {t_back3 - t_start3:.1f} s after the start "
        f"({t_back3 - t_kill:.1f} s after the SIGKILL)")
    running_elsewhere = [s for s in sampler.states[CRASHED] if t_kill < s[0] < t_back3 and s[2] == "RUNNING"
                         and s[3] != crashed_id]
    check(not running_elsewhere, f"ship-h{CRASHED}-0 never RUNNING elsewhere while h{CRASHED} was gone: "
                                 f"{running_elsewhere[:3]}")
    states = sorted({(s[1], s[2]) for s in sampler.states[CRASHED] if t_kill < s[0] < t_back3})
    say(f"ship-h{CRASHED} (connector, task) states sampled while it waited: {states}")
    append(paths[CRASHED], [f"h{CRASHED} once it is back {i}" for i in range(10)])
    want, got = wait_lines(bootstrap, CRASHED, paths[CRASHED], 40)
    lost = [l for l in want if l not in set(got)]
    dup = len(got) - len(set(got))
    say(f"log-h{CRASHED}: {len(want)} lines written, {len(got)} read, {len(lost)} lost, {dup} duplicated "
        f"(at least once: a SIGKILL may resend what came after the last offset flush)")
    check(not lost, f"no line of h{CRASHED}.log lost: {lost[:5]}")

    # 4. A fourth worker without labels joins and gets nothing pinned.
    w4 = Worker(4, kc, work, bootstrap, group="shipper", overrides=overrides(work, 4))
    labels[w4.worker_id] = {}
    cluster.workers.append(w4)
    wait_healthy([w4], 60)
    gen = w4.applied_generation()
    say(f"worker 4 (no labels) applied generation {gen}")
    t4 = time.monotonic()
    quiet = True
    while time.monotonic() - t4 < 5:
        code, body = http("GET", w4.url + "/worker?rebalances=0", timeout=2)
        if code == 200 and (body.get("connectors") or body.get("tasks")):
            quiet = False
            say(f"worker 4 owns {body.get('connectors')} {body.get('tasks')}")
        time.sleep(0.3)
    check(quiet, "worker 4 (no labels) owns no connector and no task for 5 s after it joined")
    code, body = http("GET", w4.url + "/cluster?rebalances=0", timeout=3)
    check(code == 200 and len(body.get("workers", [])) == 4,
          f"/cluster lists 4 workers ({code}, {len((body or {}).get('workers', [])) if code == 200 else body})")
    check(on_hosts(cluster, HOSTS), "the three connectors still run on their hosts")

    # 5. Nobody is h9: UNASSIGNED with the placement trace.
    if not put_connector(cluster.workers, "ship-h9", {
            "connector.class": "FileStreamSource", "file": os.path.join(work, "h9.log"), "topic": "log-h9",
            "tasks.max": "1", "placement.labels": "host=h9"}):
        raise Abort("cannot create ship-h9")

    def h9_status():
        for w in cluster.workers:
            code, st = http("GET", f"{w.url}/connectors/ship-h9/status", timeout=2)
            if code == 200 and st.get("connector", {}).get("state") == "UNASSIGNED" and \
                    "matches no worker" in st.get("connector", {}).get("trace", ""):
                return st
        return None

    st = wait_for(h9_status, 40, step=0.3)
    if check(st is not None, "ship-h9 is UNASSIGNED with a placement trace"):
        trace = st["connector"]["trace"]
        say(f"ship-h9 trace: {trace}")
        check("placement.labels=host=h9" in trace, "the trace names the selector")
        check(all(f"host=h{n}" in trace for n in HOSTS) and "{}" in trace, "the trace names every worker's labels")
    time.sleep(1.0)  # one more second of samples with ship-h9 configured

    sampler.stop.set()
    sampler.join(10)
    # The logs, which see every instant: only worker N started ship-hN.
    for w in cluster.workers:
        for n in HOSTS:
            if w.n != n:
                check(starts_in_log(w, connector(n)) == 0, f"worker {w.n} never started ship-h{n} (log)")
    say(f"sampler: {sampler.samples} samples ({sampler.cluster_views} /cluster, {sampler.status_views} status), "
        f"{len(sampler.violations)} violations")
    check(sampler.samples >= 50, f"the sampler took at least 50 samples ({sampler.samples})")
    check(not sampler.violations, f"no sample showed a pinned connector or task on a wrong host: "
                                  f"{sampler.violations[:5]}")


if __name__ == "__main__":
    sys.exit(run_main("kc-per-host-shipper-", scenario))
