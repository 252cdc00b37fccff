"""Sink connector offsets (KIP-875) on a live three-worker cluster.

GET / PATCH / DELETE /connectors/{c}/offsets of a FileStreamSink go through
the leader and a follower (writes are forwarded to the leader), none of
which need to run the sink's task. Checks, on `kconnectd mock-broker`:
  - GET shows the consumer group's committed offsets per partition, in
    Connect's shape, from every worker, in any state;
  - PATCH while RUNNING: 400 with Connect's STOPPED message;
  - 404 for an unknown connector (GET, PATCH, DELETE);
  - bad bodies after STOP: 400 with Connect's SinkUtils messages;
  - STOP, PATCH to an earlier offset, GET shows it, RESUME: the sink
    re-delivers exactly the lines from there;
  - PATCH to 0 for every partition, RESUME: everything is re-read;
  - consumer.override.group.id: the task consumes in that group and the
    offsets API reads and writes that same group;
  - PATCH with a null offset (OffsetDelete) and DELETE (DeleteGroups):
    librdkafka's mock cluster lacks both APIs, so the worker answers 500
    naming the missing broker feature, and stays up. (On a real broker the
    same calls delete the partition's offset / the group.)

Usage: test_sink_offsets.py <kconnectd binary>
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import (Abort, Worker, check, create_connector, failures, http,  # noqa: E402
                        run_main, say, start_broker, wait_for, wait_healthy)

SINK = "offsets-sink"
SINK2 = "offsets-sink-override"
A_LINES = [f"a{i}" for i in range(10)]
B_LINES = [f"b{i}" for i in range(5)]
STOPPED_MSG = ("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
               "the specified connector by issuing a 'PUT' request to the '/connectors/" + SINK + "/stop' endpoint")


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def lines_with(path, prefix):
    return [ln for ln in read_lines(path) if ln.startswith(prefix)]


def offsets_map(body):
    """{(topic, partition): offset} of a GET answer, or None if malformed."""
    if not isinstance(body, dict) or not isinstance(body.get("offsets"), list):
        return None
    out = {}
    for e in body["offsets"]:
        p, o = e.get("partition", {}), e.get("offset", {})
        if set(p) != {"kafka_topic", "kafka_partition"} or set(o) != {"kafka_offset"}:
            return None
        out[(p["kafka_topic"], p["kafka_partition"])] = o["kafka_offset"]
    return out


def get_offsets(w, name=SINK):
    code, body = http("GET", f"{w.url}/connectors/{name}/offsets", timeout=20)
    return offsets_map(body) if code == 200 else None


def write(method, w, path, body=None):
    """A write retried while the cluster answers 409 (rebalance) or has no
    connection; returns (status, body)."""
    last = (None, None)

    def attempt():
        nonlocal last
        last = http(method, w.url + path, body, timeout=40)
        return last[0] not in (None, 409)
    wait_for(attempt, 60, 0.5)
    return last


def leader_and_followers(workers):
    leader = None
    for w in workers:
        hist = w.rebalances() or []
        if hist and hist[-1].get("is_leader"):
            leader = w
    return leader, [w for w in workers if w is not leader]


def status(w, name):
    code, body = http("GET", f"{w.url}/connectors/{name}/status", timeout=5)
    return body if code == 200 else None


def wait_state(w, name, state, tasks_running):
    def ok():
        st = status(w, name)
        if not st or st.get("connector", {}).get("state") != state:
            return False
        if tasks_running is None:
            return len(st.get("tasks", [])) == 0
        return [t.get("state") for t in st.get("tasks", [])] == ["RUNNING"] * tasks_running
    return wait_for(ok, 90, 0.25)


def stop(w, name):
    code, _ = write("PUT", w, f"/connectors/{name}/stop")
    check(code == 204, f"PUT /connectors/{name}/stop through {w.worker_id}: 204 ({code})")
    check(wait_state(w, name, "STOPPED", None), f"{name} STOPPED with no tasks")


def resume(w, name):
    code, _ = write("PUT", w, f"/connectors/{name}/resume")
    check(code == 202, f"PUT /connectors/{name}/resume: 202 ({code})")
    check(wait_state(w, name, "RUNNING", 1), f"{name} RUNNING with its task again")


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, ["sa:1", "sb:1"])
    say(f"mock broker at {bootstrap}")
    cluster.workers = [Worker(i, kc, work, bootstrap, group="sink-offsets-test") for i in range(3)]
    workers = cluster.workers
    wait_healthy(workers)

    in_a, in_b = os.path.join(work, "a.txt"), os.path.join(work, "b.txt")
    out, out2 = os.path.join(work, "out.txt"), os.path.join(work, "out2.txt")
    with open(in_a, "w") as f:
        f.write("\n".join(A_LINES) + "\n")
    with open(in_b, "w") as f:
        f.write("\n".join(B_LINES) + "\n")
    for name, path, topic in (("src-a", in_a, "sa"), ("src-b", in_b, "sb")):
        if not create_connector(workers, {"name": name, "config": {
                "connector.class": "FileStreamSource", "tasks.max": "1", "file": path, "topic": topic}}):
            raise Abort(f"could not create {name}")
    if not create_connector(workers, {"name": SINK, "config": {
            "connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": "sa,sb"}}):
        raise Abort("could not create the sink")
    if not check(wait_for(lambda: len(read_lines(out)) >= 15, 90, 0.25), "the sink wrote all 15 lines"):
        raise Abort(f"sink output: {read_lines(out)}")
    check(lines_with(out, "a") == A_LINES and lines_with(out, "b") == B_LINES, "each topic's lines once, in order")

    leader, followers = leader_and_followers(workers)
    if leader is None:
        raise Abort("no worker reports itself leader in /rebalances")
    st = status(leader, SINK)
    owner = st["tasks"][0]["worker_id"] if st and st.get("tasks") else None
    # Ask through workers that do not run the sink task: the leader (unless
    # it owns the task) and a follower that does not.
    follower = next((f for f in followers if f.worker_id != owner), followers[0])
    askers = [w for w in (leader, follower) if w.worker_id != owner] or [follower]
    say(f"leader {leader.worker_id}, follower asked {follower.worker_id}, sink task on {owner}")
    check(follower.worker_id != owner, "the follower asked does not run the sink task")

    expected = {("sa", 0): 10, ("sb", 0): 5}
    for w in workers:
        check(wait_for(lambda: get_offsets(w) == expected, 30, 0.5),
              f"GET through {w.worker_id}: committed offsets {expected} ({get_offsets(w)})")
    code, body = http("GET", f"{follower.url}/connectors/{SINK}/offsets", timeout=20)
    check(code == 200 and body["offsets"][0] == {"partition": {"kafka_topic": "sa", "kafka_partition": 0},
                                                 "offset": {"kafka_offset": 10}},
          f"GET has Connect's JSON shape ({body})")

    patch_a4 = {"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0}, "offset": {"kafka_offset": 4}}]}
    for w in (leader, follower):
        code, body = write("PATCH", w, f"/connectors/{SINK}/offsets", patch_a4)
        check(code == 400 and body.get("message") == STOPPED_MSG,
              f"PATCH while RUNNING through {w.worker_id}: 400 with Connect's message ({code} {body})")
    code, body = write("DELETE", follower, f"/connectors/{SINK}/offsets")
    check(code == 400 and body.get("message") == STOPPED_MSG, f"DELETE while RUNNING: 400 ({code} {body})")

    for method in ("GET", "PATCH", "DELETE"):
        code, body = http(method, f"{follower.url}/connectors/nope/offsets",
                          patch_a4 if method == "PATCH" else None, timeout=20)
        check(code == 404 and body.get("message") == "Connector nope not found",
              f"{method} unknown connector: 404 ({code} {body})")

    stop(follower, SINK)
    check(get_offsets(follower) == expected, "GET while STOPPED shows the same offsets")

    bad = [
        ({"offsets": [{"partition": {"kafka_partition": 0}, "offset": {"kafka_offset": 1}}]},
         "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"),
        ({"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0}, "offset": {"kafka_offset": -3}}]},
         "Invalid negative Kafka offset value in the provided offsets: '-3'. Offset values for sink connectors "
         "need to be non-negative integers."),
        ({"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": "zero"}, "offset": {"kafka_offset": 1}}]},
         "Failed to parse the following Kafka partition value in the provided offsets: 'zero'. Partition values "
         "for sink connectors need to be integers."),
        ({"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0}, "offset": {"kafka_offset": "x1"}}]},
         "Failed to parse the following Kafka offset value in the provided offsets: 'x1'. Offset values for sink "
         "connectors need to be integers."),
        ({"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0}, "offset": {"position": 1}}]},
         "The offset for a sink connector should either be null or contain the key 'kafka_offset'"),
    ]
    for i, (body_in, msg) in enumerate(bad):
        w = askers[i % len(askers)]
        code, body = write("PATCH", w, f"/connectors/{SINK}/offsets", body_in)
        check(code == 400 and body.get("message") == msg, f"bad PATCH body {i} through {w.worker_id}: 400 "
              f"'{msg[:50]}...' ({code} {body})")
    check(get_offsets(follower) == expected, "bad bodies changed nothing")

    # Alter through the follower (forwarded to the leader), then read back
    # through every worker.
    code, body = write("PATCH", follower, f"/connectors/{SINK}/offsets", patch_a4)
    check(code == 200 and body == {"message": "The offsets for this connector have been altered successfully"},
          f"PATCH sa-0 to 4 while STOPPED: 200 with Connect's message ({code} {body})")
    for w in workers:
        check(get_offsets(w) == {("sa", 0): 4, ("sb", 0): 5}, f"GET through {w.worker_id} shows sa-0 at 4")
    resume(follower, SINK)
    want_a = A_LINES + A_LINES[4:]
    check(wait_for(lambda: lines_with(out, "a") == want_a, 60, 0.25),
          f"the sink re-delivered exactly a4..a9 ({lines_with(out, 'a')})")
    check(lines_with(out, "b") == B_LINES, "sb was not re-delivered")
    check(wait_for(lambda: get_offsets(leader) == expected, 30, 0.5), "offsets back at the end after RESUME")

    stop(leader, SINK)
    # Null offset = OffsetDelete; DELETE = DeleteGroups. The mock cluster
    # implements neither: the answer names the missing broker feature.
    null_b = {"offsets": [{"partition": {"kafka_topic": "sb", "kafka_partition": 0}, "offset": None}]}
    code, body = write("PATCH", leader, f"/connectors/{SINK}/offsets", null_b)
    check(code == 500 and "OffsetDelete API (KIP-496) not supported by the broker" in str(body),
          f"PATCH with a null offset on the mock: 500 naming OffsetDelete ({code} {body})")
    code, body = write("DELETE", follower, f"/connectors/{SINK}/offsets")
    check(code == 500 and body.get("message") ==
          f"Failed to reset consumer group offsets for sink connector {SINK}: DeleteGroups API (KIP-229) not "
          "supported by the broker, requires broker version >= 1.1.0",
          f"DELETE on the mock: 500 naming the unsupported DeleteGroups ({code} {body})")
    check(all(w.alive() for w in workers), "every worker is still up")
    check(get_offsets(follower) == expected, "the failed calls changed nothing")

    # Everything from the beginning: every partition back to 0.
    zero = {"offsets": [{"partition": {"kafka_topic": t, "kafka_partition": "0"}, "offset": {"kafka_offset": 0}}
                        for t in ("sa", "sb")]}
    code, body = write("PATCH", leader, f"/connectors/{SINK}/offsets", zero)
    check(code == 200, f"PATCH every partition to 0 through the leader ({code} {body})")
    check(get_offsets(follower) == {("sa", 0): 0, ("sb", 0): 0}, "GET shows both partitions at 0")
    resume(leader, SINK)
    check(wait_for(lambda: lines_with(out, "a") == want_a + A_LINES and lines_with(out, "b") == B_LINES * 2, 60, 0.25),
          f"everything re-read from the beginning ({read_lines(out)})")

    # consumer.override.group.id: runtime and offsets API share the group.
    if not create_connector(workers, {"name": SINK2, "config": {
            "connector.class": "FileStreamSink", "tasks.max": "1", "file": out2, "topics": "sa",
            "consumer.override.group.id": "custom-sink-group"}}):
        raise Abort("could not create the override sink")
    check(wait_for(lambda: read_lines(out2) == A_LINES, 60, 0.25), "the override sink wrote sa once")
    check(wait_for(lambda: get_offsets(follower, SINK2) == {("sa", 0): 10}, 30, 0.5),
          f"GET of the override sink reads group custom-sink-group ({get_offsets(follower, SINK2)})")
    stop(follower, SINK2)
    code, body = write("PATCH", follower, f"/connectors/{SINK2}/offsets",
                       {"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0},
                                     "offset": {"kafka_offset": 7}}]})
    check(code == 200, f"PATCH the override sink to 7 ({code} {body})")
    resume(follower, SINK2)
    check(wait_for(lambda: read_lines(out2) == A_LINES + A_LINES[7:], 60, 0.25),
          f"the override sink's task resumed from the offset written to its group ({read_lines(out2)})")
    check(lines_with(out, "a") == want_a + A_LINES, "the first sink (group connect-offsets-sink) was not affected")


if __name__ == "__main__":
    sys.exit(run_main("kc-sink-offsets-", scenario))
