#!/usr/bin/env python3
"""The docs' example connector (docs/connector-configs.md, once README.md's), unchanged, on a real worker.

Takes the `worker.properties` and `connector.json` blocks that follow the
`<!-- example: ... -->` markers in the page, starts `kconnectd mock-broker`
and one worker with those properties, writes the secrets file the example
names, creates the connector through REST and produces to `orders` with
kcat: two good records, one marked with a `test` header (dropped by the
predicate-gated Filter) and one that is not JSON (to the dead letter queue).
Checks the output file line by line, the DLQ record and its
`__connect.errors.*` headers, and that REST shows the placeholder, not the
resolved path, in the connector and task configs.

Usage: test_readme_example.py KCONNECTD docs/connector-configs.md
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import Abort, Worker, check, create_connector, http, run_main, say, start_broker, wait_for, wait_healthy  # noqa: E402

SECRETS = "/tmp/kconnectd-example/secrets.properties"


def readme_block(text, marker):
    """The fenced block that follows `<!-- example: marker -->`."""
    m = re.search(r"<!-- example: " + re.escape(marker) + r" -->\s*```[a-z]*\n(.*?)```", text, re.S)
    if not m:
        raise Abort(f"{sys.argv[2]} has no example block {marker}")
    return m.group(1)


def kcat(bootstrap, args, stdin=None):
    r = subprocess.run(["kcat", "-b", bootstrap] + args, input=stdin, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise Abort(f"kcat {args} failed: {r.stderr}")
    return r.stdout


def scenario(kc, work, cluster):
    readme = open(sys.argv[2]).read()
    props = {}
    for line in readme_block(readme, "worker.properties").splitlines():
        if line.strip() and not line.startswith("#"):
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    body = json.loads(readme_block(readme, "connector.json"))
    name = body["name"]
    out_file = os.path.join(work, "orders.txt")
    os.makedirs(os.path.dirname(SECRETS), exist_ok=True)
    with open(SECRETS, "w") as f:
        f.write(f"output.file={out_file}\n")

    # The mock broker has no CreateTopics: the DLQ topic is made up front.
    cluster.broker, bootstrap = start_broker(kc, work, ["orders:1", "orders-dlq:1"])
    w = Worker(1, kc, work, bootstrap, group="readme-example", overrides=props)
    cluster.workers.append(w)
    wait_healthy([w])
    check(create_connector([w], body), "POST /connectors accepts the docs' example")

    kcat(bootstrap, ["-P", "-t", "orders"], '{"id":1,"item":"book"}\nnot json\n')
    kcat(bootstrap, ["-P", "-t", "orders", "-H", "test=yes"], '{"id":2,"item":"test"}\n')
    kcat(bootstrap, ["-P", "-t", "orders"], '{"id":3,"item":"pen"}\n')

    def lines():
        try:
            return open(out_file).read().splitlines()
        except OSError:
            return []

    wait_for(lambda: len(lines()) >= 2, 60)
    got = lines()
    say(f"output file: {got}")
    # FileStreamSink writes String.valueOf(value): a Map's "{k=v, ...}".
    fields = [set(l.strip("{}").split(", ")) for l in got]
    check(fields == [{"id=1", "item=book", "source=kconnectd"}, {"id=3", "item=pen", "source=kconnectd"}],
          f"the two good records reach the file with the inserted field, the test one is dropped ({got})")

    dlq = []

    def read_dlq():
        nonlocal dlq
        out = subprocess.run(["kcat", "-b", bootstrap, "-C", "-t", "orders-dlq", "-e", "-q", "-f", "%s\t%h\n"],
                             capture_output=True, text=True, timeout=30).stdout
        dlq = [l for l in out.splitlines() if l]
        return len(dlq) >= 1

    wait_for(read_dlq, 60)
    check(len(dlq) == 1 and dlq[0].startswith("not json\t"), f"the unreadable record is in orders-dlq ({dlq})")
    headers = dlq[0].split("\t", 1)[1] if dlq else ""
    for h in ["__connect.errors.topic=orders", "__connect.errors.partition=0", "__connect.errors.offset=1",
              "__connect.errors.stage=VALUE_CONVERTER",
              "__connect.errors.class.name=org.apache.kafka.connect.json.JsonConverter",
              f"__connect.errors.connector.name={name}"]:
        check(h in headers, f"DLQ header {h}")

    code, conf = http("GET", f"{w.url}/connectors/{name}/config")
    check(code == 200 and conf.get("file") == body["config"]["file"],
          f"GET /connectors/{name}/config shows the placeholder ({conf.get('file') if code == 200 else code})")
    code, tasks = http("GET", f"{w.url}/connectors/{name}/tasks")
    task_file = tasks[0]["config"].get("file") if code == 200 and tasks else None
    check(task_file == body["config"]["file"], f"the task config keeps the placeholder ({task_file})")
    code, st = http("GET", f"{w.url}/connectors/{name}/status")
    states = [t["state"] for t in st.get("tasks", [])] if code == 200 else []
    check(code == 200 and st["connector"]["state"] == "RUNNING" and states == ["RUNNING"],
          f"connector and task RUNNING ({code} {states})")
    check(out_file not in json.dumps(conf) + json.dumps(tasks), "the resolved path appears nowhere in REST")


if __name__ == "__main__":
    sys.exit(run_main("kc-readme-", scenario))
