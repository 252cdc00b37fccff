#!/usr/bin/env python3
"""Acceptance test of MirrorSourceConnector (issue 12, deliverable 3).

Two `kconnectd mock-broker` clusters, "src" and the target; two workers on
the target run two mirror connectors with tasks.max=2:
  mirror-orders: topics orders.*, DefaultReplicationPolicy (src.orders);
  mirror-events: topics events.*, IdentityReplicationPolicy (events).
Two connectors on two workers: balance puts one on a follower, so one of
the new-topic reconfigurations goes follower -> leader.

Checks: partitions, keys, values, headers and timestamps kept; new topics
followed; after a SIGTERM of a worker running mirror tasks and its return
the per-partition counts are exact (no loss, no duplicate); after a SIGKILL
mid-stream and return every record is there and the duplicates are at most
the last uncommitted window (rate x (2 x offset.flush.interval.ms + 1 s)).

argv: kconnectd binary, mirror_tool binary. Python 3 stdlib only.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
import kc_harness as h  # noqa: E402
from kc_harness import Abort, check, say, wait_for  # noqa: E402

TOOL = os.path.abspath(sys.argv[2])
FLUSH_MS = 1000
RATE = 400  # records/s of the background producer
BASE_TS = 1700000000000


def start_cluster(kc, work, name, topics):
    """A mock-broker with `topics` and a control port; returns (proc, bootstrap, control port)."""
    d = os.path.join(work, name)
    os.makedirs(d)
    bf, cf = os.path.join(d, "bootstrap"), os.path.join(d, "control")
    args = [kc, "mock-broker", "--bootstrap-file", bf, "--control-port", "0", "--control-file", cf]
    for t in topics:
        args += ["--topic", t]
    proc = subprocess.Popen(args, stdout=open(os.path.join(d, "out"), "wb"), stderr=subprocess.STDOUT)
    if not wait_for(lambda: os.path.exists(bf) and open(bf).read().strip(), 30):
        raise Abort(f"mock-broker {name} wrote no bootstrap address")
    return proc, open(bf).read().split()[0], int(open(cf).read().strip())


def control(port, line):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall((line + "\n").encode())
        reply = s.makefile().readline().strip()
    if not reply.startswith("ok"):
        raise Abort(f"mock control '{line}': {reply}")


def produce(bootstrap, topic, partitions, start, count, rate=0, wait=True):
    p = subprocess.Popen([TOOL, "produce", bootstrap, topic, str(partitions), str(start), str(count), str(rate)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not wait:
        return p
    out = p.communicate(timeout=120)[0].decode()
    if p.returncode != 0:
        raise Abort(f"producing to {topic} failed: {out}")
    return None


def dump(bootstrap, topic):
    r = subprocess.run([TOOL, "dump", bootstrap, topic], capture_output=True, timeout=90)
    if r.returncode != 0:
        return None
    return [json.loads(line) for line in r.stdout.decode().splitlines() if line.strip()]


def hexs(s):
    return s.encode().hex()


def expected(i, partitions):
    return {"p": i % partitions, "k": hexs(f"k{i}"), "v": hexs(f"v{i}") + "00ff", "ts": BASE_TS + i,
            "h": [["idx", hexs(str(i))], ["nil", None]]}


def key_index(rec):
    return int(bytes.fromhex(rec["k"]).decode()[1:])


def wait_count(bootstrap, topic, n, timeout_s):
    """Waits until `topic` holds at least n records; returns the last dump."""
    last = [None]

    def enough():
        last[0] = dump(bootstrap, topic)
        return last[0] is not None and len(last[0]) >= n
    wait_for(enough, timeout_s, step=1.0)
    return last[0] or []


def check_exact(records, total, partitions, what, content=True):
    """Every record 0..total-1 exactly once, on its partition, in order, with
    its key, value, headers and timestamp."""
    by_p = {}
    for r in records:
        by_p.setdefault(r["p"], []).append(r)
    idx = sorted(key_index(r) for r in records)
    ok = check(idx == list(range(total)), f"{what}: {len(records)} records, every one of 0..{total - 1} exactly once")
    per_p = {p: len(v) for p, v in sorted(by_p.items())}
    want_p = {p: len(range(p, total, partitions)) for p in range(partitions) if len(range(p, total, partitions))}
    check(per_p == want_p, f"{what}: per-partition counts {per_p} == {want_p}")
    if content and ok:
        bad = [r for r in records if {k: r[k] for k in ("p", "k", "v", "ts", "h")} != expected(key_index(r), partitions)]
        check(not bad, f"{what}: partition, key, value, headers and timestamp kept" +
              (f" (first bad: {bad[0]})" if bad else ""))
        order = all([key_index(r) for r in v] == sorted(key_index(r) for r in v) for v in by_p.values())
        check(order, f"{what}: source order kept within each partition")


def busy_worker(workers, connector, topic):
    """The worker running a task of `connector` that mirrors partitions of
    `topic` (from GET /connectors/{c}/tasks and its status), or Abort."""
    def get_tasks():
        for w in workers:
            code, body = h.http("GET", f"{w.url}/connectors/{connector}/tasks", timeout=3)
            if code == 200 and isinstance(body, list) and body:
                return body
        return None
    tasks = wait_for(get_tasks, 30, step=0.5)
    if not tasks:
        raise Abort(f"GET /connectors/{connector}/tasks failed")
    ids = set()
    for t in tasks:
        parts = t["config"].get("task.assigned.partitions", "").split(",")
        if any(p.rsplit("-", 1)[0] == topic for p in parts):
            ids.add(t["id"]["task"])
    def owner():
        owners = h.running_owners(workers, connector)
        return next((w for w in workers if any(owners.get(i) == w.worker_id for i in ids)), None)
    w = wait_for(owner, 30, step=0.5)
    if w:
        say(f"worker {w.n} runs the task(s) {sorted(ids)} of {connector} that mirror {topic}")
        return w
    owners = h.running_owners(workers, connector)
    raise Abort(f"no running task of {connector} mirrors {topic} (tasks {tasks}, owners {owners})")


def scenario(kc, work, cluster):
    src, src_bs, src_ctl = start_cluster(kc, work, "source", ["orders:4", "events:2"])
    tgt, tgt_bs, tgt_ctl = start_cluster(kc, work, "target", ["src.orders:4", "events:2"])
    brokers = [src, tgt]
    try:
        run(kc, work, cluster, src_bs, src_ctl, tgt_bs, tgt_ctl)
    finally:
        for b in brokers:
            b.terminate()
            try:
                b.wait(timeout=5)
            except subprocess.TimeoutExpired:
                b.kill()


def run(kc, work, cluster, src_bs, src_ctl, tgt_bs, tgt_ctl):
    produce(src_bs, "orders", 4, 0, 2000)
    produce(src_bs, "events", 2, 0, 300)
    overrides = {"offset.flush.interval.ms": str(FLUSH_MS), "group.id": "mirror-test"}
    workers = [h.Worker(n, kc, work, tgt_bs, overrides=overrides) for n in (1, 2)]
    cluster.workers.extend(workers)
    h.wait_healthy(workers)
    common = {"tasks.max": "2", "source.cluster.alias": "src", "target.cluster.alias": "dst",
              "source.cluster.bootstrap.servers": src_bs, "refresh.topics.interval.ms": "2000",
              "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
              "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
              "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    if not h.create_connector(workers, {"name": "mirror-orders", "config": dict(
            common, **{"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
                       "topics": "orders.*"})}):
        raise Abort("mirror-orders not created")
    if not h.create_connector(workers, {"name": "mirror-events", "config": dict(
            common, **{"connector.class": "MirrorSource", "topics": "events.*",
                       "replication.policy.class": "IdentityReplicationPolicy"})}):
        raise Abort("mirror-events not created")

    # 1. Byte-for-byte copy.
    check_exact(wait_count(tgt_bs, "src.orders", 2000, 60), 2000, 4, "src.orders")
    check_exact(wait_count(tgt_bs, "events", 300, 60), 300, 2, "events (identity policy)")
    check(wait_for(lambda: len(h.running_owners(workers, "mirror-orders")) == 2, 30), "mirror-orders runs 2 tasks")

    # 2. New topics are followed (the mock has no CreateTopics: the target
    # topics are made here, the source ones appear later).
    marks = {w.n: len(w.log()) for w in workers}  # what was logged before the new topics
    control(tgt_ctl, "topic src.orders-new 3")
    control(tgt_ctl, "topic events-new 2")
    control(src_ctl, "topic orders-new 3")
    control(src_ctl, "topic events-new 2")
    produce(src_bs, "orders-new", 3, 0, 150)
    produce(src_bs, "events-new", 2, 0, 100)
    check_exact(wait_count(tgt_bs, "src.orders-new", 150, 60), 150, 3, "new topic src.orders-new")
    check_exact(wait_count(tgt_bs, "events-new", 100, 60), 100, 2, "new topic events-new")
    # Balance puts the two connectors on different workers, so one of the
    # two new topics reached its connector's tasks through a follower's
    # forwarded request.
    since = "".join(w.log()[marks[w.n]:] for w in workers)
    fwd = re.findall(r"connector (mirror-\w+) asked for a task reconfiguration; forwarding to the leader", since)
    check(bool(fwd), f"after the new topics, a follower forwarded its connector's request to the leader ({set(fwd)})")
    here = re.findall(r"connector (mirror-\w+) asked for a task reconfiguration\n", since)
    check(set(fwd) | set(here) == {"mirror-orders", "mirror-events"},
          f"both connectors asked for new task configs (through a follower: {set(fwd)}, on the leader: {set(here)})")
    # The internal endpoint itself is signed (KIP-507, connect.protocol
    # sessioned): the follower's forwarded request above was accepted, and an
    # unsigned one is refused by every worker with Connect's 400, before any
    # leader or connector check.
    for name in ("mirror-orders", "nope"):
        answers = [h.http("POST", f"{w.url}/connectors/{name}/tasks", timeout=5) for w in workers]
        codes = [c for c, _ in answers]
        signed_msg = all("Internal request missing required signature" in str(b) for _, b in answers)
        check(codes == [400, 400] and signed_msg,
              f"unsigned POST /connectors/{name}/tasks: 400 missing signature on every worker (got {answers})")

    # 3. Clean stop (SIGTERM) of a worker running mirror-orders tasks, mid-stream, and return.
    total = 2000
    victim = busy_worker(workers, "mirror-orders", "orders")
    p = produce(src_bs, "orders", 4, total, 2400, RATE, wait=False)
    total += 2400
    time.sleep(2)
    say(f"SIGTERM worker {victim.n}")
    victim.signal(signal.SIGTERM)
    check(victim.wait_exit(30) == 0, "SIGTERMed worker exited 0")
    back = h.Worker(3, kc, work, tgt_bs, overrides=overrides)
    cluster.workers.append(back)
    workers = [w for w in workers if w is not victim] + [back]
    h.wait_healthy([back])
    if p.wait(timeout=120) != 0:
        raise Abort("background producer failed")
    recs = wait_count(tgt_bs, "src.orders", total, 90)
    time.sleep(2 * FLUSH_MS / 1000 + 1)  # nothing more may arrive
    recs = dump(tgt_bs, "src.orders") or []
    check_exact(recs, total, 4, "after SIGTERM and return", content=False)

    # 4. SIGKILL mid-stream, and return.
    victim = busy_worker(workers, "mirror-orders", "orders")
    p = produce(src_bs, "orders", 4, total, 2400, RATE, wait=False)
    total += 2400
    time.sleep(3)
    say(f"SIGKILL worker {victim.n}")
    victim.proc.kill()
    victim.wait_exit(10)
    back = h.Worker(4, kc, work, tgt_bs, overrides=overrides)
    cluster.workers.append(back)
    workers = [w for w in workers if w is not victim] + [back]
    h.wait_healthy([back])
    if p.wait(timeout=120) != 0:
        raise Abort("background producer failed")
    recs = wait_count(tgt_bs, "src.orders", total, 120)

    def settled():
        a = len(dump(tgt_bs, "src.orders") or [])
        time.sleep(2 * FLUSH_MS / 1000 + 1)
        return a == len(dump(tgt_bs, "src.orders") or [])
    wait_for(settled, 60, step=0.5)
    recs = dump(tgt_bs, "src.orders") or []
    seen = {}
    for r in recs:
        seen[key_index(r)] = seen.get(key_index(r), 0) + 1
    missing = [i for i in range(total) if i not in seen]
    dups = len(recs) - len(seen)
    # The last uncommitted window: records sent since the last offset commit
    # that succeeded. A commit starts every offset.flush.interval.ms and covers
    # what was acked when it started; a kill during a commit's write leaves the
    # one before it as the last, so up to two intervals, plus about 1 s of
    # poll (<= 0.5 s) and produce latency.
    bound = RATE * (2 * FLUSH_MS + 1000) // 1000
    say(f"after SIGKILL: {len(recs)} records for {total} produced, {dups} duplicates (bound {bound})")
    check(not missing, f"after SIGKILL and return every record is present (missing {len(missing)})")
    check(set(seen) == set(range(total)), "no record that was never produced")
    check(dups <= bound, f"duplicates {dups} <= last uncommitted window {bound} "
          f"(rate {RATE}/s x (2 x offset.flush.interval.ms {FLUSH_MS} + 1000) ms)")
    bad = [r for r in recs if {k: r[k] for k in ("p", "k", "v", "ts", "h")} != expected(key_index(r), 4)]
    check(not bad, "after SIGKILL every mirrored record keeps partition, key, value, headers and timestamp")


if __name__ == "__main__":
    sys.exit(h.run_main("kc-mirror-", scenario))
