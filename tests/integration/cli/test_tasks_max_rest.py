#!/usr/bin/env python3
"""tasks.max and complete connector validation over REST (issue 23 items 3 and 5).

usage: test_tasks_max_rest.py KCONNECTD

One `kconnectd run` worker with tasks.max.limit=8 on `kconnectd mock-broker`:
- POST /connectors with tasks.max above the limit, 0, or not an integer
  answers 400 naming tasks.max (and the limit), and nothing is created;
- PUT /connector-plugins/{p}/config/validate returns every error of every
  key (ConfigInfos) and error_count equals their number;
- a create with several mistakes answers 400 with Connect's "Connector
  configuration is invalid and contains the following N error(s)" listing
  each of them;
- every key whose config provider placeholder fails is named, not the first;
- tasks.max equal to the limit is accepted (201).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import Abort, Worker, check, http, run_main, start_broker, wait_healthy  # noqa: E402

LIMIT = 8


def seq(name, tasks_max, **extra):
    cfg = {"connector.class": "SequenceSource", "topic": "tm-seq", "tasks.max": tasks_max}
    cfg.update(extra)
    return {"name": name, "config": cfg}


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, ["tm-seq:2"])
    allowed = os.path.join(work, "allowed")
    os.mkdir(allowed)
    w = Worker(1, kc, work, bootstrap, overrides={"tasks.max.limit": str(LIMIT), "config.providers": "file",
                                                  "config.providers.file.class": "FileConfigProvider",
                                                  "config.providers.file.param.allowed.paths": allowed})
    cluster.workers.append(w)
    wait_healthy([w])

    for bad, needle in [(str(LIMIT + 1), f"Value must be no more than {LIMIT} (the worker's tasks.max.limit)"),
                        ("1000000000", f"Value must be no more than {LIMIT}"),
                        ("0", "Value must be at least 1"),
                        ("abc", "Not a number of type INT"),
                        ("1e999", "Not a number of type INT")]:
        code, body = http("POST", w.url + "/connectors", seq("tm-bad", bad), timeout=30)
        msg = body.get("message", "") if isinstance(body, dict) else str(body)
        check(code == 400 and f"Invalid value {bad} for configuration tasks.max: {needle}" in msg,
              f"create with tasks.max={bad}: 400 naming tasks.max ({code}, {msg[:200]})")
    code, body = http("GET", w.url + "/connectors", timeout=10)
    check(code == 200 and body == [], f"nothing was created ({code}, {body})")

    # Every error of every key, in validate and in the create rejection.
    cfg = seq("tm-many", "99", **{"key.converter": "NoSuchConverter", "errors.tolerance": "sometimes",
                                  "errors.log.enable": "maybe"})["config"]
    code, body = http("PUT", w.url + "/connector-plugins/SequenceSource/config/validate", cfg, timeout=30)
    if code != 200 or not isinstance(body, dict):
        raise Abort(f"validate answered {code}: {body}")
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    check(set(errors) == {"name", "tasks.max", "key.converter", "errors.tolerance", "errors.log.enable"},
          f"validate names every bad key: {sorted(errors)}")
    check(body["error_count"] == sum(len(v) for v in errors.values()) == 5,
          f"validate: error_count {body['error_count']} counts every error")
    cfg["name"] = "tm-many"
    code, body = http("POST", w.url + "/connectors", {"name": "tm-many", "config": cfg}, timeout=30)
    msg = body.get("message", "") if isinstance(body, dict) else str(body)
    check(code == 400 and msg.startswith("Connector configuration is invalid and contains the following 4 error(s):"),
          f"create: Connect's text with the count ({code}, {msg[:120]})")
    for key in ("tasks.max", "key.converter", "errors.tolerance", "errors.log.enable"):
        check(f"for configuration {key}" in msg, f"create: the rejection lists {key}")

    # Two keys whose provider fails (outside allowed.paths): both named.
    cfg = seq("tm-prov", "1", **{"a.secret": f"${{file:{work}/a.properties:x}}",
                                 "b.secret": f"${{file:{work}/b.properties:y}}"})["config"]
    cfg["name"] = "tm-prov"
    code, body = http("PUT", w.url + "/connector-plugins/SequenceSource/config/validate", cfg, timeout=30)
    if code != 200 or not isinstance(body, dict):
        raise Abort(f"validate answered {code}: {body}")
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    check(set(errors) == {"a.secret", "b.secret"} and body["error_count"] == 2 and
          all("is not allowed to be accessed" in e[0] for e in errors.values()),
          f"validate names every failing provider placeholder: {errors}")

    code, body = http("POST", w.url + "/connectors", seq("tm-ok", str(LIMIT)), timeout=30)
    check(code == 201, f"tasks.max equal to the limit is accepted ({code}, {body})")


if __name__ == "__main__":
    sys.exit(run_main("kc-tasks-max-", scenario))
