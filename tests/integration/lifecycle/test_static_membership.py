#!/usr/bin/env python3
"""Static membership (group.instance.id, KIP-345) of `kconnectd run`
processes on `kconnectd mock-broker` (issue 14 item 1).

usage: test_static_membership.py KCONNECTD

Two workers: w1 dynamic, w2 static (group.instance.id=kc-static-2, with
static.membership.assignment.file), session.timeout.ms=10000,
heartbeat.interval.ms=1000, a SequenceSource with two tasks spread over both.

 1. SIGTERM to w2 (static): it exits 0, stops its tasks with their offsets
    committed, logs that it does not send LeaveGroup, and never logs that it
    left the group. It does not drain (shutdown.drain.enable is on by
    default, but a static member that keeps its identity keeps its work). Its assignment file is still there for the restart. w1
    sees no rebalance for 4 s after w2 exited (with a LeaveGroup the broker
    starts one at once, see step 3): the group is waiting for w2 to return.
 2. w2 restarted with the same instance id: it joins and the two tasks run
    again on the two workers. What librdkafka's mock cluster (2.0.2) does
    with the id is printed, not asserted: it keeps no instance id state, so
    the restart is a new member and a new generation there (a real broker
    hands back the identity in the same generation; that path is tested
    against the scripted KIP-345 coordinator in
    tests/integration/static_membership).
 3. SIGTERM to a static w2 started with `--leave-on-shutdown`: it drains first
    (its tasks go to w1), logs that it left the group, and w1 starts a
    rebalance within 4 s of its exit (well below session.timeout.ms).
 4. A bad group.instance.id ("pod/2") stops `kconnectd run` at startup with
    exit status 1 and the key, value and rule on stderr.

Python 3 standard library only. Logs are kept on failure or with KC_KEEP=1.
"""
import os
import re
import signal
import subprocess
import sys
import time

from kc_harness import (Abort, Worker, check, create_connector, run_main, running_owners, say, start_broker,
                        wait_for, wait_healthy, worker_properties)

CONNECTOR = "static-seq"
TOPIC = "static-seq-data"
INSTANCE = "kc-static-2"
QUIET_S = 4


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, [f"{TOPIC}:2"])
    state_file = os.path.join(work, "w2-assignment.json")
    static = {"group.instance.id": INSTANCE, "static.membership.assignment.file": state_file}
    w1 = Worker(1, kc, work, bootstrap)
    w2 = Worker(2, kc, work, bootstrap, overrides=static)
    cluster.workers = [w1, w2]
    wait_healthy(cluster.workers)
    if not create_connector(cluster.workers, {"name": CONNECTOR, "config": {
            "connector.class": "SequenceSource", "topic": TOPIC, "tasks.max": "2", "throughput": "20"}}):
        raise Abort("cannot create the connector")

    def spread(workers):
        owners = running_owners(workers, CONNECTOR)
        return len(owners) == 2 and len(set(owners.values())) == 2

    if not wait_for(lambda: spread(cluster.workers), 90):
        raise Abort(f"tasks not spread over both workers: {running_owners(cluster.workers, CONNECTOR)}")
    check(f'"group_instance_id":"{INSTANCE}"' in open(state_file).read() if os.path.exists(state_file) else False,
          "the static worker keeps its assignment in static.membership.assignment.file")

    # 1. SIGTERM without LeaveGroup.
    before = w1.rebalances_started()
    w2.signal(signal.SIGTERM)
    status = w2.wait_exit(30)
    exited = time.monotonic()
    check(status == 0, f"static worker exits 0 on SIGTERM (got {status})")
    log2 = w2.log()
    check(re.search(r"stopped \d+ connectors and \d+ tasks in \d+ ms; final offsets committed", log2) is not None,
          "static worker stopped its tasks and committed offsets")
    check(f"static member '{INSTANCE}': not sending LeaveGroup" in log2, "static worker says it sends no LeaveGroup")
    check("left the group" not in log2, "static worker did not leave the group")
    check("drain:" not in log2, "static worker that keeps its identity does not drain")
    check(os.path.exists(state_file), "the kept assignment survives the shutdown")
    time.sleep(max(0.0, QUIET_S - (time.monotonic() - exited)))
    check(w1.rebalances_started() == before,
          f"no rebalance on w1 for {QUIET_S} s after the static worker's SIGTERM")

    # 2. Restart with the same instance id.
    gen_before = w1.applied_generation()
    w2b = Worker(3, kc, work, bootstrap, overrides=static)
    cluster.workers = [w1, w2b]
    wait_healthy([w2b])
    check(wait_for(lambda: spread(cluster.workers), 90), "after the restart the tasks run on both workers again")
    gen_after = w2b.applied_generation()
    say(f"mock cluster: generation {gen_before} before the restart, {gen_after} after "
        f"({'no new generation' if gen_after == gen_before else 'a new generation: the mock ignores group.instance.id'})")

    # 3. --leave-on-shutdown restores the LeaveGroup.
    w2b.signal(signal.SIGTERM)
    check(w2b.wait_exit(30) == 0, "restarted static worker exits 0")
    w2c = Worker(4, kc, work, bootstrap, overrides=static, args=["--leave-on-shutdown"])
    cluster.workers = [w1, w2c]
    wait_healthy([w2c])
    check(wait_for(lambda: spread(cluster.workers), 90), "tasks spread again with the --leave-on-shutdown worker")
    before = w1.rebalances_started()
    w2c.signal(signal.SIGTERM)
    check(w2c.wait_exit(30) == 0, "--leave-on-shutdown worker exits 0")
    exited = time.monotonic()
    check("left the group" in w2c.log(), "--leave-on-shutdown worker sent LeaveGroup")
    check("drain: done" in w2c.log(), "--leave-on-shutdown worker drained first (shutdown.drain.enable default)")
    check(wait_for(lambda: w1.rebalances_started() > before, QUIET_S),
          f"w1 starts a rebalance within {QUIET_S} s of the LeaveGroup ({time.monotonic() - exited:.1f} s)")

    # 4. A bad instance id is a startup error.
    props = worker_properties(bootstrap, "lifecycle-test", "http://127.0.0.1:0", 10000, 1000, 2000, 5000)
    props["group.instance.id"] = "pod/2"
    bad = os.path.join(work, "bad.properties")
    with open(bad, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in props.items())
    r = subprocess.run([kc, "run", bad], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1, f"bad group.instance.id: exit status 1 (got {r.returncode})")
    check("group.instance.id: 'pod/2' contains characters other than ASCII letters, digits, '.', '_' and '-'"
          in r.stderr, f"bad group.instance.id: clear error on stderr ({r.stderr.strip()[-200:]})")


if __name__ == "__main__":
    sys.exit(run_main("kc-static-", scenario))
