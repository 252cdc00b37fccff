"""`kconnectd standalone` (issue 29 item 1), as real processes on `kconnectd mock-broker`.

(a) A FileStreamSource -> Kafka -> FileStreamSink pipeline from a properties
    file and a JSON file in one standalone process: every input line reaches
    the output file.
(e) Connect's standalone REST semantics on that process: create, update,
    pause, resume, restart (plain, KIP-745, task), stop, delete in memory;
    offsets GET on the file, PATCH/DELETE only when STOPPED (400 before, as
    Connect); group-only requests answer as Connect's StandaloneHerder
    (task configs 500, fence 500, cluster logger scope 204 on this worker);
    /health, /metrics, /worker (protocol "standalone", leader, one member).
(b) SIGKILL while lines are appended, then a restart from the same files:
    the source resumes from the offset file; 0 lines lost (duplicates are
    allowed and counted); what REST created before the kill is gone.
(c) A corrupt and a truncated offset file: startup fails naming the file,
    the file is left as it was and `<file>.bak` (the copy before) is there.
(d) An offset file in a directory that takes no new file: startup fails
    naming the directory and the cause.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kc_harness import (Abort, check, free_port, http, run_main, say, start_broker, wait_for)  # noqa: E402

TOPIC = "lines"
FIRST = 300      # lines before the kill
DURING = 400     # lines appended around the kill


class Standalone:
    """One `kconnectd standalone` process."""

    def __init__(self, kc, work, n, props_path, connector_files, port):
        self.url = f"http://127.0.0.1:{port}"
        self.out_path = os.path.join(work, f"standalone{n}.out")
        self.out = open(self.out_path, "ab")
        self.proc = subprocess.Popen([kc, "standalone", props_path] + connector_files, stdout=self.out,
                                     stderr=subprocess.STDOUT)

    def log(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def healthy(self):
        code, _ = http("GET", self.url + "/health", timeout=2)
        return code == 200


def write_props(path, props):
    with open(path, "w") as f:
        for k, v in props.items():
            f.write(f"{k}={v}\n")


def out_lines(path):
    try:
        with open(path, errors="replace") as f:
            return [l for l in f.read().split("\n") if l]
    except FileNotFoundError:
        return []


def append(path, start, count, pause=0.0):
    with open(path, "a") as f:
        for i in range(start, start + count):
            f.write(f"line-{i:06d}\n")
            f.flush()
            if pause:
                time.sleep(pause)


def scenario(kc, work, cluster):
    broker, bootstrap = start_broker(kc, work, [f"{TOPIC}:1", "extra-topic:1"])
    cluster.broker = broker
    port = free_port()
    in_path = os.path.join(work, "in.txt")
    out_path = os.path.join(work, "out.txt")
    offsets = os.path.join(work, "connect.offsets")
    props = {
        "bootstrap.servers": bootstrap,
        "listeners": f"http://127.0.0.1:{port}",
        "rest.advertised.host.name": "127.0.0.1",
        "offset.storage.file.filename": offsets,
        "offset.flush.interval.ms": "500",
        "consumer.session.timeout.ms": "6000",  # the killed sink's consumer leaves its group sooner
        "task.shutdown.graceful.timeout.ms": "5000",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    props_path = os.path.join(work, "worker.properties")
    write_props(props_path, props)
    src_path = os.path.join(work, "source.properties")
    write_props(src_path, {"name": "src", "connector.class": "FileStreamSource", "tasks.max": "1", "file": in_path,
                           "topic": TOPIC})
    sink_path = os.path.join(work, "sink.json")
    with open(sink_path, "w") as f:
        json.dump({"name": "sink", "config": {"connector.class": "FileStreamSink", "tasks.max": "1",
                                              "topics": TOPIC, "file": out_path}}, f)
    append(in_path, 0, FIRST)

    # (a) the pipeline from the files
    w = Standalone(kc, work, 1, props_path, [src_path, sink_path], port)
    if not wait_for(lambda: w.healthy() or not w.alive(), 90) or not w.alive():
        raise Abort(f"standalone worker not healthy (exit {w.proc.poll()}); log:\n{w.log()[-3000:]}")
    check(wait_for(lambda: len(set(out_lines(out_path))) >= FIRST, 60),
          f"(a) pipeline: all {FIRST} lines of the source file reached the sink file")
    code, names = http("GET", w.url + "/connectors")
    check(code == 200 and sorted(names) == ["sink", "src"], f"GET /connectors lists the file connectors: {names}")

    # (e) REST semantics
    extra_in = os.path.join(work, "extra-in.txt")
    append(extra_in, 0, 5)
    extra = {"name": "extra", "config": {"connector.class": "FileStreamSource", "tasks.max": "1", "file": extra_in,
                                         "topic": "extra-topic"}}
    code, body = http("POST", w.url + "/connectors", extra, timeout=30)
    check(code == 201 and body.get("tasks") == [{"connector": "extra", "task": 0}],
          f"create: 201 with its task ({code} {body})")
    code, body = http("POST", w.url + "/connectors", extra, timeout=30)
    check(code == 409, f"create again: 409 already exists ({code})")
    cfg = dict(extra["config"], **{"batch.size": "10"})
    code, body = http("PUT", w.url + "/connectors/extra/config", cfg, timeout=30)
    check(code == 200 and body["config"].get("batch.size") == "10", f"update: 200 with the new config ({code})")
    state = lambda c: (http("GET", f"{w.url}/connectors/{c}/status")[1] or {})  # noqa: E731
    check(wait_for(lambda: state("extra").get("connector", {}).get("state") == "RUNNING" and
                   [t["state"] for t in state("extra").get("tasks", [])] == ["RUNNING"], 20),
          f"extra RUNNING with one RUNNING task: {state('extra')}")
    code, _ = http("PUT", w.url + "/connectors/extra/pause")
    check(code == 202 and wait_for(lambda: state("extra").get("connector", {}).get("state") == "PAUSED", 20),
          f"pause: 202, then PAUSED ({code})")
    code, _ = http("PUT", w.url + "/connectors/extra/resume")
    check(code == 202 and wait_for(lambda: state("extra").get("connector", {}).get("state") == "RUNNING", 20),
          f"resume: 202, then RUNNING ({code})")
    code, _ = http("POST", w.url + "/connectors/extra/restart", timeout=30)
    check(code == 204, f"plain restart: 204 ({code})")
    code, body = http("POST", w.url + "/connectors/extra/restart?includeTasks=true", timeout=30)
    check(code == 202 and body["connector"]["state"] == "RESTARTING", f"restart includeTasks: 202 + plan ({code} {body})")
    code, _ = http("POST", w.url + "/connectors/extra/tasks/0/restart", timeout=30)
    check(code == 204, f"task restart: 204 ({code})")
    check(wait_for(lambda: [t["state"] for t in state("extra").get("tasks", [])] == ["RUNNING"], 20),
          "extra's task RUNNING again after the restarts")
    # offsets on the file
    check(wait_for(lambda: (http("GET", w.url + "/connectors/extra/offsets")[1] or {}).get("offsets"), 20),
          "GET offsets of a source: its position, from the offset file")
    code, body = http("GET", w.url + "/connectors/extra/offsets")
    say(f"extra offsets: {body}")
    patch = {"offsets": [{"partition": {"filename": extra_in}, "offset": {"position": 7}}]}
    code, body = http("PATCH", w.url + "/connectors/extra/offsets", patch)
    check(code == 400 and "STOPPED" in json.dumps(body), f"PATCH offsets of a running connector: 400 ({code})")
    code, _ = http("PUT", w.url + "/connectors/extra/stop")
    check(code == 204 and wait_for(lambda: state("extra").get("connector", {}).get("state") == "STOPPED", 20),
          f"stop: 204, then STOPPED ({code})")
    code, body = http("PATCH", w.url + "/connectors/extra/offsets", patch, timeout=30)
    check(code == 200 and "altered" in json.dumps(body), f"PATCH offsets of a STOPPED source: 200 ({code} {body})")
    code, body = http("GET", w.url + "/connectors/extra/offsets")
    check(code == 200 and body["offsets"] == patch["offsets"], f"GET shows the altered offset: {body}")
    with open(offsets) as f:
        check('\\"position\\":7' in f.read(), "the altered offset is in the offset file")
    code, body = http("DELETE", w.url + "/connectors/extra/offsets", timeout=30)
    check(code == 200 and "reset" in json.dumps(body), f"DELETE offsets: 200 ({code} {body})")
    code, body = http("GET", w.url + "/connectors/extra/offsets")
    check(code == 200 and body["offsets"] == [], f"GET after the reset: no offsets ({body})")
    # group-only requests, answered as Connect's StandaloneHerder
    code, body = http("POST", w.url + "/connectors/src/tasks", [])
    check(code == 500 and "standalone mode does not support externally setting task configurations" in
          json.dumps(body), f"POST /connectors/src/tasks: 500 as Connect ({code} {body})")
    code, body = http("PUT", w.url + "/connectors/src/fence")
    check(code == 500 and "does not support exactly-once source connectors" in json.dumps(body),
          f"PUT /connectors/src/fence: 500 as Connect ({code} {body})")
    code, _ = http("PUT", w.url + "/admin/loggers/org.example?scope=cluster", {"level": "DEBUG"})
    code2, levels = http("GET", w.url + "/admin/loggers/org.example")
    check(code == 204 and code2 == 200 and levels.get("level") == "DEBUG",
          f"cluster-scope logger level: 204, set on this worker ({code}, {levels})")
    code, view = http("GET", w.url + "/worker")
    check(code == 200 and view.get("protocol") == "standalone" and view.get("is_leader") is True
          and view.get("generation") == 1, f"GET /worker: standalone leader, generation 1 ({view})")
    code, metrics = http("GET", w.url + "/metrics")
    check(code == 200 and "kconnectd" in str(metrics) or "kafka_connect" in str(metrics), "GET /metrics answers")
    code, _ = http("DELETE", w.url + "/connectors/extra", timeout=30)
    check(code == 204, f"delete: 204 ({code})")
    code, _ = http("GET", w.url + "/connectors/extra")
    check(code == 404, f"deleted connector: 404 ({code})")
    http("POST", w.url + "/connectors", dict(extra, name="made-by-rest", config=dict(extra["config"], name="made-by-rest")),
         timeout=30)

    # (b) SIGKILL mid-stream, restart, 0 lines lost
    writer = threading.Thread(target=append, args=(in_path, FIRST, DURING, 0.01))
    writer.start()
    time.sleep(1.5)
    w.proc.send_signal(signal.SIGKILL)
    w.proc.wait()
    say("standalone worker killed (SIGKILL) while lines were appended")
    writer.join()
    check(os.path.exists(offsets), "the offset file exists after the kill")
    w2 = Standalone(kc, work, 2, props_path, [src_path, sink_path], port)
    if not wait_for(lambda: w2.healthy() or not w2.alive(), 90) or not w2.alive():
        raise Abort(f"restarted worker not healthy (exit {w2.proc.poll()}); log:\n{w2.log()[-3000:]}")
    total = FIRST + DURING
    wait_for(lambda: len(set(out_lines(out_path))) >= total, 90)
    lines = out_lines(out_path)
    expected = {f"line-{i:06d}" for i in range(total)}
    lost = len(expected - set(lines))
    dups = len(lines) - len(set(lines))
    say(f"(b) after SIGKILL + restart: {len(lines)} lines written, {lost} lost, {dups} duplicated")
    check(lost == 0, f"(b) 0 lines lost after SIGKILL and restart (lost {lost}, duplicated {dups})")
    code, names = http("GET", w2.url + "/connectors")
    check(code == 200 and sorted(names) == ["sink", "src"],
          f"(e) what REST created is gone after the restart: {names}")
    w2.proc.send_signal(signal.SIGTERM)
    check(w2.proc.wait(timeout=30) == 0, "SIGTERM: exit 0")
    check(os.path.exists(offsets + ".bak"), "the previous copy <file>.bak is kept")

    # (c) corrupt and truncated offset files
    good = open(offsets, "rb").read()
    for kind, data in (("corrupt", good[:-3] + b"X" + good[-2:]), ("truncated", good[: len(good) // 2])):
        with open(offsets, "wb") as f:
            f.write(data)
        r = subprocess.run([kc, "standalone", props_path, src_path], capture_output=True, text=True, timeout=60)
        err = r.stdout + r.stderr
        check(r.returncode == 1 and offsets in err and kind in err,
              f"(c) {kind} offset file: exit 1 naming the file ({r.returncode}): {err.strip()[-400:]}")
        check(open(offsets, "rb").read() == data and os.path.exists(offsets + ".bak"),
              f"(c) {kind}: the file is left as it was and {offsets}.bak is on disk")
    with open(offsets, "wb") as f:
        f.write(good)

    # (d) a directory that takes no new file
    if os.geteuid() == 0:
        ro_dir = "/sys"  # root ignores mode bits; sysfs refuses new files
    else:
        ro_dir = os.path.join(work, "ro")
        os.mkdir(ro_dir)
        os.chmod(ro_dir, 0o555)
    ro_props = os.path.join(work, "worker-ro.properties")
    write_props(ro_props, dict(props, **{"offset.storage.file.filename": os.path.join(ro_dir, "connect.offsets")}))
    r = subprocess.run([kc, "standalone", ro_props], capture_output=True, text=True, timeout=60)
    err = r.stdout + r.stderr
    check(r.returncode == 1 and f"cannot write the offset file directory {ro_dir}" in err and
          ("denied" in err or "Read-only" in err),
          f"(d) read-only offset directory: exit 1 with the cause ({r.returncode}): {err.strip()[-300:]}")
    if ro_dir != "/sys":
        os.chmod(ro_dir, 0o755)
    # Mode-aware validation: standalone without the offset file names the key.
    no_file = os.path.join(work, "worker-nofile.properties")
    write_props(no_file, {k: v for k, v in props.items() if k != "offset.storage.file.filename"})
    r = subprocess.run([kc, "standalone", no_file], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "offset.storage.file.filename" in r.stderr,
          f"standalone without offset.storage.file.filename: exit 1 naming the key ({r.stderr.strip()[-200:]})")


if __name__ == "__main__":
    sys.exit(run_main("kc-standalone-", scenario))
