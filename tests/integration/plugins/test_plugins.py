#!/usr/bin/env python3
"""The C plugin ABI end to end (issue 12, deliverable 1).

usage: test_plugins.py KCONNECTD BUILD_DIR EXAMPLE_SRC GOOD_DIR BAD_DIR

1. `cmake --install BUILD_DIR --prefix <tmp>/prefix`, then configure and
   build EXAMPLE_SRC (examples/plugin) with -DCMAKE_PREFIX_PATH=<prefix>:
   the plugin builds from the installed headers alone.
2. Starts `kconnectd mock-broker` and the installed `kconnectd run` with
   plugin.path = <example output dir>,BAD_DIR,GOOD_DIR.
   (b) each bad file is refused with one log line naming it and the reason
       (major version, missing entry point, not ELF); the worker is healthy,
       serves REST and loaded the good plugins (one in a subdirectory).
   (a) GET /connector-plugins lists com.example.CounterSourceConnector with
       version 1.2.3 and type source; its config endpoint lists its keys;
       validation applies its validators. A counter connector
       (max.records=40) and a FileStreamSink on its topic: the file gets
       exactly count-0 .. count-39, both connectors RUNNING.
   (c) test.ErrorSourceConnector (C, poll returns KC_ERROR) and
       test.ThrowingSourceConnector (C++, poll throws): each task FAILED with
       the plugin's message in its trace; the worker stays healthy and the
       counter connector RUNNING.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import (Abort, Worker, check, connector_status, create_connector, http, run_main, say,  # noqa: E402
                        start_broker, wait_for, wait_healthy)

BUILD, EXAMPLE, GOOD, BAD = sys.argv[2:6]
RECORDS = 40


def run(cmd):
    say("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise Abort(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}")


def task_state(w, name):
    code, st = http("GET", f"{w.url}/connectors/{name}/status")
    if code != 200 or not st.get("tasks"):
        return None, ""
    t = st["tasks"][0]
    return t.get("state"), t.get("trace", "")


def scenario(kc, work, cluster):
    # ---------------------------------------------------------- 1. install + out-of-tree build
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    check(os.path.exists(os.path.join(prefix, "include", "kconnectd", "plugin.h")) and
          os.path.exists(os.path.join(prefix, "include", "kconnectd", "plugin.hpp")), "headers installed")
    installed_kc = os.path.join(prefix, "bin", "kconnectd")
    check(os.access(installed_kc, os.X_OK), "kconnectd installed")
    pbuild = os.path.join(work, "example-build")
    run(["cmake", "-S", EXAMPLE, "-B", pbuild, f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", pbuild])
    example_dir = os.path.join(work, "plugins")
    os.makedirs(os.path.join(example_dir, "counter"))
    os.rename(os.path.join(pbuild, "libcounter_plugin.so"), os.path.join(example_dir, "counter", "libcounter_plugin.so"))

    # ---------------------------------------------------------- 2. worker
    cluster.broker, bootstrap = start_broker(kc, work, ["counter-data:1", "c-data:1"])
    out_file = os.path.join(work, "sink.txt")
    w = Worker(1, installed_kc, work, bootstrap, group="plugins-test",
               overrides={"plugin.path": f"{example_dir},{BAD},{GOOD}"})
    cluster.workers.append(w)
    wait_healthy([w])

    # (b) refused files, one line each, naming the file and the reason.
    log = w.log()
    for f, reason in [("libkc_test_bad_major.so", "built for plugin ABI 2.0, this worker supports major version 1"),
                      ("libkc_test_no_entry.so", "missing entry point kc_plugin_register"),
                      ("not_elf.so", "cannot be loaded")]:
        path = os.path.join(BAD, f)
        lines = [l for l in log.splitlines() if f"plugin {path} refused: " in l]
        check(len(lines) == 1 and reason in lines[0], f"{f} refused once with '{reason}': {lines}")
    check(w.alive() and w.healthy(), "worker up after refusing the bad plugins")

    code, plugins = http("GET", w.url + "/connector-plugins")
    check(code == 200, f"GET /connector-plugins answers 200 ({code})")
    by_class = {p["class"]: p for p in plugins} if code == 200 else {}
    counter = by_class.get("com.example.CounterSourceConnector")
    check(counter is not None and counter.get("version") == "1.2.3" and counter.get("type") == "source",
          f"counter plugin listed with its version: {counter}")
    check(by_class.get("test.ErrorSourceConnector", {}).get("version") == "0.0.1-c", "C plugin listed")
    check(by_class.get("test.ThrowingSourceConnector", {}).get("version") == "0.0.2",
          "plugin from a subdirectory listed")
    check(not any("bad_major" in c or "no_entry" in c for c in by_class), "nothing from refused files")

    code, defs = http("GET", w.url + "/connector-plugins/CounterSource/config")
    names = [d.get("name") for d in defs] if code == 200 and isinstance(defs, list) else []
    # The plugin's own keys, then the exactly-once keys every source lists (KIP-618).
    check(names == ["topic", "prefix", "batch.size", "max.records", "exactly.once.support", "transaction.boundary",
                    "transaction.boundary.interval.ms", "offsets.storage.topic"],
          f"counter config defs by alias: {names}")
    topic_def = defs[0] if names else {}
    check(topic_def.get("type") == "STRING" and topic_def.get("importance") == "HIGH" and
          topic_def.get("required") is True, f"topic def: {topic_def}")

    code, v = http("PUT", w.url + "/connector-plugins/CounterSource/config/validate",
                   {"connector.class": "CounterSource", "name": "x", "batch.size": "0", "topic": ""})
    errs = {c["value"]["name"]: c["value"]["errors"] for c in v.get("configs", [])} if code == 200 else {}
    check(code == 200 and v.get("error_count") == 2 and
          errs.get("batch.size") == ["Invalid value 0 for configuration batch.size: Value must be at least 1"] and
          errs.get("topic") == ["Invalid value  for configuration topic: String must be non-empty"],
          f"validators applied: {errs}")

    # (a) records from the out-of-tree plugin reach Kafka and a FileStreamSink.
    check(create_connector([w], {"name": "counter", "config": {
        "connector.class": "CounterSource", "tasks.max": "1", "topic": "counter-data",
        "max.records": str(RECORDS), "batch.size": "7"}}), "counter connector created")
    check(create_connector([w], {"name": "sink", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "topics": "counter-data", "file": out_file}}),
        "file sink created")
    want = [f"count-{i}" for i in range(RECORDS)]

    def lines():
        try:
            with open(out_file) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []
    wait_for(lambda: len(lines()) >= RECORDS, 60)
    time.sleep(2)  # max.records: nothing more may come
    check(lines() == want, f"sink file holds exactly count-0..count-{RECORDS - 1} ({len(lines())} lines)")
    st = connector_status([w], "counter")
    check(st and st["connector"]["state"] == "RUNNING" and st["tasks"][0]["state"] == "RUNNING",
          f"counter RUNNING: {st}")

    # (c) failing plugins fail their task only.
    check(create_connector([w], {"name": "c-error", "config": {
        "connector.class": "test.ErrorSourceConnector", "tasks.max": "1", "topic": "c-data"}}), "C plugin created")
    check(create_connector([w], {"name": "thrower", "config": {
        "connector.class": "test.ThrowingSourceConnector", "tasks.max": "1", "topic": "c-data"}}),
        "throwing plugin created")
    for name, msg in [("c-error", "c plugin poll failed: disk on fire"), ("thrower", "boom: the plugin threw")]:
        wait_for(lambda: task_state(w, name)[0] == "FAILED", 60)
        state, trace = task_state(w, name)
        check(state == "FAILED" and msg in trace, f"{name} task FAILED with '{msg}': {state} {trace[:200]}")
    check(w.alive() and w.healthy(), "worker healthy after the plugin failures")
    st = connector_status([w], "counter")
    check(st and st["tasks"][0]["state"] == "RUNNING", "counter still RUNNING")
    # The C plugin's Struct record reached Kafka before its failure (String
    # converter: Struct.toString); read back through a sink.
    c_file = os.path.join(work, "c.txt")
    create_connector([w], {"name": "c-sink", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "topics": "c-data", "file": c_file}})
    wait_for(lambda: os.path.exists(c_file) and open(c_file).read().strip(), 60)
    got = open(c_file).read().splitlines() if os.path.exists(c_file) else []
    check(got == ["Struct{n=7}"], f"the C plugin's struct record in Kafka: {got}")


if __name__ == "__main__":
    sys.exit(run_main("kc-plugins-", scenario))
