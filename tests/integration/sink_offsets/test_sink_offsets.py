"""Sink connector offsets (KIP-875) on a live three-worker cluster.

GET / PATCH / DELETE /connectors/{c}/offsets of FileStreamSinks go through
the leader and a follower (writes are forwarded to the leader), chosen so
that the follower does not run the sink's task. On `kconnectd mock-broker`:
  - GET shows the consumer group's committed offsets per partition, in
    Connect's shape, from every worker, RUNNING or STOPPED;
  - PATCH and DELETE while RUNNING: 400 with Connect's STOPPED message;
  - 404 for an unknown connector (GET, PATCH, DELETE);
  - bad bodies after STOP: 400 with Connect's SinkUtils messages;
  - a sink created STOPPED (its group never had members): GET is empty,
    PATCH sets offsets (numbers or digit strings), GET shows them through
    every worker, a second PATCH moves one back, RESUME: the task
    delivers exactly the lines from those offsets on;
  - consumer.override.group.id: the task consumes in that group and the
    offsets API reads and writes that same group;
  - limits of librdkafka's mock cluster, each answered as Connect would
    answer the broker's refusal, with every worker staying up:
      * OffsetCommit from outside a group the mock has seen members in is
        refused (UNKNOWN_MEMBER_ID; the mock never forgets a group, a real
        broker accepts it once the group is empty): PATCH of a sink that
        has run answers 500 with Connect's "tasks haven't stopped" message;
      * no OffsetDelete: PATCH with a null offset answers 500 naming it;
      * no DeleteGroups: DELETE answers 500 naming it.

Usage: test_sink_offsets.py <kconnectd binary>
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lifecycle"))
from kc_harness import (Abort, Worker, check, create_connector, failures, http,  # noqa: E402
                        run_main, say, start_broker, wait_for, wait_healthy, leader_and_followers)

SINK = "offsets-sink"
SINK2 = "offsets-sink-stopped"
SINK3 = "offsets-sink-override"
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
    out, out2, out3 = (os.path.join(work, n) for n in ("out.txt", "out2.txt", "out3.txt"))
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

    # The mock's limits (see the docstring): Connect's answers, workers up.
    code, body = write("PATCH", follower, f"/connectors/{SINK}/offsets", patch_a4)
    check(code == 500 and body.get("message") == (
        f"Failed to alter consumer group offsets for connector {SINK} either because its tasks haven't stopped "
        "completely yet or the connector was resumed before the request to alter its offsets could be successfully "
        "completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't "
        "eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."),
          f"PATCH of a group the mock has seen members in: 500 with Connect's message ({code} {body})")
    null_b = {"offsets": [{"partition": {"kafka_topic": "sb", "kafka_partition": 0}, "offset": None}]}
    code, body = write("PATCH", leader, f"/connectors/{SINK}/offsets", null_b)
    check(code == 500 and body.get("message") == (
        f"Failed to alter consumer group offsets for connector {SINK}: OffsetDelete API (KIP-496) not supported by "
        "the broker, requires broker version >= 2.4.0"),
          f"PATCH with a null offset on the mock: 500 naming OffsetDelete ({code} {body})")
    code, body = write("DELETE", follower, f"/connectors/{SINK}/offsets")
    check(code == 500 and body.get("message") ==
          f"Failed to reset consumer group offsets for sink connector {SINK}: DeleteGroups API (KIP-229) not "
          "supported by the broker, requires broker version >= 1.1.0",
          f"DELETE on the mock: 500 naming the unsupported DeleteGroups ({code} {body})")
    check(all(w.alive() for w in workers), "every worker is still up")
    check(get_offsets(follower) == expected, "bad bodies and refused calls changed nothing")

    # A sink created STOPPED: its group connect-<name> never had a member.
    if not create_connector(workers, {"name": SINK2, "initial_state": "STOPPED", "config": {
            "connector.class": "FileStreamSink", "tasks.max": "1", "file": out2, "topics": "sa,sb"}}):
        raise Abort("could not create the STOPPED sink")
    check(wait_state(follower, SINK2, "STOPPED", None), f"{SINK2} created STOPPED")
    code, body = http("GET", f"{leader.url}/connectors/{SINK2}/offsets", timeout=20)
    check(code == 200 and body == {"offsets": []}, f"GET of a group without offsets: empty list ({code} {body})")
    first = {"offsets": [
        {"partition": {"kafka_topic": "sa", "kafka_partition": 0}, "offset": {"kafka_offset": 6}},
        {"partition": {"kafka_topic": "sb", "kafka_partition": "0"}, "offset": {"kafka_offset": "3"}}]}
    code, body = write("PATCH", follower, f"/connectors/{SINK2}/offsets", first)
    check(code == 200 and body == {"message": "The offsets for this connector have been altered successfully"},
          f"PATCH through the follower: 200 with Connect's message ({code} {body})")
    for w in workers:
        check(get_offsets(w, SINK2) == {("sa", 0): 6, ("sb", 0): 3},
              f"GET through {w.worker_id} shows sa-0 at 6, sb-0 at 3 ({get_offsets(w, SINK2)})")
    code, body = write("PATCH", leader, f"/connectors/{SINK2}/offsets", patch_a4)
    check(code == 200, f"second PATCH (sa-0 back to 4) through the leader: 200 ({code} {body})")
    check(get_offsets(follower, SINK2) == {("sa", 0): 4, ("sb", 0): 3}, "GET shows sa-0 at 4, sb-0 still at 3")
    resume(follower, SINK2)
    check(wait_for(lambda: lines_with(out2, "a") == A_LINES[4:] and lines_with(out2, "b") == B_LINES[3:], 60, 0.25),
          f"the task delivered exactly a4..a9 and b3..b4 ({read_lines(out2)})")
    check(wait_for(lambda: get_offsets(follower, SINK2) == expected, 30, 0.5),
          f"its task committed up to the end ({get_offsets(follower, SINK2)})")
    check(lines_with(out, "a") == A_LINES and lines_with(out, "b") == B_LINES, f"{SINK} was not affected")

    # consumer.override.group.id: the runtime and the offsets API share it.
    if not create_connector(workers, {"name": SINK3, "initial_state": "STOPPED", "config": {
            "connector.class": "FileStreamSink", "tasks.max": "1", "file": out3, "topics": "sa",
            "consumer.override.group.id": "custom-sink-group"}}):
        raise Abort("could not create the override sink")
    check(wait_state(follower, SINK3, "STOPPED", None), f"{SINK3} created STOPPED")
    code, body = write("PATCH", follower, f"/connectors/{SINK3}/offsets",
                       {"offsets": [{"partition": {"kafka_topic": "sa", "kafka_partition": 0},
                                     "offset": {"kafka_offset": 7}}]})
    check(code == 200, f"PATCH the override sink's group to 7 ({code} {body})")
    resume(leader, SINK3)
    check(wait_for(lambda: read_lines(out3) == A_LINES[7:], 60, 0.25),
          f"the override sink's task started from the offset in custom-sink-group ({read_lines(out3)})")
    check(wait_for(lambda: get_offsets(leader, SINK3) == {("sa", 0): 10}, 30, 0.5),
          f"GET of the override sink reads its task's commits in custom-sink-group ({get_offsets(leader, SINK3)})")


if __name__ == "__main__":
    sys.exit(run_main("kc-sink-offsets-", scenario))
