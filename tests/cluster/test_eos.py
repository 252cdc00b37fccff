"""Exactly-once source (KIP-618) under worker faults, ctest `cluster_eos`
(labels `eos`, `cluster`).

Two runs on `kconnectd mock-broker --brokers 3`, each with three `kconnectd
run` workers and one SequenceSource task (`max.records` fixed, so the run
ends with a known set of sequence numbers):

  * EOS on:  exactly.once.source.support=enabled, exactly.once.support=required;
  * EOS off: at-least-once (the default).

The worker running the source task is repeatedly SIGKILLed (and restarted)
or SIGSTOPped past the session timeout and the scheduled delay (the task
moves) and then SIGCONTed. The output topic is read by a FileStreamSink with
`isolation.level=read_committed` on a fourth worker of its own Connect
cluster (another group.id and internal topics) that is never faulted, so the
sink adds no duplicates of its own. At the end each run prints how many
sequence numbers it saw, how many duplicates and how many are missing.

Checked: no sequence number is ever missing (both runs), the EOS run has
fewer duplicates than the at-least-once run, and after the faults every
worker's status agrees on where the task runs and only that worker's
metrics show it running. The connector is created through a follower. Exactly once (zero
duplicates) is required only against a real broker (KC_EOS_BOOTSTRAP, with
KC_EOS_STRICT=1): librdkafka 2.0.2's mock broker neither fences an older
producer when the same transactional id is initialised again nor hides
aborted or open transactions from read_committed consumers (see
tests/integration/eos/test_eos_cluster.cpp), so a killed task's last open
transaction can stay visible there.

Budget: KC_EOS_FAULTS faults per run (default 3: kill, stop, kill).
KC_KEEP=1 keeps the work directory. Investigation aids: KC_EOS_ONLY=on|off
runs only that half (the on-vs-off duplicate check is then skipped);
KC_EOS_KILLS_ONLY=1 makes every fault a SIGKILL (more task handovers per run);
KC_EOS_DUMP=1 writes the output topic (and the offsets topic) with kcat to
topic-dump.txt / offsets-dump.txt in the run's directory before the broker
stops, to tell a record never written from one the reader did not deliver.
"""
import os
import re
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_lib import (FILE_SINK, REBALANCE_DELAY_MS, SEQ_CLASS, SESSION_TIMEOUT_MS, Cluster,  # noqa: E402
                         Node, Snapshot, say, settle)
from kc_harness import finish, http, wait_for  # noqa: E402

TOPIC = "eos-seq"
THROUGHPUT = 200  # records per second
SEQ = re.compile(r"seq=(\d+)")


def task_owner(cluster, name):
    """The Node running task 0 of `name` (RUNNING), or None."""
    for w in cluster.up():
        code, st = http("GET", f"{w.url}/connectors/{name}/status", timeout=3)
        if code == 200 and st.get("tasks"):
            t = st["tasks"][0]
            if t.get("state") == "RUNNING":
                return cluster.by_id(t.get("worker_id"))
    return None


def lines_seen(path):
    try:
        with open(path, errors="replace") as f:
            return [int(m.group(1)) for m in (SEQ.search(line) for line in f) if m]
    except FileNotFoundError:
        return []


def dump_topics(bootstrap, work):
    """kcat dumps of the output and offsets topics (timestamp, partition, offset, key, value per line)."""
    import subprocess
    for topic, name in ((TOPIC, "topic-dump.txt"), ("connect-offsets", "offsets-dump.txt")):
        with open(os.path.join(work, name), "w") as f:
            subprocess.run(["kcat", "-C", "-b", bootstrap, "-t", topic, "-e", "-q", "-f", "%T %p %o %k %s\\n"],
                           stdout=f, stderr=subprocess.STDOUT, timeout=120)


def run(kc, work, eos, faults, bootstrap=None):
    """One run; returns (distinct, duplicates, missing, total)."""
    mode = "on" if eos else "off"
    overrides = {"exactly.once.source.support": "enabled" if eos else "disabled"}
    # The mock has no CreateTopics: the reader's internal topics come with the broker.
    cluster = Cluster(kc, work, n=3, max_workers=3, overrides=overrides,
                      topics=(f"{TOPIC}:1", "reader-configs:1", "reader-offsets:25", "reader-status:5"),
                      bootstrap=bootstrap)
    out = os.path.join(work, "sink-output.txt")
    # The reader: its own Connect cluster, never faulted.
    sink_node = Node(9, kc, work, cluster.bootstrap,
                     {"group.id": "eos-reader", "config.storage.topic": "reader-configs",
                      "offset.storage.topic": "reader-offsets", "status.storage.topic": "reader-status"})
    sink_node.start()
    per_fault_s = (SESSION_TIMEOUT_MS + REBALANCE_DELAY_MS) / 1000 + 12
    total = int(THROUGHPUT * (15 + faults * per_fault_s))
    try:
        cluster.wait_healthy()
        if not wait_for(sink_node.healthy, 90):
            raise RuntimeError("the reader worker did not start:\n" + sink_node.log_tail())
        config = {"connector.class": SEQ_CLASS, "tasks.max": "1", "topic": TOPIC, "throughput": str(THROUGHPUT),
                  "max.records": str(total)}
        if eos:
            config["exactly.once.support"] = "required"
        # Through a follower: it forwards the create (and, for EOS, its task's
        # fencing request) to the leader.
        followers = cluster.followers()
        code, resp = cluster.create("eos", config, via=followers[0] if followers else None)
        if code not in (200, 201):
            raise RuntimeError(f"create eos: {code} {resp}")
        code, resp = http("POST", f"{sink_node.url}/connectors",
                          {"name": "reader", "config": {"connector.class": FILE_SINK, "tasks.max": "1", "topics": TOPIC,
                                                        "file": out,
                                                        "consumer.override.isolation.level": "read_committed",
                                                        "consumer.override.auto.offset.reset": "earliest"}},
                          timeout=30)
        if code not in (200, 201):
            raise RuntimeError(f"create reader: {code} {resp}")
        for i in range(faults):
            if not wait_for(lambda: task_owner(cluster, "eos") is not None, 120):
                raise RuntimeError("task eos-0 is not running anywhere")
            owner = task_owner(cluster, "eos")
            before = len(lines_seen(out))
            wait_for(lambda: len(lines_seen(out)) > before + THROUGHPUT, 30)  # it produces
            if i % 2 == 0 or os.environ.get("KC_EOS_KILLS_ONLY") == "1":
                say(f"EOS {mode}: fault {i + 1}/{faults}: SIGKILL worker {owner.n} (runs eos-0)")
                owner.kill()
                time.sleep(2)
                owner.start()
            else:
                hold = per_fault_s
                say(f"EOS {mode}: fault {i + 1}/{faults}: SIGSTOP worker {owner.n} for {hold:.0f} s")
                owner.freeze()
                time.sleep(hold)  # past session timeout + scheduled delay: the task moved
                owner.thaw()
            time.sleep(1)
        # Everything produced and read: every seq once, or the timeout.
        wait_for(lambda: set(lines_seen(out)) >= set(range(total)), 240, step=1)
        time.sleep(3)  # late duplicates, if any, arrive too
        seen = lines_seen(out)
        distinct = set(seen)
        missing = [s for s in range(total) if s not in distinct]
        dups = len(seen) - len(distinct)
        say(f"EOS {mode}: {total} sequence numbers, {len(distinct)} seen, {dups} duplicates, {len(missing)} missing"
            + (f" (first missing {missing[:5]})" if missing else ""))
        # After the hand-overs every worker must agree on where eos-0 runs,
        # and that worker's metrics must show it running (no zombie left).
        settled, probs, secs = settle(cluster, 90)
        if not settled:
            raise RuntimeError(f"the cluster did not settle after the faults: {probs}")
        snap = Snapshot(cluster)
        task = snap.status[snap.workers[0].n]["eos"]["tasks"][0]
        say(f"EOS {mode}: settled in {secs:.1f} s: {len(snap.workers)} workers report eos-0 "
            f"{task['state']} on {task['worker_id']}, and only that worker's metrics show it")
        return len(distinct), dups, len(missing), total
    finally:
        if os.environ.get("KC_EOS_DUMP") == "1":
            dump_topics(cluster.bootstrap, work)
        cluster.stop()
        sink_node.terminate()


def main():
    kc = sys.argv[1]
    faults = int(os.environ.get("KC_EOS_FAULTS", "3"))
    bootstrap = os.environ.get("KC_EOS_BOOTSTRAP")
    strict = os.environ.get("KC_EOS_STRICT") == "1"
    failures = []
    results = {}
    work = tempfile.mkdtemp(prefix="kc-eos-")
    only = os.environ.get("KC_EOS_ONLY")
    for eos in (True, False):
        if only and only != ("on" if eos else "off"):
            continue
        sub = os.path.join(work, "eos-on" if eos else "eos-off")
        os.makedirs(sub)
        try:
            results[eos] = run(kc, sub, eos, faults, bootstrap)
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            failures.append(f"EOS {'on' if eos else 'off'} run: {e}")
    for eos, (_, _, miss, total) in results.items():
        if only:
            print(f"RESULT exactly-once {'on' if eos else 'off'}: {total} records, {miss} missing")
            if miss:
                failures.append(f"EOS {'on' if eos else 'off'} lost {miss} sequence numbers")
    if len(results) == 2:
        (_, dup_on, miss_on, total_on), (_, dup_off, miss_off, total_off) = results[True], results[False]
        print(f"RESULT exactly-once on:  {total_on} records, {dup_on} duplicates, {miss_on} missing")
        print(f"RESULT exactly-once off: {total_off} records, {dup_off} duplicates, {miss_off} missing")
        if miss_on:
            failures.append(f"EOS on lost {miss_on} sequence numbers")
        if miss_off:
            failures.append(f"EOS off lost {miss_off} sequence numbers")
        if strict and dup_on:
            failures.append(f"EOS on: {dup_on} duplicates against a real broker")
        if dup_on >= dup_off:
            failures.append(f"EOS on had {dup_on} duplicates, not fewer than at-least-once's {dup_off}")
    return finish(work, failures)


if __name__ == "__main__":
    sys.exit(main())
