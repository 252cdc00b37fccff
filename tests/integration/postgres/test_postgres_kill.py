#!/usr/bin/env python3
"""Acceptance: the PostgreSQL sink on a real PostgreSQL 15 across a SIGKILL.

Three `kconnectd run` workers on `kconnectd mock-broker`. SequenceSource
(2 tasks, max.records=50000 each, 1000 records/s per task) writes Struct
values {task, seq} through JsonConverter with schemas.enable=true; the
PostgreSQL sink (upsert, pk.mode=record_value, pk.fields=task,seq, one
task) writes them to a table. Mid-stream the worker running the sink TASK is
SIGKILLed; the task must run on another worker and finish. Then every
(task, seq) produced is in the table exactly once: count(*) ==
count(DISTINCT (task, seq)) == 100000 and seq 0..49999 per task with no gap
(records re-delivered after the kill were upserted, not duplicated).

Usage: test_postgres_kill.py <path to kconnectd>. Python 3 stdlib only.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kc_harness import (Abort, Worker, check, create_connector, http, run_main, running_owners,  # noqa: E402
                        say, start_broker, wait_for, wait_healthy)
from pg_fixture import PostgresServer  # noqa: E402

PER_TASK = 50000
SOURCE_TASKS = 2
TOTAL = PER_TASK * SOURCE_TASKS
TOPIC = "pgseq"
TABLE = "pgseq"


def count_rows(pg):
    try:
        return int(pg.query(f"SELECT count(*) FROM {TABLE}")[0][0])
    except RuntimeError:
        return 0  # table not created yet


def scenario(kc, work, cluster):
    try:
        pg = PostgresServer()
    except RuntimeError as e:
        raise Abort(str(e))
    try:
        run(kc, work, cluster, pg)
    finally:
        pg.close()


def run(kc, work, cluster, pg):
    say(f"PostgreSQL 15 on {pg.url}")
    # 10 partitions, and keys that spread the records over them (below): the
    # mock broker keeps about 5 MB per partition and drops older records;
    # 100,000 JSON records with schemas are ~20 MB.
    cluster.broker, bootstrap = start_broker(kc, work, [f"{TOPIC}:10"])
    # A short consumer session: the sink task's new consumer waits for the
    # killed one to leave the consumer group connect-pg.
    overrides = {"offset.flush.interval.ms": "200", "consumer.session.timeout.ms": "6000",
                 "consumer.heartbeat.interval.ms": "1000"}
    cluster.workers = [Worker(n, kc, work, bootstrap, group="pg-sink-test", overrides=overrides) for n in range(3)]
    workers = cluster.workers
    wait_healthy(workers)

    json_values = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
                   "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                   "value.converter.schemas.enable": "true"}
    sink = {"name": "pg", "config": {"connector.class": "PostgresSink", "tasks.max": "1", "topics": TOPIC,
                                     "connection.url": pg.url, "insert.mode": "upsert", "pk.mode": "record_value",
                                     "pk.fields": "task,seq", "auto.create": "true", **json_values}}
    source = {"name": "seq", "config": {"connector.class": "SequenceSource", "tasks.max": str(SOURCE_TASKS),
                                        "topic": TOPIC, "throughput": "1000", "max.records": str(PER_TASK),
                                        # key {task, seq}: one key per record, so all partitions are used
                                        "transforms": "key", "transforms.key.fields": "task,seq",
                                        "transforms.key.type": "org.apache.kafka.connect.transforms.ValueToKey",
                                        **json_values}}
    # Connect-style per-key errors through the REST validation endpoint.
    bad = dict(sink["config"], **{"name": "bad", "insert.mode": "merge", "delete.enabled": "true"})
    code, body = http("PUT", f"{workers[0].url}/connector-plugins/PostgresSink/config/validate", bad, timeout=10)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in (body or {}).get("configs", [])
              if isinstance(body, dict) and c["value"]["errors"]}
    check(code == 200 and body.get("error_count") == 2
          and any("String must be one of: insert, upsert, update" in e for e in errors.get("insert.mode", []))
          and any("only supported for pk.mode record_key" in e for e in errors.get("delete.enabled", [])),
          f"validate names the bad insert.mode and delete.enabled ({code} {errors})")
    code, body = http("POST", f"{workers[0].url}/connectors", {"name": "bad", "config": bad}, timeout=10)
    check(code == 400 and "insert.mode" in str(body), f"creating it is refused with 400 ({code})")

    if not create_connector(workers, sink) or not create_connector(workers, source):
        raise Abort("could not create the connectors")

    owner = wait_for(lambda: running_owners(workers, "pg").get(0), 60)
    if not owner:
        raise Abort("the sink task never ran")
    victim = next(w for w in workers if w.worker_id == owner)
    say(f"sink task pg-0 runs on worker {victim.n} ({owner})")

    if not wait_for(lambda: count_rows(pg) >= 20000, 90, step=0.5):
        raise Abort(f"the sink wrote only {count_rows(pg)} rows in 90 s")
    before = count_rows(pg)
    victim.signal(signal.SIGKILL)
    victim.wait_exit(10)
    say(f"SIGKILLed worker {victim.n} with {before} rows in the table")
    check(before < TOTAL, f"the kill came mid-stream ({before} of {TOTAL} rows written)")

    survivors = [w for w in workers if w is not victim]
    new_owner = wait_for(lambda: running_owners(survivors, "pg").get(0) not in (None, owner) and
                         running_owners(survivors, "pg").get(0), 90, step=0.5)
    check(bool(new_owner), f"the sink task runs again on a surviving worker ({new_owner})")

    done = wait_for(lambda: count_rows(pg) >= TOTAL, 240, step=1.0)  # slack for sanitizer builds
    total, distinct = pg.query(f"SELECT count(*), count(DISTINCT (task, seq)) FROM {TABLE}")[0]
    per_task = pg.query(f"SELECT task, count(*), min(seq), max(seq), count(DISTINCT seq) FROM {TABLE} "
                        "GROUP BY task ORDER BY task")
    say(f"rows: count(*)={total} count(distinct (task, seq))={distinct} produced={TOTAL}; per task: {per_task}")
    check(done, f"all {TOTAL} rows arrived")
    check(int(total) == TOTAL, f"count(*) == {TOTAL} (got {total})")
    check(int(distinct) == TOTAL, f"count(DISTINCT (task, seq)) == {TOTAL} (got {distinct})")
    check(len(per_task) == SOURCE_TASKS, f"{SOURCE_TASKS} source tasks in the table (got {len(per_task)})")
    for task, n, lo, hi, nd in per_task:
        check(int(n) == PER_TASK and int(lo) == 0 and int(hi) == PER_TASK - 1 and int(nd) == PER_TASK,
              f"task {task}: seq 0..{PER_TASK - 1} each once, no gap (count {n}, min {lo}, max {hi})")


if __name__ == "__main__":
    sys.exit(run_main("kc-pg-kill-", scenario))
