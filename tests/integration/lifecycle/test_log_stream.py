#!/usr/bin/env python3
"""One log stream and log levels of live workers (issue 27 item 2).

usage: test_log_stream.py KCONNECTD json|cluster

json: one worker with log.format=json and log.file on `kconnectd
  mock-broker`:
  - PUT /admin/loggers/librdkafka.producer DEBUG (scope worker) answers the
    changed names; bad bodies and levels are 400; GET shows DEBUG and
    last_modified;
  - a SequenceSource task created afterwards gets a producer with
    librdkafka's debug contexts: debug lines of logger librdkafka.producer
    naming the task's client.id reach the log file;
  - the broker is killed: librdkafka's connection failures reach the file;
  - EVERY line of the file parses as JSON, librdkafka's included, and
    nothing of librdkafka's reaches stdout/stderr raw ("%3|...|FAIL|...").
cluster: three workers; PUT /admin/loggers/<name>?scope=cluster through a
  follower answers 204, and GET /admin/loggers on all three shows the level
  with last_modified within 20 s; a fourth worker started afterwards ignores
  the older record (as Connect) and applies a new PUT made through it;
  scope=worker stays on one worker; a bad level is 400.

Python 3 standard library only. Logs kept on failure or with KC_KEEP=1.
"""
import json
import re
import signal
import sys
import time

from kc_harness import (Abort, Worker, check, create_connector, http, run_main, say, start_broker, wait_for,
                        wait_healthy, leader_and_followers)

OVERRIDES = {
    # The mock broker waits about session.timeout.ms - 1 s per rebalance.
    "session.timeout.ms": "5000",
    "heartbeat.interval.ms": "1000",
    "log.format": "json",
}
RAW_RDKAFKA = re.compile(r"%\d\|\d+\.\d+\|")  # librdkafka's own stderr form: %7|1700000000.123|FAC|...


def json_lines(path):
    """(parsed lines, lines that are not JSON objects) of a log file."""
    good, bad = [], []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            try:
                j = json.loads(line)
                (good if isinstance(j, dict) else bad).append(j if isinstance(j, dict) else line)
            except ValueError:
                bad.append(line)
    return good, bad


def rdkafka_lines(path, logger_prefix="librdkafka", level=None, part=""):
    good, _ = json_lines(path)
    return [j for j in good if str(j.get("logger", "")).startswith(logger_prefix)
            and (level is None or j.get("level") == level) and part in str(j.get("msg", ""))]


def scenario_json(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, ["logs-seq:1"])
    w = Worker(1, kc, work, bootstrap, log_file=True, overrides=OVERRIDES)
    cluster.workers.append(w)
    wait_healthy([w])

    code, body = http("PUT", w.url + "/admin/loggers/librdkafka.producer", {"level": "debug"})
    check(code == 200 and body == ["librdkafka.producer"],
          f"PUT librdkafka.producer DEBUG -> 200 [\"librdkafka.producer\"] ({code} {body})")
    code, body = http("GET", w.url + "/admin/loggers/librdkafka.producer")
    check(code == 200 and body.get("level") == "DEBUG" and isinstance(body.get("last_modified"), int),
          f"GET librdkafka.producer -> DEBUG with last_modified ({code} {body})")
    code, body = http("PUT", w.url + "/admin/loggers/librdkafka", {"level": "LOUD"})
    check(code == 400 and "LOUD" in json.dumps(body), f"an unknown level -> 400 naming it ({code} {body})")
    code, body = http("PUT", w.url + "/admin/loggers/librdkafka", {"lvl": "INFO"})
    check(code == 400, f"a body without level -> 400 ({code} {body})")
    code, body = http("GET", w.url + "/admin/loggers")
    check(code == 200 and body.get("root", {}).get("level") == "INFO" and body["root"].get("last_modified") is None
          and body.get("librdkafka.producer", {}).get("level") == "DEBUG",
          f"GET /admin/loggers lists root (never modified) and librdkafka.producer ({code} {body})")

    if not create_connector([w], {"name": "logs-seq", "config": {
            "connector.class": "SequenceSource", "topic": "logs-seq", "tasks.max": "1"}}):
        raise Abort("cannot create the SequenceSource connector")
    found = wait_for(lambda: rdkafka_lines(w.log_file, "librdkafka.producer", "debug", "connector-producer-"), 30)
    check(bool(found), "the task's producer, made after the change, logs librdkafka debug lines naming its client.id")

    def failures():
        return [j for j in rdkafka_lines(w.log_file) if j.get("level") in ("warning", "error")]

    before = len(failures())
    cluster.broker.kill()
    cluster.broker.wait()
    say("broker killed")
    failed = wait_for(lambda: len(failures()) > before and failures()[before:], 30)
    check(bool(failed), f"librdkafka's failures after the broker died reach log.file as JSON ({failed[:1] if failed else None})")
    w.signal(signal.SIGTERM)
    if w.wait_exit(40) is None:
        w.proc.kill()
        w.wait_exit(10)

    good, bad = json_lines(w.log_file)
    check(len(good) > 20 and not bad, f"every line of log.file is JSON ({len(good)} lines, not JSON: {bad[:3]})")
    loggers = {j.get("logger") for j in good}
    check("kconnectd" in loggers and any(str(n).startswith("librdkafka.") for n in loggers),
          f"the file holds the worker's lines and librdkafka's ({sorted(map(str, loggers))})")
    with open(w.out_path, errors="replace") as f:
        raw = [line for line in f if RAW_RDKAFKA.search(line)]
    check(not raw, f"nothing of librdkafka's reaches stdout/stderr raw ({raw[:3]})")



def level_of(w, name):
    code, body = http("GET", w.url + "/admin/loggers", timeout=3)
    if code != 200 or not isinstance(body, dict):
        return None
    return body.get(name)


def scenario_cluster(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, [])
    workers = [Worker(n, kc, work, bootstrap, log_file=True, overrides=OVERRIDES) for n in (1, 2, 3)]
    cluster.workers.extend(workers)
    wait_healthy(workers)
    leader = wait_for(lambda: leader_and_followers(workers)[0], 60)
    if not check(leader is not None, "one worker reports itself leader"):
        raise Abort("no leader")
    follower = leader_and_followers(workers)[1][0]
    say(f"leader {leader.worker_id}; PUT through follower {follower.worker_id}")

    name = "kip976.cluster.logger"
    code, body = http("PUT", f"{follower.url}/admin/loggers/{name}?scope=cluster", {"level": "DEBUG"}, timeout=30)
    check(code == 204 and body is None, f"PUT ?scope=cluster through a follower -> 204 No Content ({code} {body})")
    for w in workers:
        got = wait_for(lambda: (level_of(w, name) or {}).get("level") == "DEBUG" and level_of(w, name), 20)
        check(bool(got) and isinstance(got.get("last_modified"), int),
              f"worker {w.n} shows {name} DEBUG with last_modified ({got})")
        code, body = http("GET", f"{w.url}/admin/loggers/{name}")
        check(code == 200 and body.get("level") == "DEBUG", f"GET /admin/loggers/{name} on worker {w.n} ({code} {body})")

    code, body = http("PUT", f"{follower.url}/admin/loggers/{name}?scope=cluster", {"level": "CHATTY"})
    check(code == 400, f"an unknown level with scope=cluster -> 400, nothing written ({code} {body})")
    code, body = http("PUT", f"{leader.url}/admin/loggers/kip976.local", {"level": "ERROR"})
    check(code == 200 and body == ["kip976.local"], f"scope=worker answers the changed names ({code} {body})")
    time.sleep(2)
    check(level_of(follower, "kip976.local") is None, "a scope=worker change stays on its worker")

    late = Worker(4, kc, work, bootstrap, log_file=True, overrides=OVERRIDES)
    cluster.workers.append(late)
    wait_healthy([late])
    # As Connect: a worker started after the PUT ignores the older record
    # (a restart resets a cluster-wide level); a new PUT reaches it.
    time.sleep(2)
    got = level_of(late, name)
    check(got is None or got.get("level") != "DEBUG",
          f"a worker started after the PUT does not apply the older record ({got})")
    code, _ = http("PUT", f"{late.url}/admin/loggers/{name}?scope=cluster", {"level": "DEBUG"})
    check(code == 204, f"PUT ?scope=cluster through the new worker -> 204 ({code})")
    got = wait_for(lambda: (level_of(late, name) or {}).get("level") == "DEBUG" and level_of(late, name), 20)
    check(bool(got), f"the new worker applies a PUT made after it started ({got})")
    for w in workers + [late]:
        got = level_of(w, name) or {}
        check(got.get("level") == "DEBUG", f"worker {w.n} still shows {name} DEBUG ({got})")
        _, bad = json_lines(w.log_file)
        check(not bad, f"worker {w.n}: every line of log.file is JSON ({bad[:2]})")


if __name__ == "__main__":
    mode = sys.argv[2] if len(sys.argv) > 2 else "json"
    scenarios = {"json": scenario_json, "cluster": scenario_cluster}
    if mode not in scenarios:
        print(f"unknown mode {mode}; expected json or cluster")
        sys.exit(2)
    sys.exit(run_main(f"kc-log-{mode}-", scenarios[mode]))
