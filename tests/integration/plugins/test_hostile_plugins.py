#!/usr/bin/env python3
"""Resource caps and call deadlines against misbehaving plugins (issue 23, item 3).

usage: test_hostile_plugins.py KCONNECTD HOSTILE_PLUGIN_DIR

A mock broker and two workers with plugin.path = HOSTILE_PLUGIN_DIR
(tests/integration/plugins/hostile_plugin.c), connector.call.timeout.ms =
2000, task.shutdown.graceful.timeout.ms = 2000, tasks.max.limit = 50. A
canary (SequenceSource into a FileStreamSink) runs throughout.

1. Stalls: test.StallSourceConnector with stall.in = start / taskConfigs /
   poll, test.StallSinkConnector with stall.in = put: the connector (start,
   taskConfigs) or its task (poll, put) is FAILED with a trace naming the
   call and the deadline; pause and DELETE of each answer within 10 s and
   the connector is gone from both workers; a stall in stop() does not hold
   DELETE either. The canary keeps producing.
2. test.UnboundedSourceConnector (adds 4 KiB task configs until the host
   refuses): FAILED at the cap of 50 configs, RSS of both workers stays
   under 400 MiB, both keep serving. With extra.tasks=2 and tasks.max=1 it
   fails with Connect's KIP-1004 message; with tasks.max.enforce=false it
   runs its 3 tasks.
3. A config with tasks.max=1000000000 written straight to the config topic
   (kcat, bypassing REST): FAILED naming tasks.max and the limit; the leader
   keeps answering; after SIGTERM to the leader, the other worker leads
   and keeps answering, RSS bounded.
4. SIGTERM to a worker whose plugins are stuck (abandoned start,
   taskConfigs, stop, poll, put threads; on the last worker a task stuck in
   poll() right then): it exits 0 within the graceful timeout +
   worker.sync.timeout.ms + 5 s (+ 3 s slack for the process itself).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import (Abort, Worker, check, connector_status, create_connector, http, run_main, say,  # noqa: E402
                        start_broker, wait_for, wait_healthy)

HOSTILE = sys.argv[2]
CALL_MS = 2000
GRACEFUL_MS = 2000
SYNC_MS = 3000  # worker.sync.timeout.ms default
LIMIT = 50
ANSWER_S = 10   # pause / DELETE must answer within this
RSS_BOUND_KB = 400 * 1024


def rss_kb(w):
    try:
        with open(f"/proc/{w.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def status(workers, name):
    return connector_status([w for w in workers if w.alive()], name) or {}


def connector_failed(workers, name, *parts):
    st = status(workers, name).get("connector", {})
    return st.get("state") == "FAILED" and all(p in (st.get("trace") or "") for p in parts)


def task_failed(workers, name, *parts):
    tasks = status(workers, name).get("tasks", [])
    return any(t.get("state") == "FAILED" and all(p in (t.get("trace") or "") for p in parts) for t in tasks)


def timed(method, url, body=None):
    t0 = time.monotonic()
    code, resp = http(method, url, body, timeout=ANSWER_S + 5)
    return code, resp, time.monotonic() - t0


def leader_of(workers):
    for w in workers:
        if not w.alive():
            continue
        recs = w.rebalances() or []
        if recs and recs[-1].get("is_leader"):
            return w
    return None


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, ["canary-data:1"])
    overrides = {"plugin.path": HOSTILE, "connector.call.timeout.ms": str(CALL_MS),
                 "task.shutdown.graceful.timeout.ms": str(GRACEFUL_MS), "tasks.max.limit": str(LIMIT)}
    w1 = Worker(1, kc, work, bootstrap, group="hostile-plugins", overrides=overrides)
    cluster.workers.append(w1)
    wait_healthy([w1])
    w2 = Worker(2, kc, work, bootstrap, group="hostile-plugins", overrides=overrides)
    cluster.workers.append(w2)
    wait_healthy([w2])
    ws = [w1, w2]

    canary_file = os.path.join(work, "canary.txt")

    def canary_lines():
        try:
            with open(canary_file) as f:
                return len(f.read().splitlines())
        except FileNotFoundError:
            return 0

    def canary_producing(what):
        before = canary_lines()
        ok = wait_for(lambda: canary_lines() > before + 5, 30)
        check(ok, f"canary keeps producing {what} ({before} -> {canary_lines()} lines)")

    check(create_connector(ws, {"name": "canary", "config": {
        "connector.class": "SequenceSource", "tasks.max": "1", "topic": "canary-data", "throughput": "20"}}),
        "canary source created")
    check(create_connector(ws, {"name": "canary-sink", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "topics": "canary-data", "file": canary_file}}),
        "canary sink created")
    canary_producing("at the start")

    # ------------------------------------------------------------ 1. stalls
    stalls = [("st-start", "test.StallSourceConnector", "start", connector_failed),
              ("st-taskconfigs", "test.StallSourceConnector", "taskConfigs", connector_failed),
              ("st-poll", "test.StallSourceConnector", "poll", task_failed),
              ("st-put", "test.StallSinkConnector", "put", task_failed)]
    for name, cls, call, failed in stalls:
        conf = {"connector.class": cls, "tasks.max": "1", "stall.in": call}
        if cls.endswith("SinkConnector"):
            conf["topics"] = "canary-data"
        check(create_connector(ws, {"name": name, "config": conf}), f"{name} created")
    for name, cls, call, failed in stalls:
        parts = (f"{call}() ", f"did not return within {CALL_MS} ms", "connector.call.timeout.ms")
        ok = wait_for(lambda: failed(ws, name, *parts), 40)
        check(ok, f"{name}: FAILED naming {call}(): {json.dumps(status(ws, name))[:600]}")
    check(create_connector(ws, {"name": "st-stop", "config": {
        "connector.class": "test.StallSourceConnector", "tasks.max": "1", "stall.in": "stop"}}), "st-stop created")
    wait_for(lambda: status(ws, "st-stop").get("connector", {}).get("state") == "RUNNING", 30)
    check(all(w.alive() and w.healthy() for w in ws), "both workers healthy with four stalled plugins")
    canary_producing("while four plugins are stalled")

    for name in ["st-poll", "st-put", "st-start"]:
        code, _, secs = timed("PUT", f"{w1.url}/connectors/{name}/pause")
        check(code == 202 and secs < ANSWER_S, f"pause {name} answered {code} in {secs:.1f} s")
    for name in ["st-start", "st-taskconfigs", "st-stop", "st-poll", "st-put"]:
        code, resp, secs = timed("DELETE", f"{w2.url}/connectors/{name}")
        check(code == 204 and secs < ANSWER_S, f"DELETE {name} answered {code} in {secs:.1f} s: {resp}")
        ok = wait_for(lambda: all(http("GET", f"{w.url}/connectors/{name}")[0] == 404 for w in ws), 20)
        check(ok, f"{name} gone on both workers")
    # (a rebalance after each delete: healthy again once it is applied)
    check(wait_for(lambda: all(w.alive() and w.healthy() for w in ws), 30), "both workers healthy after the deletes")
    canary_producing("after the deletes")

    # ------------------------------------------------------------ 2. unbounded task configs
    check(create_connector(ws, {"name": "unbounded", "config": {
        "connector.class": "test.UnboundedSourceConnector", "tasks.max": "1"}}), "unbounded created")
    ok = wait_for(lambda: connector_failed(ws, "unbounded", "more task configs than this worker accepts",
                                           f"{LIMIT} configs, tasks.max.limit"), 40)
    check(ok, f"unbounded FAILED at the cap: {json.dumps(status(ws, 'unbounded'))[:600]}")
    rss = [rss_kb(w) for w in ws]
    check(all(0 < r < RSS_BOUND_KB for r in rss), f"RSS of both workers under {RSS_BOUND_KB} KiB: {rss}")
    check(all(http("GET", f"{w.url}/connectors")[0] == 200 for w in ws), "both workers serve GET /connectors")

    check(create_connector(ws, {"name": "too-many", "config": {
        "connector.class": "test.UnboundedSourceConnector", "tasks.max": "1", "extra.tasks": "2"}}),
        "too-many created")
    want = ("The connector too-many has generated 3 tasks, which is greater than 1, the maximum number of tasks it "
            "is configured to create. This behaviour should be considered a bug and is disallowed.")
    ok = wait_for(lambda: connector_failed(ws, "too-many", want, "'tasks.max.enforce' set to false"), 40)
    check(ok, f"too-many FAILED with Connect's message: {json.dumps(status(ws, 'too-many'))[:700]}")
    check(create_connector(ws, {"name": "lenient", "config": {
        "connector.class": "test.UnboundedSourceConnector", "tasks.max": "1", "extra.tasks": "2",
        "tasks.max.enforce": "false"}}), "lenient created")
    ok = wait_for(lambda: len(status(ws, "lenient").get("tasks", [])) == 3 and
                  status(ws, "lenient").get("connector", {}).get("state") == "RUNNING", 40)
    check(ok, f"tasks.max.enforce=false keeps the 3 task configs: {json.dumps(status(ws, 'lenient'))[:500]}")
    check(any("has generated 3 tasks, which is greater than 1" in w.log() and "tasks.max.enforce=false" in w.log()
              for w in ws), "the lenient case logs Connect's warning")

    # ------------------------------------------------------------ 3. a stored tasks.max=1000000000
    value = json.dumps({"properties": {"connector.class": "SequenceSource", "name": "huge", "topic": "canary-data",
                                       "tasks.max": "1000000000"}})
    p = subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", "connect-configs", "-K", "\t"],
                       input=f"connector-huge\t{value}\n", text=True, capture_output=True, timeout=30)
    check(p.returncode == 0, f"config record written with kcat: {p.stderr[-300:]}")
    huge_parts = ("tasks.max", "Invalid value 1000000000", f"no more than {LIMIT} (the worker's tasks.max.limit)")
    ok = wait_for(lambda: connector_failed(ws, "huge", *huge_parts), 40)
    check(ok, f"huge FAILED naming tasks.max and the limit: {json.dumps(status(ws, 'huge'))[:600]}")
    check(not status(ws, "huge").get("tasks"), "no task configs generated for huge")
    leader = leader_of(ws)
    check(leader is not None, "a leader is known")
    if leader is None:
        return
    other = w2 if leader is w1 else w1
    check(all(http("GET", f"{w.url}/connectors")[0] == 200 for w in ws), "both workers answer with huge stored")
    check(all(rss_kb(w) < RSS_BOUND_KB for w in ws), f"RSS bounded: {[rss_kb(w) for w in ws]}")

    # ------------------------------------------------------------ 4. SIGTERM with stuck plugins
    bound_s = (GRACEFUL_MS + SYNC_MS + 5000) / 1000 + 3
    t0 = time.monotonic()
    leader.signal(signal.SIGTERM)
    code = leader.wait_exit(bound_s + 30)
    secs = time.monotonic() - t0
    check(code == 0 and secs < bound_s, f"leader (stuck plugins) exited {code} in {secs:.1f} s (bound {bound_s} s)")
    ok = wait_for(lambda: leader_of([other]) is other, 60)
    check(ok, "the other worker leads")
    ok = wait_for(lambda: connector_failed([other], "huge", *huge_parts), 40)
    check(ok, f"huge still FAILED under the new leader: {json.dumps(status([other], 'huge'))[:400]}")
    check(http("GET", f"{other.url}/connectors")[0] == 200 and wait_for(other.healthy, 30),
          "the new leader keeps answering and is healthy")
    check(rss_kb(other) < RSS_BOUND_KB, f"new leader's RSS bounded: {rss_kb(other)} KiB")
    canary_producing("under the new leader")
    check(create_connector([other], {"name": "st-final", "config": {
        "connector.class": "test.StallSourceConnector", "tasks.max": "1", "stall.in": "poll"}}), "st-final created")
    ok = wait_for(lambda: task_failed([other], "st-final", "poll() "), 40)
    check(ok, "a task stuck in poll() on the remaining worker (FAILED)")
    t0 = time.monotonic()
    other.signal(signal.SIGTERM)
    code = other.wait_exit(bound_s + 30)
    secs = time.monotonic() - t0
    check(code == 0 and secs < bound_s, f"last worker (stuck plugins) exited {code} in {secs:.1f} s")


if __name__ == "__main__":
    if not shutil.which("kcat"):
        print("kcat not found; skipping")
        sys.exit(0)
    sys.exit(run_main("kc-hostile-plugins-", scenario))
