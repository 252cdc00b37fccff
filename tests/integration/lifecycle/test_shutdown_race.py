#!/usr/bin/env python3
"""SIGTERM to the broker and the workers at the same moment (the README
tour's teardown): no worker may die of a signal.

usage: test_shutdown_race.py KCONNECTD

Each round starts `kconnectd mock-broker` and two `kconnectd run` workers
(default SIGTERM drain), creates a SequenceSource connector with four tasks,
waits until they are RUNNING, then sends SIGTERM to the broker and, 0-20 ms
later, to both workers. The workers' stop then runs while the broker goes
away: status writes fail with "Purged in queue" while the stores close.
Checks per round: every worker exits on its own within
shutdown.drain.timeout.ms + 20 s, and never by a signal (exit 139 / -11 was
the bug: a status write's delivery report ran after its store was freed).

KC_RACE_ROUNDS (default 1, about 40 s) sets the number of rounds, for a
longer hunt (it stops at the first failed round); KC_RACE_CORES=1 lets a
crashing worker dump core.
Python 3 standard library only; logs kept on failure or with KC_KEEP=1.
"""
import os
import random
import resource
import signal
import subprocess
import sys
import time

from kc_harness import (Abort, Worker, check, create_connector, failures, run_main, running_owners, say, start_broker,
                        wait_for, wait_healthy)

TASKS = 4
DRAIN_MS = 15000  # shutdown.drain.timeout.ms default


def _round(kc, work, cluster, n):
    rdir = os.path.join(work, f"round{n}")
    os.makedirs(rdir)
    topic = "race-seq-data"
    cluster.broker, bootstrap = start_broker(kc, rdir, [f"{topic}:4"])
    workers = [Worker(i, kc, rdir, bootstrap, group=f"race-{n}") for i in (1, 2)]
    cluster.workers += workers
    wait_healthy(workers)
    if not create_connector(workers, {"name": "race-seq", "config": {
            "connector.class": "SequenceSource", "topic": topic, "tasks.max": str(TASKS), "throughput": "200"}}):
        raise Abort("cannot create the connector")
    if not wait_for(lambda: len(running_owners(workers, "race-seq")) == TASKS, 60, step=0.3):
        raise Abort(f"round {n}: the {TASKS} tasks never all ran")
    time.sleep(random.uniform(0.2, 1.0))  # some status and data writes in flight
    gap = random.uniform(0, 0.02)
    cluster.broker.send_signal(signal.SIGTERM)
    time.sleep(gap)
    for w in workers:
        w.signal(signal.SIGTERM)
    say(f"round {n}: SIGTERM to the broker, {gap * 1000:.0f} ms later to both workers")
    for w in workers:
        rc = w.wait_exit(DRAIN_MS / 1000 + 20)
        check(rc is not None, f"round {n}: worker {w.n} exited by itself (status {rc})")
        if rc is not None:
            clean = 0 <= rc < 128
            check(clean, f"round {n}: worker {w.n} was not killed by a signal (exit status {rc})"
                  + ("" if clean else f"; log tail:\n{w.log()[-2500:]}"))
    try:
        cluster.broker.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass  # stop_all kills it


def scenario(kc, work, cluster):
    # KC_RACE_CORES=1: a crashing worker dumps core (where core_pattern says) for gdb.
    if os.environ.get("KC_RACE_CORES") == "1":
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass
    rounds = int(os.environ.get("KC_RACE_ROUNDS", "1"))
    for n in range(rounds):
        _round(kc, work, cluster, n)
        if failures:
            break


if __name__ == "__main__":
    sys.exit(run_main("kc-race-", scenario))
