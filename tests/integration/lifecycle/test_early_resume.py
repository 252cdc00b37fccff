#!/usr/bin/env python3
"""A crashed dynamic worker resumes its kept assignment before it rejoins
(issue 26; deploy/README.md "A crashed worker resumes before it rejoins").

usage: test_early_resume.py KCONNECTD

Three dynamic workers on `kconnectd mock-broker`, each with
static.membership.assignment.file, session.timeout.ms=6000,
scheduled.rebalance.max.delay.ms=20000, a SequenceSource with 6 tasks
spread over the three.

 1. SIGKILL of a follower, back 1 s later on the same address: before its
    first JoinGroup completes it logs that it resumes exactly the tasks it
    ran, and starts each of them (its `start-task` lines come before its
    `joined as` line). After the round, all 6 tasks run, its own on it, and
    the other two workers stopped no task.
 2. The same worker killed again, its file back-dated by 60 s (older than
    session - heartbeat + delay / 2 = 15 s) before the restart: it logs that
    it does not resume, starts nothing before it joins, and gets its tasks
    back in the round it joins (return to owner).

Python 3 standard library only. Logs are kept on failure or with KC_KEEP=1.
"""
import os
import re
import sys
import time

from kc_harness import (Abort, Worker, check, create_connector, leader_and_followers, run_main, running_owners,
                        say, start_broker, wait_for, wait_healthy)

CONNECTOR = "er-seq"
TOPIC = "er-seq-data"
TASKS = 6


def overrides(work, n):
    return {"static.membership.assignment.file": os.path.join(work, f"w{n}.assignment"),
            "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "20000"}


def stop_count(w):
    return len(re.findall(r"stop-task ", w.log()))


def restart(kc, work, bootstrap, cluster, old):
    """SIGKILLs `old`'s process if alive, starts worker n again on its port;
    returns (new Worker, offset of its output before the restart)."""
    mark = os.path.getsize(old.out_path)
    back = Worker(old.n, kc, work, bootstrap, overrides=overrides(work, old.n), port=old.port)
    cluster.workers = [back if w is old else w for w in cluster.workers]
    return back, mark


def since(w, mark):
    with open(w.out_path, "rb") as f:
        f.seek(mark)
        return f.read().decode(errors="replace")


def all_running(cluster):
    owners = running_owners(cluster.workers, CONNECTOR)
    return owners if len(owners) == TASKS else None


def scenario(kc, work, cluster):
    cluster.broker, bootstrap = start_broker(kc, work, [f"{TOPIC}:3"])
    cluster.workers = [Worker(n, kc, work, bootstrap, overrides=overrides(work, n)) for n in (1, 2, 3)]
    wait_healthy(cluster.workers)
    if not create_connector(cluster.workers, {"name": CONNECTOR, "config": {
            "connector.class": "SequenceSource", "topic": TOPIC, "tasks.max": str(TASKS), "throughput": "20"}}):
        raise Abort("cannot create the connector")
    if not wait_for(lambda: (o := all_running(cluster)) and len(set(o.values())) == 3, 90, step=0.5):
        raise Abort(f"6 tasks never ran on 3 workers: {running_owners(cluster.workers, CONNECTOR)}")
    _, followers = leader_and_followers(cluster.workers)
    owners = all_running(cluster)
    victim = next(w for w in followers if any(o == w.worker_id for o in owners.values()))
    mine = sorted(t for t, o in owners.items() if o == victim.worker_id)
    say(f"victim worker {victim.n} ({victim.worker_id}) runs tasks {mine}")
    others = [w for w in cluster.workers if w is not victim]
    stops_before = {w.n: stop_count(w) for w in others}

    # 1. Crash and return: resumed before the join.
    victim.proc.kill()
    victim.proc.wait()
    time.sleep(1.0)
    back, mark = restart(kc, work, bootstrap, cluster, victim)
    if not wait_for(lambda: "joined as" in since(back, mark), 40):
        raise Abort(f"the restarted worker never joined:\n{since(back, mark)[-3000:]}")
    text = since(back, mark)
    resumed = re.search(r"resuming (\d+) connectors and (\d+) tasks of generation \d+ before joining", text)
    check(resumed is not None, "the restarted worker logs that it resumes its kept assignment before joining")
    if resumed:
        check(int(resumed.group(2)) == len(mine), f"it resumes its {len(mine)} tasks (logged {resumed.group(2)})")
    joined_at = text.find("joined as")
    for t in mine:
        at = text.find(f"start-task {CONNECTOR}-{t} STARTED")
        check(0 <= at < joined_at, f"task {t} started before the first JoinGroup completed (at {at}, join {joined_at})")
    if not wait_for(lambda: (o := all_running(cluster)) and all(o.get(t) == back.worker_id for t in mine), 30):
        check(False, f"after the round the victim runs its tasks again: {running_owners(cluster.workers, CONNECTOR)}")
    for w in others:
        check(stop_count(w) == stops_before[w.n], f"worker {w.n} stopped no task ({stop_count(w)} stops, "
                                                   f"{stops_before[w.n]} before)")

    # 2. Killed again, the file back-dated past the bound: no early resume.
    back.proc.kill()
    back.proc.wait()
    path = os.path.join(work, f"w{back.n}.assignment")
    check(os.path.exists(path), "a SIGKILL leaves the assignment file in place")
    old = time.time() - 60
    os.utime(path, (old, old))
    again, mark2 = restart(kc, work, bootstrap, cluster, back)
    if not wait_for(lambda: "joined as" in since(again, mark2), 40):
        raise Abort(f"the restarted worker never joined:\n{since(again, mark2)[-3000:]}")
    text = since(again, mark2)
    check(re.search(r"not resuming the kept assignment of generation \d+ before joining: kept \d+ ms ago, more than "
                    r"15000 ms", text) is not None, "a file older than the bound is not resumed, and the log says why")
    check("before joining (a restart" not in text, "nothing resumed before the join")
    joined_at = text.find("joined as")
    first_start = text.find("start-task ")
    check(first_start == -1 or first_start > joined_at, "no task started before the join")
    if not wait_for(lambda: (o := all_running(cluster)) and all(o.get(t) == again.worker_id for t in mine), 40):
        check(False, f"the returning worker gets its tasks back: {running_owners(cluster.workers, CONNECTOR)}")


if __name__ == "__main__":
    sys.exit(run_main("kc-early-resume-", scenario))
