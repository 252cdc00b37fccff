#!/usr/bin/env python3
"""A rotated provider secret is read again on an explicit restart (issue 25
item 3), on a live worker.

usage: test_rotated_secret.py KCONNECTD

A worker reads each connector config once, where it enters (the herder's
ConnectorConfigCache), and its connector and tasks start from that one
read. A value from a config provider (`${file:...}`) must still be read
again on every explicit restart, so a rotated secret reaches the tasks:

 1. A SequenceSource feeds a topic; a FileStreamSink writes it to a file
    through HoistField$Value whose `field` comes from the file provider
    (a value of the connector's config the task reads, not of its task
    config): lines show the field name `alpha`.
 2. The provider's file is rotated to `beta`: the running task goes on
    with `alpha` (nothing restarts it).
 3. POST /connectors/snk/tasks/0/restart: new lines show `beta`.
 4. Rotated to `gamma`; POST /connectors/snk/restart?includeTasks=true
    (KIP-745): new lines show `gamma`.
 5. The config readback still holds the placeholder.

Python 3 standard library only. Logs are kept on failure or with KC_KEEP=1.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))

from kc_harness import (Abort, Worker, check, create_connector, http, run_main, say, start_broker,  # noqa: E402
                        wait_for, wait_healthy)

TOPIC = "rotated-data"


def scenario(kc, work, cluster):
    secrets_file = os.path.join(work, "secrets.properties")
    out = os.path.join(work, "sink.txt")

    def rotate(field):
        # Written to a new file and renamed: a reader never sees half a file.
        tmp = secrets_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"field={field}\n")
        os.replace(tmp, secrets_file)
        say(f"secret rotated to {field}")

    def lines():
        try:
            with open(out, errors="replace") as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    rotate("alpha")
    cluster.broker, bootstrap = start_broker(
        kc, work, ["connect-configs:1", "connect-offsets:25", "connect-status:5", f"{TOPIC}:1"])
    overrides = {
        "session.timeout.ms": "6000",
        # A restarted sink task's consumer rejoins its group: the mock
        # broker waits for the old member's session (45 s by default).
        "consumer.session.timeout.ms": "6000",
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    }
    cluster.workers = [Worker(1, kc, work, bootstrap, group="rotated-secret-test", overrides=overrides)]
    wait_healthy(cluster.workers)
    w = cluster.workers[0]

    source = {"name": "src", "config": {
        "connector.class": "SequenceSource", "topic": TOPIC, "tasks.max": "1", "throughput": "50"}}
    placeholder = "${file:" + secrets_file + ":field}"
    sink = {"name": "snk", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "topics": TOPIC, "file": out,
        "transforms": "hoist", "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.hoist.field": placeholder}}
    for body in (source, sink):
        if not create_connector(cluster.workers, body):
            raise Abort(f"cannot create {body['name']}")

    def new_lines_with(word, after):
        return wait_for(lambda: any(word in line for line in lines()[after:]), 60, step=0.2)

    if not check(new_lines_with("alpha", 0), "the sink writes lines with the provider's field name alpha"):
        raise Abort(f"no alpha lines; sink file: {lines()[-5:]}")

    rotate("beta")
    time.sleep(2)
    seen = len(lines())
    check(not any("beta" in line for line in lines()), "without a restart the running task keeps alpha")

    code, resp = http("POST", f"{w.url}/connectors/snk/tasks/0/restart", timeout=10)
    check(code == 204, f"task restart answers 204 ({code} {resp})")
    check(new_lines_with("beta", seen), "after a REST task restart new lines show the rotated value beta")

    rotate("gamma")
    seen = len(lines())
    code, resp = http("POST", f"{w.url}/connectors/snk/restart?includeTasks=true", timeout=10)
    check(code == 202, f"KIP-745 restart answers 202 ({code} {resp})")
    check(new_lines_with("gamma", seen), "after a KIP-745 restart new lines show the rotated value gamma")

    code, got = http("GET", f"{w.url}/connectors/snk/config", timeout=5)
    check(code == 200 and got.get("transforms.hoist.field") == placeholder,
          f"the config readback keeps the placeholder ({code})")


if __name__ == "__main__":
    sys.exit(run_main("kc-rotated-secret-", scenario))
