#!/usr/bin/env python3
"""The operator surface of a live three-worker cluster (issue 5 tests).

usage: test_operator.py KCONNECTD

Starts `kconnectd mock-broker` and three workers, then:

 1. The kcctl-style curl workflow of Connect's quickstart, every write sent
    to a follower (so it is forwarded to the leader): GET /, plugins, create
    (201 + Location), duplicate (409), list, ?expand=status / ?expand=info,
    config GET/PUT/PATCH, tasks, task status, pause (PAUSED), resume
    (RUNNING), restart, bad JSON (400), unknown connector (404), delete (204,
    then 404). A duplicate create is 409 (Connect's stale-configuration
    answer while the create's rebalance runs, then "already exists"). Each answer's status code and JSON shape is checked.
 2. Six SequenceSource tasks run 2/2/2. `promtool check metrics` accepts
    every worker's GET /metrics, which carries the coordinator, rebalance,
    worker and per-task families.
 3. A fourth worker joins:
    - GET /health on a worker sampled every 50 ms answers 503
      {"status":"rebalancing"} at some point during the rebalance, 200
      before and after, and nothing else;
    - GET /rebalances shows the revoke round (an old worker's record with
      revoked tasks and how long each took to stop) and the assign round
      (the new worker's record, at the same or a higher generation, with
      assigned tasks);
    - only the tasks that moved were revoked, and they now run on the new
      worker.

Python 3 standard library plus `promtool` (Debian package prometheus).
Logs are kept (path printed) on failure or with KC_KEEP=1.
"""
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

from kc_harness import (Abort, Worker, check, create_connector, http, run_main, running_owners, say, start_broker,
                        wait_for, wait_healthy, leader_and_followers)

SEQ = "operator-seq"
SEQ_TOPIC = "operator-seq-data"
SEQ_TASKS = 6
FILE_CONN = "local-file-source"
OVERRIDES = {
    # The mock broker waits about session.timeout.ms - 1 s per rebalance.
    "session.timeout.ms": "5000",
    "heartbeat.interval.ms": "1000",
    "offset.flush.interval.ms": "1000",
}



def has_keys(obj, keys):
    return isinstance(obj, dict) and all(k in obj for k in keys)


def quickstart_workflow(workers, work):
    leader, followers = leader_and_followers(workers)
    if not check(leader is not None, "one worker reports itself leader in /rebalances"):
        raise Abort("no leader")
    f = followers[0].url
    say(f"leader {leader.worker_id}; writes go to follower {followers[0].worker_id}")

    code, body = http("GET", f + "/")
    check(code == 200 and has_keys(body, ["version", "commit", "kafka_cluster_id"]) and body["kafka_cluster_id"],
          f"GET / -> 200 with version, commit and the Kafka cluster id ({code} {body})")

    code, body = http("GET", f + "/connector-plugins")
    classes = [p.get("class") for p in body] if isinstance(body, list) else []
    check(code == 200 and "org.apache.kafka.connect.file.FileStreamSourceConnector" in classes,
          f"GET /connector-plugins lists FileStreamSourceConnector ({code})")
    code, body = http("GET", f + "/connector-plugins?connectorsOnly=false")
    kinds = {(p.get("class"), p.get("type")) for p in body} if isinstance(body, list) else set()
    check(code == 200 and ("org.apache.kafka.connect.json.JsonConverter", "converter") in kinds
          and ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter") in kinds,
          f"GET /connector-plugins?connectorsOnly=false lists converters and header converters ({code})")
    check(("org.apache.kafka.connect.transforms.InsertField$Value", "transformation") in kinds
          and ("org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "predicate") in kinds,
          "GET /connector-plugins?connectorsOnly=false lists transformations and predicates")
    code, body = http("GET", f + "/connector-plugins/org.apache.kafka.connect.transforms.InsertField$Value/config")
    names = [k.get("name") for k in body] if isinstance(body, list) else []
    check(code == 200 and "static.field" in names,
          f"GET /connector-plugins/InsertField$Value/config lists its keys ({code} {names})")

    input_path = os.path.join(work, "quickstart-input.txt")
    with open(input_path, "w") as fh:
        fh.write("one\ntwo\nthree\n")
    config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
              "file": input_path, "topic": "quickstart-lines", "tasks.max": "1"}
    code, body = None, None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # 409 while a rebalance is under way
        code, body = http("POST", f + "/connectors", {"name": FILE_CONN, "config": config}, timeout=15)
        if code != 409 or "rebalance" not in str(body).lower():
            break
        time.sleep(0.5)
    check(code == 201 and has_keys(body, ["name", "config", "tasks", "type"]) and body["name"] == FILE_CONN,
          f"POST /connectors on a follower -> 201 ConnectorInfo ({code} {body})")

    # A duplicate is 409: first Connect's "stale configuration" answer while
    # the rebalance the create started is under way, then "already exists".
    answers = []

    def duplicate_refused():
        c, b = http("POST", f + "/connectors", {"name": FILE_CONN, "config": config}, timeout=15)
        answers.append((c, b.get("message") if isinstance(b, dict) else b))
        return c == 409 and has_keys(b, ["error_code", "message"]) and "already exists" in b["message"]

    check(wait_for(duplicate_refused, 60, 0.5) and all(c == 409 for c, _ in answers),
          f"duplicate POST -> 409 error body, finally 'already exists' ({answers[-1]}, {len(answers)} tries)")

    def listed():
        c, b = http("GET", f + "/connectors")
        return c == 200 and FILE_CONN in (b or [])

    check(wait_for(listed, 30, 0.25), "GET /connectors on the follower lists it")

    def running_via_expand():
        c, b = http("GET", f + "/connectors?expand=status&expand=info")
        if c != 200 or not isinstance(b, dict) or FILE_CONN not in b:
            return None
        st = b[FILE_CONN].get("status", {})
        tasks = st.get("tasks", [])
        if st.get("connector", {}).get("state") == "RUNNING" and tasks and tasks[0].get("state") == "RUNNING":
            return b[FILE_CONN]
        return None

    entry = wait_for(running_via_expand, 60, 0.25)
    check(entry is not None and has_keys(entry, ["status", "info"])
          and has_keys(entry["status"], ["name", "connector", "tasks", "type"])
          and has_keys(entry["status"]["connector"], ["state", "worker_id"])
          and has_keys(entry["info"], ["name", "config", "tasks", "type"]),
          f"?expand=status&expand=info has Connect's shape with the task RUNNING ({entry})")

    code, body = http("GET", f"{f}/connectors/{FILE_CONN}/config")
    check(code == 200 and body.get("file") == input_path and body.get("name") == FILE_CONN,
          f"GET config ({code} {body})")
    config2 = dict(config, **{"batch.size": "100"})
    code, body = http("PUT", f"{f}/connectors/{FILE_CONN}/config", config2, timeout=15)
    check(code == 200 and body.get("config", {}).get("batch.size") == "100", f"PUT config update -> 200 ({code})")
    code, body = http("PATCH", f"{f}/connectors/{FILE_CONN}/config", {"batch.size": None}, timeout=15)
    check(code == 200 and "batch.size" not in body.get("config", {"batch.size": 1}),
          f"PATCH config with null removes the key -> 200 ({code} {body})")

    code, body = http("GET", f"{f}/connectors/{FILE_CONN}/tasks")
    check(code == 200 and isinstance(body, list) and body and has_keys(body[0], ["id", "config"])
          and body[0]["id"] == {"connector": FILE_CONN, "task": 0}, f"GET tasks ({code} {body})")

    def task_state():
        c, b = http("GET", f"{f}/connectors/{FILE_CONN}/tasks/0/status")
        return b.get("state") if c == 200 and isinstance(b, dict) else None

    check(wait_for(lambda: task_state() == "RUNNING", 60, 0.25), "task 0 status RUNNING")
    code, _ = http("PUT", f"{f}/connectors/{FILE_CONN}/pause")
    check(code == 202, f"PUT pause -> 202 ({code})")
    check(wait_for(lambda: task_state() == "PAUSED", 30, 0.25), f"task PAUSED after pause ({task_state()})")
    code, _ = http("PUT", f"{f}/connectors/{FILE_CONN}/resume")
    check(code == 202, f"PUT resume -> 202 ({code})")
    check(wait_for(lambda: task_state() == "RUNNING", 30, 0.25), f"task RUNNING after resume ({task_state()})")
    code, _ = http("POST", f"{f}/connectors/{FILE_CONN}/restart", timeout=15)
    check(code == 204, f"POST restart -> 204 ({code})")

    code, body = http("GET", f + "/connectors/no-such-connector/status")
    check(code == 404 and has_keys(body, ["error_code", "message"]), f"unknown connector -> 404 ({code} {body})")
    code, body = http("POST", f + "/connectors", raw=b'{"name": "x", "config": ')
    check(code == 400 and has_keys(body, ["error_code", "message"]), f"bad JSON -> 400 ({code} {body})")

    active_topics(f)
    plugin_and_offsets(f, input_path)

    code, _ = http("DELETE", f"{f}/connectors/{FILE_CONN}", timeout=15)
    check(code == 204, f"DELETE -> 204 ({code})")
    check(wait_for(lambda: http("GET", f"{f}/connectors/{FILE_CONN}")[0] == 404, 30, 0.25),
          "GET after DELETE -> 404")


def retry_conflict(method, url, body=None):
    """A write through the follower, retried while a rebalance answers 409."""
    deadline = time.monotonic() + 60
    while True:
        code, resp = http(method, url, body, timeout=15)
        if code != 409 or time.monotonic() > deadline:
            return code, resp
        time.sleep(0.5)


def active_topics(f):
    """Topic tracking: the running source's topic is listed, reset clears it."""
    url = f"{f}/connectors/{FILE_CONN}/topics"
    want = {FILE_CONN: {"topics": ["quickstart-lines"]}}
    check(wait_for(lambda: http("GET", url) == (200, want), 30, 0.25),
          f"GET topics lists the source's topic ({http('GET', url)})")
    code, body = http("PUT", url + "/reset")
    check(code == 202 and body is None, f"PUT topics/reset -> 202 ({code} {body})")
    check(http("GET", url) == (200, {FILE_CONN: {"topics": []}}), f"no topics after reset ({http('GET', url)})")


def plugin_and_offsets(f, input_path):
    """Plugin config, validate and the KIP-875 offsets API on the real herder
    (writes are forwarded from the follower to the leader)."""
    code, body = http("GET", f + "/connector-plugins/FileStreamSource/config")
    names = [k.get("name") for k in body] if code == 200 and isinstance(body, list) else []
    # A source plugin's own keys, then KIP-618's exactly-once keys (issue 14:
    # the plugin config reports a connector's exactly-once settings).
    check(names == ["file", "topic", "batch.size", "exactly.once.support", "transaction.boundary",
                    "transaction.boundary.interval.ms", "offsets.storage.topic"],
          f"GET plugin config lists its keys ({code} {body})")
    code, body = http("PUT", f + "/connector-plugins/FileStreamSource/config/validate",
                      {"connector.class": "FileStreamSource", "name": "v", "tasks.max": "0", "topic": "t"})
    check(code == 200 and isinstance(body, dict) and body.get("error_count") == 2,
          f"validate -> 200 with 2 errors (tasks.max, file) ({code} {body})")
    code, body = retry_conflict("POST", f + "/connectors",
                                {"name": "bad", "config": {"connector.class": "FileStreamSource"}})
    check(code == 400 and "contains the following 2 error(s)" in str(body),
          f"create with missing file/topic -> 400 listing both ({code} {body})")

    url = f"{f}/connectors/{FILE_CONN}/offsets"
    code, body = http("GET", url, timeout=15)
    check(code == 200 and isinstance(body, dict) and isinstance(body.get("offsets"), list),
          f"GET offsets ({code} {body})")
    code, body = retry_conflict("DELETE", url)
    check(code == 400 and "STOPPED state" in str(body), f"DELETE offsets of a running connector -> 400 ({code} {body})")
    code, _ = retry_conflict("PUT", f"{f}/connectors/{FILE_CONN}/stop")
    check(code == 204, f"PUT stop -> 204 ({code})")
    partition = {"filename": input_path}

    def offsets():
        c, b = http("GET", url, timeout=15)
        return b.get("offsets") if c == 200 and isinstance(b, dict) else None

    whole_file = [{"partition": partition, "offset": {"position": 14}}]  # "one\ntwo\nthree\n"
    check(wait_for(lambda: offsets() == whole_file, 30, 0.25), f"committed offset after stop ({offsets()})")
    code, body = retry_conflict("PATCH", url, {"offsets": [{"partition": partition, "offset": {"position": 4}}]})
    check(code == 200 and body == {"message": "The offsets for this connector have been altered successfully"},
          f"PATCH offsets -> 200 ({code} {body})")
    check(offsets() == [{"partition": partition, "offset": {"position": 4}}], f"altered offset read back ({offsets()})")
    code, body = retry_conflict("DELETE", url)
    check(code == 200 and body == {"message": "The offsets for this connector have been reset successfully"},
          f"DELETE offsets -> 200 ({code} {body})")
    check(offsets() == [], f"no offsets after reset ({offsets()})")


def metrics_check(workers, work):
    promtool = shutil.which("promtool")
    if not check(promtool is not None, "promtool is installed (Debian package prometheus; scripts/setup)"):
        return
    families = ["kconnectd_coordinator_assigned_tasks", "kconnectd_coordinator_heartbeats_total",
                "kconnectd_rebalance_completed_total", "kconnectd_rebalance_epoch",
                "kconnectd_worker_tasks_running", "kconnectd_task_status"]
    for w in workers:
        with urllib.request.urlopen(w.url + "/metrics", timeout=5) as r:
            text = r.read().decode()
            ctype = r.headers.get("Content-Type", "")
        path = os.path.join(work, f"metrics-{w.n}.txt")
        with open(path, "w") as fh:
            fh.write(text)
        res = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
        check(res.returncode == 0, f"worker {w.n}: promtool check metrics on {len(text.splitlines())} lines "
                                   f"(rc {res.returncode}) {res.stdout.strip()} {res.stderr.strip()}")
        check(ctype.startswith("text/plain"), f"worker {w.n}: /metrics Content-Type {ctype}")
        missing = [fam for fam in families if f"\n{fam}" not in "\n" + text]
        check(not missing, f"worker {w.n}: /metrics has {len(families) - len(missing)}/{len(families)} "
                           f"checked families (missing {missing})")


def join_rebalance(workers, kc, work, bootstrap):
    """Step 3; appends the fourth worker to `workers`."""
    if not create_connector(workers, {"name": SEQ, "config": {
            "connector.class": "SequenceSource", "topic": SEQ_TOPIC, "tasks.max": str(SEQ_TASKS),
            "throughput": "20"}}):
        raise Abort("cannot create the SequenceSource connector")

    def spread(ws, counts):
        owners = running_owners(ws, SEQ)
        if len(owners) != SEQ_TASKS:
            return False
        per = sorted(sum(1 for o in owners.values() if o == w.worker_id) for w in ws)
        return per == counts

    if not wait_for(lambda: spread(workers, [2, 2, 2]), 90, 0.25):
        raise Abort(f"SequenceSource tasks never RUNNING 2/2/2: {running_owners(workers, SEQ)}")
    before = running_owners(workers, SEQ)
    say(f"six tasks RUNNING 2/2/2: {before}")
    metrics_check(workers, work)  # with tasks running, so the per-task families have samples
    gen_before = max(r["generation"] for w in workers for r in (w.rebalances() or []))

    # Sample /health on worker 1 while the fourth worker joins.
    samples = []
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            code, body = http("GET", workers[0].url + "/health", timeout=2)
            samples.append((time.monotonic(), code, body.get("status") if isinstance(body, dict) else body,
                            body.get("worker_state") if isinstance(body, dict) else None))
            time.sleep(0.05)

    t = threading.Thread(target=sampler, daemon=True)
    t.start()
    time.sleep(0.5)
    w4 = Worker(4, kc, work, bootstrap, group="operator-test", overrides=OVERRIDES)
    old = list(workers)
    workers.append(w4)  # the caller's list: stopped at the end
    all4 = workers
    balanced = wait_for(lambda: spread(all4, [1, 1, 2, 2]), 120, 0.25)
    # The moved tasks run on the new worker from the revoking round on (the
    # hand-over); the old owners' follow-up round may still be running. A
    # worker is briefly Running between the revoking round and the follow-up
    # one, so "after the join" means healthy for 2 s on end.
    def healthy_for(seconds):
        if not samples or samples[-1][1:3] != (200, "healthy"):
            return False
        since = samples[-1][0]
        for ts, code, status, _ in reversed(samples):
            if (code, status) != (200, "healthy"):
                break
            since = ts
        return samples[-1][0] - since >= seconds

    wait_for(lambda: healthy_for(2.0), 45, 0.25)
    time.sleep(1.0)
    stop.set()
    t.join()
    check(balanced, f"after the join the six tasks run 2/2/1/1 over four workers: {running_owners(all4, SEQ)}")

    codes = [(c, s) for _, c, s, _ in samples]
    # /health names the herder's lifecycle state: healthy only when Running,
    # rebalancing in one of the membership states of a round.
    states = {(s, ws) for _, _, s, ws in samples}
    check({ws for s, ws in states if s == "healthy"} == {"Running"},
          f"/health healthy comes with worker_state Running ({sorted(states, key=str)})")
    check({ws for s, ws in states if s == "rebalancing"} <= {"Revoking", "Joining", "Applying", "Running"},
          f"/health rebalancing comes with a round's worker_state ({sorted(states, key=str)})")
    check(codes and codes[0] == (200, "healthy"), f"/health 200 healthy before the join ({codes[:1]})")
    check(codes and codes[-1] == (200, "healthy"), f"/health 200 healthy after the join ({codes[-1:]})")
    check((503, "rebalancing") in codes, f"/health answered 503 rebalancing during the rebalance "
                                         f"({sum(1 for c in codes if c == (503, 'rebalancing'))} of {len(codes)} samples)")
    odd = sorted({c for c in codes if c not in ((200, "healthy"), (503, "rebalancing"))}, key=str)
    check(not odd, f"/health gave only 200 healthy or 503 rebalancing (others: {odd})")

    # The revoke round on an old worker; the assign round on the new one is
    # the same round (rebalance.hand.over.enable, the default) or a later one.
    revokes = [(w, r) for w in old for r in (w.rebalances() or [])
               if r["generation"] > gen_before and r["revoked"]["tasks"]]
    assigns = [r for r in (w4.rebalances() or []) if r["assigned"]["tasks"]]
    check(revokes, f"/rebalances of an old worker shows a round revoking tasks after the join: "
                   f"{[(w.n, r['generation'], r['revoked']['tasks']) for w, r in revokes]}")
    check(assigns, f"/rebalances of the new worker shows a round assigning tasks: "
                   f"{[(r['generation'], r['assigned']['tasks']) for r in assigns]}")
    if revokes and assigns:
        check(max(r["generation"] for r in assigns) >= min(r["generation"] for _, r in revokes),
              "the assign round is the revoke round (hand-over) or comes after it")
        rec = revokes[0][1]
        check(has_keys(rec, ["generation", "reason", "protocol", "leader", "join_started_ms", "sync_done_ms",
                             "assignment_applied_ms", "assigned", "revoked", "delay_ms", "task_stops"])
              and rec["protocol"] == "sessioned",
              f"a /rebalances record has the documented fields ({sorted(rec)})")
        stops = {s["task"] for s in rec["task_stops"]}
        check(stops == set(rec["revoked"]["tasks"]) and all(s["stop_ms"] >= 0 for s in rec["task_stops"]),
              f"the revoke round records how long each revoked task took to stop ({rec['task_stops']})")
    # Only what moved was revoked, and it moved to the new worker.
    after = running_owners(all4, SEQ)
    moved = {t for t in before if after.get(t) != before[t]}
    revoked = [t for _, r in revokes for t in r["revoked"]["tasks"]]
    moved_names = {f"{SEQ}-{t}" for t in moved}
    check(sorted(revoked) == sorted(moved_names) and all(after[t] == w4.worker_id for t in moved),
          f"exactly the tasks that moved were revoked, and they run on the new worker "
          f"(revoked {revoked}, moved {sorted(moved_names)})")


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, [f"{SEQ_TOPIC}:6", "quickstart-lines:1"])
    say(f"mock broker at {bootstrap}")
    workers = cluster.workers = [Worker(n, kc, work, bootstrap, group="operator-test", overrides=OVERRIDES)
                                 for n in (1, 2, 3)]
    wait_healthy(workers)
    say("workers healthy on ports " + ", ".join(str(w.port) for w in workers))
    quickstart_workflow(workers, work)
    join_rebalance(workers, kc, work, bootstrap)


if __name__ == "__main__":
    sys.exit(run_main("kc-operator-", scenario))
