#!/usr/bin/env python3
"""Example worker properties: deploy/worker.properties and deploy/demo/worker{1,2,3}.

usage: check_properties.py REPO_ROOT
Every key is a known worker property; the required ones are set; the demo
files describe three workers of group connect-demo on 127.0.0.1:8083-8085.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import Checker, env_name_to_property, is_known_key, parse_properties, read  # noqa: E402

REQUIRED = ("bootstrap.servers", "group.id", "config.storage.topic", "offset.storage.topic",
            "status.storage.topic")


def main():
    root = sys.argv[1]
    c = Checker("properties")
    files = ["deploy/worker.properties"] + [f"deploy/demo/worker{i}.properties" for i in (1, 2, 3)]
    parsed = {}
    for rel in files:
        if not c.check(os.path.isfile(os.path.join(root, rel)), f"{rel} exists"):
            continue
        props = parse_properties(read(root, rel))
        parsed[rel] = props
        for k in props:
            c.check(is_known_key(k), f"{rel}: unknown key {k!r}")
        for k in REQUIRED:
            c.check(bool(props.get(k)), f"{rel}: sets {k}")
        c.check(props.get("connect.protocol", "sessioned").lower() in ("eager", "compatible", "sessioned"),
                f"{rel}: connect.protocol is eager|compatible|sessioned")
        for k, v in props.items():
            if k.endswith((".ms", ".partitions", ".replication.factor")):
                c.check(re.fullmatch(r"-?\d+", v) is not None, f"{rel}: {k}={v} is an integer")
        # Each key has a CONNECT_* name that maps back to it (the env rule is
        # total on the names we use).
        for k in props:
            env = "CONNECT_" + k.replace("_", "__").replace("-", "___").replace(".", "_").upper()
            c.check(env_name_to_property(env) == k, f"{rel}: {k} round-trips through {env}")

    demo = [parsed.get(f"deploy/demo/worker{i}.properties") for i in (1, 2, 3)]
    if all(demo):
        ports = []
        for i, p in enumerate(demo, 1):
            rel = f"deploy/demo/worker{i}.properties"
            expect = {"group.id": "connect-demo", "config.storage.topic": "connect-configs",
                      "offset.storage.topic": "connect-offsets", "status.storage.topic": "connect-status",
                      "config.storage.replication.factor": "1", "offset.storage.replication.factor": "1",
                      "status.storage.replication.factor": "1", "connect.protocol": "sessioned",
                      "scheduled.rebalance.max.delay.ms": "10000"}
            for k, v in expect.items():
                c.check(p.get(k) == v, f"{rel}: {k}={v} (got {p.get(k)!r})")
            m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)", p.get("listeners", ""))
            c.check(m is not None, f"{rel}: listeners=http://127.0.0.1:PORT")
            if m:
                ports.append(int(m.group(1)))
                c.check(p.get("rest.advertised.port", m.group(1)) == m.group(1),
                        f"{rel}: rest.advertised.port matches the listener")
            c.check(p.get("rest.advertised.host.name", "127.0.0.1") == "127.0.0.1",
                    f"{rel}: advertises 127.0.0.1")
        c.check(ports == [8083, 8084, 8085], f"demo REST ports are 8083, 8084, 8085 (got {ports})")
    c.finish()


if __name__ == "__main__":
    main()
