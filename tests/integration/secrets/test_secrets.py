#!/usr/bin/env python3
"""Secrets stay out of sight (issue 13 item 4), on a live two-worker cluster.

usage: test_secrets.py KCONNECTD

Starts `kconnectd mock-broker` and two workers at log.level=trace whose
properties hold worker secrets (librdkafka's sasl.password and
ssl.key.password, producer./consumer./admin. prefixed password keys,
listeners.https.ssl.key.password) and the file config provider. Then:

 1. A SequenceSource with a secret client override
    (producer.override.sasl.password) feeds a topic.
 2. A PostgresSink with a literal connection.password and an unreachable
    database: its task fails (error paths, status trace).
 3. A PostgresSink whose connection.password is `${file:...:dbpw}`: the
    resolved secret must appear nowhere, not even in config readback.
 4. PUT .../config/validate with a bad value next to the password: the
    password's value reads "[hidden]", and a provider-resolved secret in an
    invalid key is not echoed in the error.
 5. Invalid creates and updates (400) whose messages would echo values.
 6. GET /metrics, /connectors?expand=..., status, tasks, /rebalances, ...

Every log line of both workers (stdout/stderr and log.file) and every REST
response body of the run are grepped for the secret strings: zero hits.
The only exceptions are the connector config readbacks (GET /connectors/{c},
/connectors/{c}/config, ?expand=info, /connectors/{c}/tasks), which must
equal what was posted, as in Kafka Connect; they never hold a provider's
resolved value. The worker's debug dump of its own and of the connectors'
configs must show the secret keys with "[hidden]".

Python 3 standard library only. Logs are kept on failure or with KC_KEEP=1.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))

from kc_harness import (Abort, Worker, check, create_connector, http, run_main, say, start_broker,  # noqa: E402
                        wait_for, wait_healthy)

# Worker secrets (each must be unique, so a hit names the leak).
WORKER_SECRETS = {
    "sasl.password": "wsec-sasl-pw-5Kq2",
    "ssl.key.password": "wsec-ssl-key-pw-8Rt1",
    "producer.ssl.keystore.password": "wsec-producer-ks-pw-3Jd9",
    "consumer.sasl.password": "wsec-consumer-sasl-pw-6Lm4",
    "admin.ssl.key.password": "wsec-admin-key-pw-2Zx7",
    "listeners.https.ssl.key.password": "wsec-https-key-pw-9Wp3",
}
# Connector secrets posted literally (readback shows them, nothing else may).
CONN_PW = "csec-pg-literal-pw-4Hb8"
SRC_OVERRIDE_PW = "csec-src-override-pw-7Nc2"
SINK_OVERRIDE_PW = "csec-sink-override-pw-1Vg6"
# Secrets only sent to validate / invalid creates: never shown back.
VALIDATE_PW = "vsec-validate-pw-3Qe5"
VALIDATE_OVERRIDE_PW = "vsec-validate-override-pw-8Ty1"
INVALID_PW = "vsec-invalid-create-pw-5Ua9"
UPDATE_PW = "vsec-invalid-update-pw-2Io4"
BROKEN_PW = "vsec-broken-json-pw-7Gh3"
# Secrets only in the provider's file: never shown anywhere.
PROVIDER_SECRETS = {"dbpw": "psec-provider-db-pw-6Pa3", "batch": "psec-provider-batch-9Sd7"}

POSTED = [CONN_PW, SRC_OVERRIDE_PW, SINK_OVERRIDE_PW]
NEVER = list(WORKER_SECRETS.values()) + [VALIDATE_PW, VALIDATE_OVERRIDE_PW, INVALID_PW, UPDATE_PW, BROKEN_PW] + \
    list(PROVIDER_SECRETS.values())

TOPIC = "secret-data"
# (label, status, body text) of every REST answer that is not a readback.
responses = []
# (label, body) of the config readbacks.
readbacks = []


def record(label, code, body, readback=False):
    text = body if isinstance(body, str) else json.dumps(body)
    (readbacks if readback else responses).append((label, code, text))
    return code, body


def call(method, url, body=None, readback=False, timeout=10):
    code, resp = http(method, url, body, timeout=timeout)
    return record(f"{method} {url}", code, resp, readback)


def hits(text, secrets):
    return [s for s in secrets if s in text]


def scenario(kc, work, cluster):
    secrets_file = os.path.join(work, "secrets.properties")
    with open(secrets_file, "w") as f:
        for k, v in PROVIDER_SECRETS.items():
            f.write(f"{k}={v}\n")
    cluster.broker, bootstrap = start_broker(
        kc, work, ["connect-configs:1", "connect-offsets:25", "connect-status:5", f"{TOPIC}:1"])
    overrides = {
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "log.level": "trace",
        "sasl.username": "kc-user",
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    }
    overrides.update(WORKER_SECRETS)
    cluster.workers = [Worker(n, kc, work, bootstrap, log_file=(n == 1), group="secrets-test", overrides=overrides)
                       for n in (1, 2)]
    wait_healthy(cluster.workers)
    w1, w2 = cluster.workers

    # 1. A source feeding the sink's topic, with a secret producer override.
    source = {"name": "seq-src", "config": {
        "connector.class": "SequenceSource", "topic": TOPIC, "tasks.max": "1", "throughput": "50",
        "producer.override.sasl.password": SRC_OVERRIDE_PW}}
    # 2. A sink with a literal password; the database is unreachable.
    sink = {"name": "pg-literal", "config": {
        "connector.class": "PostgresSink", "tasks.max": "1", "topics": TOPIC,
        "connection.url": "postgresql://127.0.0.1:1/nodb", "connection.user": "kc",
        "connection.password": CONN_PW, "max.retries": "0", "retry.backoff.ms": "100",
        "consumer.override.sasl.password": SINK_OVERRIDE_PW}}
    # 3. A sink whose password comes from the file provider.
    provided = {"name": "pg-provided", "config": {
        "connector.class": "PostgresSink", "tasks.max": "1", "topics": TOPIC,
        "connection.url": "postgresql://127.0.0.1:1/nodb",
        "connection.password": "${file:" + secrets_file + ":dbpw}", "max.retries": "0"}}
    for body in (source, sink, provided):
        if not create_connector(cluster.workers, body):
            raise Abort(f"cannot create {body['name']}")
        record(f"POST /connectors {body['name']}", 201, "(create answer echoes the posted config)", readback=True)

    def task_failed(name):
        for w in cluster.workers:
            code, st = call("GET", f"{w.url}/connectors/{name}/status")
            if code == 200 and any(t.get("state") == "FAILED" for t in st.get("tasks", [])):
                return st
        return None

    st = wait_for(lambda: task_failed("pg-literal"), 90, step=1)
    check(st is not None, "the literal-password PostgresSink task FAILED (unreachable database)")
    if st:
        trace = " ".join(t.get("trace", "") or "" for t in st["tasks"])
        check("could not connect" in trace or "PostgreSQL" in trace, "its status trace says why")
    check(wait_for(lambda: task_failed("pg-provided"), 90, step=1) is not None,
          "the provider-password PostgresSink task FAILED too")

    # 4. Validate: a bad value next to the password; a provider secret in a bad value.
    vconf = {"connector.class": "PostgresSink", "name": "v", "topics": TOPIC,
             "connection.url": "postgresql://127.0.0.1:1/nodb", "connection.password": VALIDATE_PW,
             "batch.size": "not-a-number", "retry.backoff.ms": "${file:" + secrets_file + ":batch}",
             "consumer.override.sasl.password": VALIDATE_OVERRIDE_PW}
    code, v = call("PUT", f"{w2.url}/connector-plugins/PostgresSink/config/validate", vconf)
    check(code == 200, f"validate answers 200 ({code})")
    if code == 200:
        by = {c["value"]["name"]: c["value"] for c in v["configs"]}
        check(by.get("connection.password", {}).get("value") == "[hidden]",
              f"validate shows connection.password as [hidden] ({by.get('connection.password')})")
        check(any("batch.size" in e for e in by.get("batch.size", {}).get("errors", [])),
              "validate reports the bad batch.size")
        check(by.get("retry.backoff.ms", {}).get("errors"), "validate reports the bad provided retry.backoff.ms")
        check(v.get("error_count", 0) >= 2, f"validate counts the errors ({v.get('error_count')})")

    # 5. Invalid create and update: 400 with Connect's message.
    bad = {"name": "pg-invalid", "config": dict(vconf, name="pg-invalid", **{"connection.password": INVALID_PW})}
    code, resp = call("POST", f"{w1.url}/connectors", bad)
    check(code == 400, f"invalid create answers 400 ({code})")
    upd = dict(sink["config"], **{"connection.password": UPDATE_PW, "batch.size": "0",
                                  "max.retries": "${file:" + secrets_file + ":batch}"})
    code, resp = call("PUT", f"{w2.url}/connectors/pg-literal/config", upd)
    check(code == 400, f"invalid update answers 400 ({code})")
    # Connector secrets in a config that does not even parse as a config map.
    code, _ = call("POST", f"{w1.url}/connectors", {"name": "pg-bad-shape", "config": {
        "connector.class": "PostgresSink", "connection.password": {"nested": INVALID_PW}}})
    check(code == 400, f"a config with a non-string value answers 400 ({code})")
    # Bodies that are not JSON: a raw tab inside the password, and a body cut
    # inside the password (the JSON parser's message quotes what it read).
    for label, raw in (("tab", '{"name": "pg-broken", "config": {"connection.password": "' + BROKEN_PW + '\t"}}'),
                       ("cut", '{"name": "pg-broken", "config": {"connection.password": "' + BROKEN_PW)):
        for method, path in (("POST", "/connectors"), ("PUT", "/connectors/pg-broken/config"),
                             ("PUT", "/connector-plugins/PostgresSink/config/validate")):
            code, resp = http(method, w1.url + path, raw=raw.encode(), timeout=10)
            record(f"{method} {path} ({label} body)", code, resp)
            check(code == 400 and "Invalid JSON" in json.dumps(resp), f"{method} {path} with a {label} body: 400 ({code})")

    # 6. Readbacks equal what was posted (plus "name", as Connect adds it);
    # the provider's secret is never resolved there.
    for body in (source, sink, provided):
        name = body["name"]
        posted = dict(body["config"], name=name)
        for w in cluster.workers:
            code, got = call("GET", f"{w.url}/connectors/{name}/config", readback=True)
            check(code == 200 and got == posted, f"GET /connectors/{name}/config on worker {w.n} = posted")
            code, got = call("GET", f"{w.url}/connectors/{name}", readback=True)
            check(code == 200 and got.get("config") == posted, f"GET /connectors/{name} on worker {w.n} = posted")
            call("GET", f"{w.url}/connectors/{name}/tasks", readback=True)
            call("GET", f"{w.url}/connectors/{name}/status")
            call("GET", f"{w.url}/connectors/{name}/topics")
            call("GET", f"{w.url}/connectors/{name}/offsets")
    for w in cluster.workers:
        call("GET", f"{w.url}/connectors?expand=info&expand=status", readback=True)
        call("GET", f"{w.url}/connectors?expand=status")
        call("GET", f"{w.url}/connectors")
        call("GET", f"{w.url}/")
        call("GET", f"{w.url}/connector-plugins")
        call("GET", f"{w.url}/connector-plugins/PostgresSink/config")
        call("GET", f"{w.url}/rebalances")
        call("GET", f"{w.url}/health")
        call("GET", f"{w.url}/admin/loggers")
        code, m = call("GET", f"{w.url}/metrics")
        check(code == 200 and isinstance(m, str) and "coordinator_joins_total" in m, f"GET /metrics on worker {w.n} answers")
    # Let the failing tasks and the source log a little more.
    time.sleep(2)
    for w in cluster.workers:
        call("POST", f"{w.url}/connectors/pg-literal/restart?includeTasks=true&onlyFailed=true")
    time.sleep(2)
    for label, code, text in readbacks:
        leaked = hits(text, NEVER)
        check(not leaked, f"readback {label} holds no unposted secret ({leaked})")

    # The worker dumps its config at debug with the secret keys hidden.
    logs = {w.n: w.log() for w in cluster.workers}
    check("sasl.password = [hidden]" in logs[1], "worker 1's config dump shows sasl.password = [hidden]")
    check("producer.ssl.keystore.password = [hidden]" in logs[1],
          "worker 1's config dump shows producer.ssl.keystore.password = [hidden]")
    check("connection.password = [hidden]" in logs[1] + logs[2],
          "a connector config dump shows connection.password = [hidden]")

    # Stop the workers cleanly so their shutdown lines are in the logs too.
    from kc_harness import stop_all
    stop_all(cluster.workers, None)
    for w in cluster.workers:
        text = w.log()
        leaked = {s: sum(1 for line in text.splitlines() if s in line) for s in hits(text, NEVER + POSTED)}
        check(not leaked, f"worker {w.n}'s log ({len(text.splitlines())} lines) holds no secret {leaked}")
        if leaked:
            for line in text.splitlines():
                if hits(line, NEVER + POSTED):
                    say(f"  leak: {line[:400]}")
    total = 0
    for label, code, text in responses:
        leaked = hits(text, NEVER + POSTED)
        total += 1
        if leaked:
            check(False, f"{label} ({code}) holds no secret {leaked}")
            say(f"  body: {text[:600]}")
    say(f"{total} REST answers and {len(readbacks)} readbacks checked")


if __name__ == "__main__":
    sys.exit(run_main("kc-secrets-", scenario))
