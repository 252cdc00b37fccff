#!/usr/bin/env python3
"""The seven cross-worker cases of issue 9 as named tests, each asserting
what Kafka Connect does. Usage: test_scenarios.py KCONNECTD SCENARIO.

Every case prints what it observed next to what it expected, so a failure
says why. KC_KEEP=1 keeps the work directory (logs, properties).
"""
import json
import os
import re
import signal
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_lib as cl  # noqa: E402
from cluster_lib import say, wait_for  # noqa: E402
from kc_harness import finish  # noqa: E402

failures = []


def check(cond, msg):
    say(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)
    return cond


class Abort(Exception):
    """A precondition the rest of the case depends on did not hold."""


def require(cond, msg):
    if not check(cond, msg):
        raise Abort(msg)


# ------------------------------------------------------------------ helpers

def statuses(c, name):
    """{worker n: normalized status of `name` or None} over the up workers."""
    out = {}
    for w in c.up():
        code, body = cl.http("GET", f"{w.url}/connectors/{name}/status", timeout=5)
        out[w.n] = cl.normalize_status(body) if code == 200 else None
    return out


def brief(st):
    if not st:
        return str(st)
    tasks = ", ".join(f"{t['id']}:{t['state']}@{t['worker_id'].rsplit(':', 1)[-1]}" for t in st["tasks"])
    return f"connector {st['connector']['state']}@{(st['connector']['worker_id'] or '?').rsplit(':', 1)[-1]} tasks [{tasks}]"


def show(c, name):
    return "; ".join(f"w{n}: {brief(s)}" for n, s in statuses(c, name).items())


def wait_all(c, name, pred, timeout_s):
    """Waits until pred(status) holds on every up worker; returns (held, statuses)."""
    held = wait_for(lambda: all(s is not None and pred(s) for s in statuses(c, name).values()), timeout_s, step=0.5)
    return bool(held), statuses(c, name)


def all_in(state, n_tasks=None):
    def pred(s):
        return (s["connector"]["state"] == state and all(t["state"] == state for t in s["tasks"])
                and (n_tasks is None or len(s["tasks"]) == n_tasks))
    return pred


def task_owners(c):
    """{(connector, task): [worker n...]} from every up worker's metrics."""
    out = {}
    for w in c.up():
        m = w.metrics()
        for key, state in (m.task_states() if m else {}).items():
            out.setdefault(key, []).append((w.n, state))
    return out


def polled(c, name, family="source_task_records_polled_total"):
    """{(worker n, task): counter} of `name`'s tasks over the up workers."""
    out = {}
    for w in c.up():
        m = w.metrics()
        for (cn, t), v in (m.counter(family) if m else {}).items():
            if cn == name:
                out[(w.n, t)] = v
    return out


def rising(c, name, window_s=3.0, family="source_task_records_polled_total"):
    a = polled(c, name, family)
    time.sleep(window_s)
    b = polled(c, name, family)
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


def startup_attempts(c):
    """{worker n: (connector startup attempts, task startup attempts)}."""
    out = {}
    for w in c.up():
        m = w.metrics()
        out[w.n] = (m.value("worker_connector_startup_attempts_total", 0),
                    m.value("worker_task_startup_attempts_total", 0)) if m else None
    return out


def settle_or_note(c, timeout_s=60):
    ok, probs, took = cl.settle(c, timeout_s)
    say(f"settle: {'quiet' if ok else 'NOT quiet'} after {took:.1f}s {probs[:6] if probs else ''}")
    return ok


def start(kc, work, n, **kw):
    c = cl.Cluster(kc, work, n=n, **kw)
    c.wait_healthy()
    return c


def create_seq(c, name, tasks, via=None, spread=True):
    """Creates a SequenceSource and waits until its tasks run (on more than
    one worker when `spread`)."""
    code, resp = c.create(name, cl.seq_config(tasks), via=via)
    require(code == 201, f"POST /connectors {name} -> {code} (want 201) {json.dumps(resp)[:200]}")
    ok, sts = wait_all(c, name, all_in("RUNNING", tasks), 60)
    require(ok, f"{name}: connector and {tasks} tasks RUNNING on every worker: {show(c, name)}")
    if spread:
        st = next(iter(sts.values()))
        workers = {t["worker_id"] for t in st["tasks"]}
        require(len(workers) > 1, f"{name}: tasks spread over {len(workers)} workers ({brief(st)})")
    return next(iter(sts.values()))


# ------------------------------------------------------------------ the seven cases

def pause_reaches_all_workers(kc, work):
    """1. PUT pause through either worker pauses every task, wherever it runs."""
    c = start(kc, work, 2)
    try:
        st = create_seq(c, "c", 2)
        owner = c.by_id(st["connector"]["worker_id"])
        other = next(w for w in c.up() if w is not owner)
        say(f"before: {brief(st)}; pausing through worker {other.n} (does not own the connector)")
        code, _ = c.rest("PUT", "/connectors/c/pause", via=other)
        check(code == 202, f"PUT pause -> {code} (want 202)")
        ok, _ = wait_all(c, "c", all_in("PAUSED", 2), 20)
        check(ok, f"every worker shows connector and both tasks PAUSED within 20s; got {show(c, 'c')}")
        owners = task_owners(c)
        states = {k: v for k, v in owners.items() if k[0] == "c"}
        check(all(s == "PAUSED" for v in states.values() for _, s in v),
              f"each worker's metrics show its tasks PAUSED: {states}")
        r = rising(c, "c")
        check(not r, f"records_polled_total of c does not rise while PAUSED (rose: {r})")
        code, _ = c.rest("PUT", "/connectors/c/resume", via=owner)
        check(code == 202, f"PUT resume -> {code} (want 202)")
        ok, _ = wait_all(c, "c", all_in("RUNNING", 2), 20)
        check(ok, f"after resume every worker shows all RUNNING; got {show(c, 'c')}")
        r = rising(c, "c")
        check(len(r) == 2, f"both tasks poll again after resume (rose: {r})")
    finally:
        c.stop()


def stop_shows_stopped(kc, work):
    """2. PUT stop: connector STOPPED and "tasks": [] (KIP-875) on every worker."""
    c = start(kc, work, 2)
    try:
        create_seq(c, "c", 2)
        code, _ = c.rest("PUT", "/connectors/c/stop", via=c.followers()[0] if c.followers() else None)
        check(code == 204, f"PUT stop -> {code} (want 204)")
        ok, _ = wait_all(c, "c", lambda s: s["connector"]["state"] == "STOPPED" and s["tasks"] == [], 20)
        check(ok, f"every worker's status: connector STOPPED, tasks []; got {show(c, 'c')}")
        code, tasks = c.rest("GET", "/connectors/c/tasks")
        check(code == 200 and tasks == [], f"GET /connectors/c/tasks -> {code} {json.dumps(tasks)[:200]} (want [])")
        left = {k: v for k, v in task_owners(c).items() if k[0] == "c"}
        check(not left, f"no worker has a task of c in its metrics (got {left})")
        r = rising(c, "c")
        check(not r, f"no task of c polls while STOPPED (rose: {r})")
    finally:
        c.stop()


def resume_after_stop_via_follower(kc, work):
    """3. Stop, then resume on a follower: tasks regenerated and RUNNING."""
    c = start(kc, work, 3)
    try:
        create_seq(c, "c", 2)
        code, _ = c.rest("PUT", "/connectors/c/stop")
        check(code == 204, f"PUT stop -> {code} (want 204)")
        # The stop took effect (case 2 checks how the status shows it).
        stopped = wait_for(lambda: all(cl.get_tasks(w, "c") == (200, [])
                                       for w in c.up()) and not any(k[0] == "c" for k in task_owners(c)), 20)
        require(stopped, f"stop took effect before the resume: GET /tasks [] on every worker, no task of c "
                         f"running (metrics {task_owners(c)})")
        wait_all(c, "c", lambda s: s["connector"]["state"] == "STOPPED", 10)
        say(f"status after stop: {show(c, 'c')}")
        lead = c.leader()
        follower = next(w for w in c.up() if w is not lead)
        say(f"leader is worker {lead.n if lead else '?'}; resuming through follower {follower.n}")
        code, _ = c.rest("PUT", "/connectors/c/resume", via=follower)
        check(code == 202, f"PUT resume via follower -> {code} (want 202)")
        ok, _ = wait_all(c, "c", all_in("RUNNING", 2), 30)
        check(ok, f"connector RUNNING with tasks 0 and 1 RUNNING on every worker within 30s; got {show(c, 'c')}")
        for w in c.up():
            code, tasks = cl.get_tasks(w, "c")
            ids = sorted(t["id"]["task"] for t in tasks) if code == 200 and isinstance(tasks, list) else tasks
            check(ids == [0, 1], f"worker {w.n}: GET /connectors/c/tasks ids {ids} (want [0, 1])")
        r = rising(c, "c")
        check(len(r) == 2, f"both regenerated tasks poll (rose: {r})")
    finally:
        c.stop()


def pause_rebalance_resume(kc, work):
    """4. Pause, add a worker so that tasks move, resume: every task RUNNING."""
    c = start(kc, work, 2)
    try:
        st = create_seq(c, "c", 3)
        code, _ = c.rest("PUT", "/connectors/c/pause")
        check(code == 202, f"PUT pause -> {code} (want 202)")
        c.model["c"].target = "PAUSED"
        ok, _ = wait_all(c, "c", all_in("PAUSED", 3), 20)
        check(ok, f"all PAUSED before the join; got {show(c, 'c')}")
        before = {t["id"]: t["worker_id"] for t in statuses(c, "c")[c.up()[0].n]["tasks"]}
        newcomer = c.nodes[2]
        newcomer.start()
        c.wait_healthy()
        moved = wait_for(lambda: any(k[0] == "c" for k in (newcomer.metrics() or cl.Metrics("")).task_states()), 40)
        check(bool(moved), f"a task of c moved to the new worker {newcomer.n} (placement {task_owners(c)})")
        settle_or_note(c, 30)
        ok, _ = wait_all(c, "c", all_in("PAUSED", 3), 10)
        check(ok, f"after the rebalance every task is still PAUSED; got {show(c, 'c')} (before: {before})")
        r = rising(c, "c")
        check(not r, f"nothing polls while PAUSED after the rebalance (rose: {r})")
        code, _ = c.rest("PUT", "/connectors/c/resume", via=newcomer)
        check(code == 202, f"PUT resume -> {code} (want 202)")
        ok, _ = wait_all(c, "c", all_in("RUNNING", 3), 20)
        check(ok, f"after resume connector and all 3 tasks RUNNING on every worker; got {show(c, 'c')}")
        states = {k: v for k, v in task_owners(c).items() if k[0] == "c"}
        check(sorted(k[1] for k in states) == [0, 1, 2] and all(s == "RUNNING" for v in states.values() for _, s in v),
              f"metrics: tasks 0..2 RUNNING, each on one worker: {states}")
        r = rising(c, "c")
        check(len(r) == 3, f"all 3 tasks poll after resume (rose: {r})")
    finally:
        c.stop()


def shrink_tasks_no_stale_status(kc, work):
    """5. tasks.max 4 -> 2: /tasks and every worker's /status show tasks 0, 1 only."""
    c = start(kc, work, 2)
    try:
        create_seq(c, "c", 4)
        code, _ = c.rest("PUT", "/connectors/c/config", cl.seq_config(2), via=c.up()[-1])
        check(code == 200, f"PUT /connectors/c/config tasks.max=2 -> {code} (want 200)")
        c.model["c"] = cl.ConnectorModel("c", cl.seq_config(2))

        def ids_ok(s):
            return [t["id"] for t in s["tasks"]] == [0, 1] and all(t["state"] == "RUNNING" for t in s["tasks"])
        # The shrink moves tasks (a rebalance), during which a moving task
        # may show UNASSIGNED; the point is what stays once it is over.
        settle_or_note(c, 40)
        ok, _ = wait_all(c, "c", ids_ok, 10)
        check(ok, f"once quiet, every worker's status shows exactly tasks 0, 1 RUNNING; got {show(c, 'c')}")
        for w in c.up():
            code, tasks = cl.get_tasks(w, "c")
            ids = sorted(t["id"]["task"] for t in tasks) if code == 200 and isinstance(tasks, list) else tasks
            check(ids == [0, 1], f"worker {w.n}: GET /tasks ids {ids} (want [0, 1])")
        time.sleep(4)
        sts = statuses(c, "c")
        check(all(s and ids_ok(s) for s in sts.values()) and len({json.dumps(s) for s in sts.values()}) == 1,
              f"4s later the workers still agree on tasks 0, 1 only: {show(c, 'c')}")
        left = sorted(k for k in task_owners(c) if k[0] == "c")
        check(left == [("c", 0), ("c", 1)], f"metrics: only tasks 0, 1 exist (got {left})")
        chk = cl.Checker()
        check(chk.check_all(c), f"all invariants hold after the shrink: {chk.failures}")
    finally:
        c.stop()


def restart_with_options(kc, work):
    """6. KIP-745: 202 + ConnectorStateInfo with the selected instances
    RESTARTING; each restarts once on its own worker; plain restart 204."""
    c = start(kc, work, 3)
    try:
        st = create_seq(c, "c", 3)
        settle_or_note(c, 30)
        owner_of = {t["id"]: t["worker_id"] for t in st["tasks"]}
        conn_owner = st["connector"]["worker_id"]
        epoch0 = {w.n: w.metrics().epoch() for w in c.up()}

        # a) plain restart: 204, the connector alone restarts on its owner.
        a0 = startup_attempts(c)
        code, body = c.rest("POST", "/connectors/c/restart")
        check(code == 204, f"POST /restart (no options) -> {code} {body} (want 204)")
        time.sleep(3)
        a1 = startup_attempts(c)
        diff = {n: (a1[n][0] - a0[n][0], a1[n][1] - a0[n][1]) for n in a1 if a0.get(n) and a1.get(n)}
        want = {w.n: (1 if w.worker_id == conn_owner else 0, 0) for w in c.up()}
        check(diff == want, f"plain restart: (connector, task) startups per worker {diff} (want {want})")

        # b) includeTasks=true&onlyFailed=false: everything RESTARTING, once each, in place.
        a0 = startup_attempts(c)
        code, body = c.rest("POST", "/connectors/c/restart?includeTasks=true&onlyFailed=false")
        check(code == 202, f"POST /restart?includeTasks=true&onlyFailed=false -> {code} (want 202) {json.dumps(body)[:300]}")
        b = cl.normalize_status(body) if isinstance(body, dict) else None
        check(b is not None and b["name"] == "c" and b["connector"]["state"] == "RESTARTING"
              and [t["id"] for t in b["tasks"]] == [0, 1, 2] and all(t["state"] == "RESTARTING" for t in b["tasks"]),
              f"202 body: connector and tasks 0..2 RESTARTING (got {brief(b)})")
        ok, _ = wait_all(c, "c", all_in("RUNNING", 3), 30)
        check(ok, f"all RUNNING again after the restart; got {show(c, 'c')}")
        time.sleep(2)
        a1 = startup_attempts(c)
        diff = {n: (a1[n][0] - a0[n][0], a1[n][1] - a0[n][1]) for n in a1 if a0.get(n) and a1.get(n)}
        want = {w.n: (1 if w.worker_id == conn_owner else 0, sum(1 for o in owner_of.values() if o == w.worker_id))
                for w in c.up()}
        check(diff == want, f"each instance restarted once on its own worker: startups {diff} (want {want})")
        now = next(iter(statuses(c, "c").values()))
        check(now and {t["id"]: t["worker_id"] for t in now["tasks"]} == owner_of
              and now["connector"]["worker_id"] == conn_owner, f"owners unchanged: {brief(now)}")
        epoch1 = {w.n: w.metrics().epoch() for w in c.up()}
        check(epoch0 == epoch1, f"no rebalance for the restart (generations {epoch0} -> {epoch1})")

        # c) onlyFailed=true on a healthy connector selects nothing.
        a0 = startup_attempts(c)
        code, body = c.rest("POST", "/connectors/c/restart?includeTasks=true&onlyFailed=true")
        b = cl.normalize_status(body) if isinstance(body, dict) else None
        check(code == 202 and b is not None and b["connector"]["state"] == "RUNNING"
              and all(t["state"] == "RUNNING" for t in b["tasks"]),
              f"onlyFailed=true on a healthy connector -> {code}, nothing RESTARTING (got {brief(b)})")
        time.sleep(3)
        a1 = startup_attempts(c)
        check(a0 == a1, f"onlyFailed=true restarted nothing (startups {a0} -> {a1})")

        # d) a sink whose tasks FAIL (its directory is missing); onlyFailed picks the tasks only.
        d = os.path.join(work, "later")
        sink = {"connector.class": cl.FILE_SINK, "tasks.max": "2", "topics": cl.SEQ_TOPIC,
                "file": os.path.join(d, "out.txt")}
        code, resp = c.create("s", sink)
        require(code == 201, f"POST /connectors s -> {code} {resp}")
        ok, _ = wait_all(c, "s", lambda s: s["connector"]["state"] == "RUNNING" and len(s["tasks"]) == 2
                         and all(t["state"] == "FAILED" for t in s["tasks"]), 40)
        require(ok, f"s: connector RUNNING, tasks 0, 1 FAILED; got {show(c, 's')}")
        s_st = next(iter(statuses(c, "s").values()))
        os.makedirs(d)
        a0 = startup_attempts(c)
        code, body = c.rest("POST", "/connectors/s/restart?includeTasks=true&onlyFailed=true")
        b = cl.normalize_status(body) if isinstance(body, dict) else None
        check(code == 202 and b is not None and b["connector"]["state"] == "RUNNING"
              and [t["state"] for t in b["tasks"]] == ["RESTARTING", "RESTARTING"],
              f"onlyFailed=true with FAILED tasks -> {code}; body: connector RUNNING, tasks RESTARTING (got {brief(b)})")
        ok, _ = wait_all(c, "s", all_in("RUNNING", 2), 30)
        check(ok, f"s: the failed tasks restarted and RUNNING; got {show(c, 's')}")
        time.sleep(2)
        a1 = startup_attempts(c)
        diff = {n: (a1[n][0] - a0[n][0], a1[n][1] - a0[n][1]) for n in a1 if a0.get(n) and a1.get(n)}
        want = {w.n: (0, sum(1 for t in s_st["tasks"] if t["worker_id"] == w.worker_id)) for w in c.up()}
        check(diff == want, f"s: only the FAILED tasks restarted, each once on its worker: {diff} (want {want})")

        # e) one task restart: 204, that task restarts on its owner.
        a0 = startup_attempts(c)
        code, body = c.rest("POST", "/connectors/c/tasks/1/restart", via=c.up()[0])
        check(code == 204, f"POST /connectors/c/tasks/1/restart -> {code} {body} (want 204)")
        time.sleep(3)
        a1 = startup_attempts(c)
        diff = {n: (a1[n][0] - a0[n][0], a1[n][1] - a0[n][1]) for n in a1 if a0.get(n) and a1.get(n)}
        want = {w.n: (0, 1 if w.worker_id == owner_of[1] else 0) for w in c.up()}
        check(diff == want, f"task 1 restarted once on its owner: {diff} (want {want})")
        code, body = c.rest("POST", "/connectors/nope/restart?includeTasks=true")
        check(code == 404, f"restart of an unknown connector -> {code} (want 404)")
    finally:
        c.stop()


def sink_sent(node, name):
    m = node.metrics()
    return m.counter("sink_task_records_sent_total").get((name, 0)) if m else None


def abandoned_task_cut_off(kc, work):
    """7. SIGSTOP the follower running the sink task for longer than the
    session timeout plus the scheduled delay, until the others have taken the
    task over; SIGCONT. The returning worker's abandoned task is cut off from
    Kafka at once: the new owner's sink keeps delivering without a long
    stall, the task runs on one worker and no input line is lost (KAFKA-15826)."""
    # One partition: a zombie consumer that rejoins takes the whole topic
    # from the new owner, so a late cut-off shows as the new owner's stall.
    c = start(kc, work, 3, topics=(f"{cl.SEQ_TOPIC}:4", f"{cl.PIPE_TOPIC}:1"))
    pl = cl.Pipeline(work)
    c.pipeline = pl
    try:
        code, resp = c.create(pl.src, pl.source_config())
        require(code == 201, f"create {pl.src} -> {code} {resp}")
        # The sink task must run on a follower: re-create under a new name
        # until it does (a new name is a new consumer group, reading from
        # the start, so nothing is lost).
        sink_owner = None
        for attempt in range(4):
            name = "pipe-sink" if attempt == 0 else f"pipe-sink{attempt}"
            code, resp = c.create(name, pl.sink_config(1))
            require(code == 201, f"create {name} -> {code} {resp}")
            ok, sts = wait_all(c, name, all_in("RUNNING", 1), 60)
            require(ok, f"{name} RUNNING; got {show(c, name)}")
            lead = c.leader()
            sink_owner = c.by_id(next(iter(sts.values()))["tasks"][0]["worker_id"])
            if sink_owner is not lead:
                pl.sink = name
                break
            say(f"{name}'s task runs on the leader (worker {sink_owner.n}); trying another name")
            c.rest("DELETE", f"/connectors/{name}")
            c.model.pop(name, None)
            sink_owner = None
        require(sink_owner is not None, "a sink task on a follower")
        pl.append(200)
        delivered = wait_for(lambda: not pl.missing(), 40, step=0.5)
        require(bool(delivered), f"the pipeline delivers before the freeze (missing {len(pl.missing())})")

        # Freeze the owner; a writer appends 5 lines every 0.5 s throughout.
        min_freeze = (cl.SESSION_TIMEOUT_MS + cl.REBALANCE_DELAY_MS) / 1000
        say(f"SIGSTOP worker {sink_owner.n} (runs {pl.sink}-0)")
        sink_owner.freeze()
        t_freeze = time.monotonic()
        new_owner = None
        samples = []  # (time, the new owner's sent_total)
        t_cont = None
        while time.monotonic() < t_freeze + 60:
            pl.append(5)
            now = time.monotonic()
            if new_owner is None:
                for w in c.up():
                    m = w.metrics()
                    if m and m.task_states().get((pl.sink, 0)) == "RUNNING":
                        new_owner = w
                        say(f"worker {w.n} runs {pl.sink}-0 now ({now - t_freeze:.1f}s after the freeze)")
            else:
                samples.append((now, sink_sent(new_owner, pl.sink)))
                # Thaw once the new owner delivers (or 25 s after the take-over), past the minimum.
                if (now - t_freeze >= min_freeze and len(samples) > 1
                        and ((samples[-1][1] or 0) > 0 or now - samples[0][0] > 25)):
                    break
            time.sleep(0.5)
        require(new_owner is not None, f"another worker took {pl.sink}-0 over within 60s of the freeze "
                                       f"(placement {task_owners(c)})")
        say(f"new owner delivered {samples[-1][1] if samples else None} records before the thaw "
            f"({time.monotonic() - t_freeze:.1f}s frozen)")
        say(f"SIGCONT worker {sink_owner.n}")
        sink_owner.thaw()
        t_cont = time.monotonic()
        # After the thaw the returning worker rejoins, and a later balance
        # round may legitimately give it the task back: what is checked is
        # that its abandoned copy goes away first, and that delivery never
        # stalls wherever the task runs.
        after = []  # (seconds after SIGCONT, {worker: sent_total})
        zombie = []  # (seconds after SIGCONT, task state, offset commits) on the returning worker
        while time.monotonic() < t_cont + 40:
            pl.append(5)
            after.append((time.monotonic() - t_cont, {w.n: sink_sent(w, pl.sink) for w in c.up()}))
            m = sink_owner.metrics()
            if m is not None:
                zombie.append((time.monotonic() - t_cont, m.task_states().get((pl.sink, 0)),
                               m.counter("task_offset_commit_success_total").get((pl.sink, 0))))
            time.sleep(0.5)
        answered = [t for t, _, _ in zombie]
        gone = next((t for t, state, _ in zombie if state is None), None)
        # The abandoned copy: the samples before it first disappeared.
        commits = [n for t, state, n in zombie if n is not None and (gone is None or t < gone)]
        say(f"returning worker {sink_owner.n}: first answered {answered[0] if answered else None}s after SIGCONT, "
            f"abandoned {pl.sink}-0 gone at {gone}s, offset commits {commits[:1]}->{commits[-1:]}")
        back = [t for t, state, _ in zombie if state is not None and gone is not None and t > gone]
        if back:
            say(f"a later round gave {pl.sink}-0 back to worker {sink_owner.n} ({back[0]:.1f}s after SIGCONT)")
        bound = cl.GRACEFUL_MS / 1000 + 3
        check(gone is not None and gone <= bound,
              f"the returning worker dropped its abandoned {pl.sink}-0 within {bound:.0f}s of SIGCONT "
              f"(gone at {gone}s)")
        check(len(set(commits)) <= 1, f"the abandoned {pl.sink}-0 commits no offsets after SIGCONT "
                                      f"(its commit counter went {commits[:1]} -> {commits[-1:]})")
        # Stalls: the time between progress of any worker's counter after SIGCONT.
        gaps, last_t, prev = [], 0.0, dict(after[0][1]) if after else {}
        for t, sent in after:
            if any(v is not None and prev.get(n) is not None and v > prev[n] for n, v in sent.items()):
                gaps.append(t - last_t)
                last_t = t
            prev.update({n: v for n, v in sent.items() if v is not None})
        if after:
            gaps.append(after[-1][0] - last_t)
        max_gap = max(gaps) if gaps else None
        say(f"sink progress after SIGCONT: stalls > 2s: {[round(g, 1) for g in gaps if g > 2]}")
        # One consumer-group rebalance on the mock takes consumer session
        # timeout - 1 s (5 s) plus the sync: a zombie consumer that races its
        # cut-off may cost one, a legitimate move back another. More
        # (> 12 s) means the abandoned task's consumer took part in the
        # group after the thaw.
        check(max_gap is not None and max_gap <= 12,
              f"after SIGCONT the sink keeps delivering: longest stall {max_gap and round(max_gap, 1)}s over 40s "
              f"(want <= 12s)")
        settle_or_note(c, 30)
        owners = {w.n: (w.metrics() or cl.Metrics("")).task_states().get((pl.sink, 0)) for w in c.up()}
        running_on = [n for n, st in owners.items() if st]
        check(len(running_on) == 1, f"{pl.sink}-0 runs on exactly one worker after the thaw (task_status per "
                                    f"worker {owners})")
        owner = next((w for w in c.up() if len(running_on) == 1 and w.n == running_on[0]), None)
        st = statuses(c, pl.sink)
        check(owner is not None and all(s and s["tasks"] and s["tasks"][0]["worker_id"] == owner.worker_id
                                        and s["tasks"][0]["state"] == "RUNNING" for s in st.values()),
              f"every worker's status names the worker that runs it: {show(c, pl.sink)}")
        check(all(s and s["connector"]["state"] == "RUNNING" and c.by_id(s["connector"]["worker_id"]) in c.up()
                  for s in st.values()), f"every worker's status shows the sink connector RUNNING: {show(c, pl.sink)}")
        delivered = wait_for(lambda: not pl.missing(), 40, step=0.5)
        check(bool(delivered), f"no input line lost: {len(pl.missing())} of {pl.written} missing "
                               f"(first {pl.missing()[:5]})")
        chk = cl.Checker()
        check(chk.check_all(c), f"all invariants hold once quiet after the thaw: {chk.failures}")
        log = open(sink_owner.out_path, errors="replace").read()
        say("returning worker's log mentions: " + ", ".join(
            k for k in ("abandon", "did not stop", "cut off", "fenced", "commit") if k in log.lower()))
    finally:
        c.stop()


# ------------------------------------------------------------------ drain (issue 10)

def rebalances_since(node, generation):
    code, body = cl.http("GET", node.url + "/rebalances?limit=20", timeout=5)
    return [r for r in (body if code == 200 else []) if r["generation"] > generation]


def watch_owners(c, stop_when, timeout_s, samples):
    """Samples task_owners() every 0.1 s until stop_when() or timeout;
    appends (t, owners) to `samples`; returns whether stop_when() held."""
    t_end = time.monotonic() + timeout_s
    while time.monotonic() < t_end:
        samples.append((time.monotonic(), task_owners(c)))
        if stop_when():
            return True
        time.sleep(0.1)
    return False


def hand_over_report(samples, leaving_n, name):
    """Per moved task: seconds from its last sample on the leaving worker to
    its first sample RUNNING elsewhere (printed, not asserted: timings are
    the benchmark's business)."""
    last_on, first_after = {}, {}
    for t, owners in samples:
        for key, holders in owners.items():
            if key[0] != name:
                continue
            for n, state in holders:
                if n == leaving_n:
                    last_on[key] = t
                elif state == "RUNNING" and key in last_on and t > last_on[key]:
                    first_after.setdefault(key, t)
    return {k[1]: round(first_after[k] - last_on[k], 2) if k in first_after else None for k in sorted(last_on)}


def drain_one(c, node, how, name):
    """Drains `node` (POST /admin/drain, or SIGTERM: shutdown.drain.enable is
    on by default)
    and checks: it exits 0, no task is in two workers' metrics at any
    sample, its tasks end RUNNING on the others, the others revoke nothing
    and get no scheduled delay, and each of them starts only the tasks it
    received."""
    gen = max(w.metrics().epoch() for w in c.up())
    before = task_owners(c)
    moving = sorted(k for k, hs in before.items() if k[0] == name and any(n == node.n for n, _ in hs))
    require(moving, f"w{node.n} runs tasks of {name} before the drain: {before}")
    attempts_before = startup_attempts(c)
    samples = []
    if how == "rest":
        code, body = cl.http("POST", node.url + "/admin/drain", None, timeout=10)
        check(code == 202 and body.get("draining") is True, f"POST /admin/drain -> {code} {body} (want 202, draining)")
    else:
        node.signal(signal.SIGTERM)
    exited = watch_owners(c, lambda: node.proc.poll() is not None, 60, samples)
    check(exited and node.proc.returncode == 0, f"w{node.n} exits 0 after its drain (exit {node.proc.poll()})")
    # The herder's lifecycle names the drain, and the drain's own rebalance
    # steps do not move it out of Draining before the stop.
    life = [l.split("worker lifecycle: ", 1)[1] for l in node.log_tail(400000).splitlines() if "worker lifecycle: from" in l]
    drained = [l for l in life if " to Draining " in l]
    after = life[life.index(drained[0]) + 1:] if drained else []
    check(drained and [l.split(" (")[0] for l in after] == ["from Draining to Leaving", "from Leaving to Stopped"],
          f"w{node.n}'s lifecycle: Draining, then Leaving and Stopped only (lines: {life[-4:]})")
    node.state = "down"
    def moved(st):
        return all_in("RUNNING", 6)(st) and all(t["worker_id"] != node.worker_id for t in st["tasks"])
    on_others = watch_owners(c, lambda: all(s is not None and moved(s) for s in statuses(c, name).values()), 40,
                             samples)
    watch_owners(c, lambda: True, 1, samples)
    check(on_others, f"every task RUNNING on the others after w{node.n} drained, on every worker: {show(c, name)}")
    doubles = [(round(t, 1), k, hs) for t, owners in samples for k, hs in owners.items() if len(hs) > 1]
    check(not doubles, f"no task in two workers' metrics in {len(samples)} samples (first doubles: {doubles[:3]})")
    for w in c.up():
        rbs = rebalances_since(w, gen)
        revoked = [t for r in rbs for t in r["revoked"]["tasks"]]
        delays = [r["delay_ms"] for r in rbs]
        check(not revoked and all(d == 0 for d in delays),
              f"w{w.n} revoked nothing and got no scheduled delay during the drain "
              f"(revoked {revoked}, delays {delays})")
        got = [t for r in rbs for t in r["assigned"]["tasks"]]
        started = startup_attempts(c)[w.n][1] - attempts_before[w.n][1]
        check(started == len(got), f"w{w.n} started only the tasks it received ({started} starts, received {got})")
    # Which moved tasks a new owner held back until the drainer's stop was
    # read (the hand-over mark); a drainer faster than the new owner's status
    # read leaves nothing to wait for, so this is reported, not required.
    waited = set()
    for w in c.up():
        with open(w.out_path, errors="replace") as f:
            for line in f:
                m = re.search(r"task (\S+)-(\d+): waiting for (\S+) to hand it over", line)
                if m and m.group(3) == node.worker_id:
                    waited.add((m.group(1), int(m.group(2))))
    say(f"new owners waited for w{node.n}'s stop of {sorted(waited)} (moved {moving})")
    say(f"hand-over of w{node.n}'s tasks (s from last seen there to RUNNING elsewhere, 0.1 s samples): "
        f"{hand_over_report(samples, node.n, name)}")


def drain_hands_over(kc, work):
    """Issue 10, zero-downtime drain: POST /admin/drain on a follower, then
    a plain SIGTERM on the leader (issue 26: the worker properties leave
    shutdown.drain.* at their defaults, so SIGTERM drains): each hands its
    tasks over with no scheduled delay and no task on two workers, and
    exits 0."""
    c = start(kc, work, 3, max_workers=3)
    try:
        create_seq(c, "d", 6)
        lead = c.leader()
        require(lead is not None, "a leader is known")
        owners = task_owners(c)
        follower = next((w for w in c.followers() if any(n == w.n for k, hs in owners.items() for n, _ in hs)), None)
        require(follower is not None, f"a follower runs tasks: {owners}")
        drain_one(c, follower, "rest", "d")
        settle_or_note(c, 40)
        drain_one(c, c.leader() or lead, "sigterm", "d")
        settle_or_note(c, 40)
        chk = cl.Checker()
        check(chk.check_all(c), f"all invariants hold on the last worker: {chk.failures}")
    finally:
        c.stop()


SCENARIOS = {
    "pause_reaches_all_workers": pause_reaches_all_workers,
    "stop_shows_stopped": stop_shows_stopped,
    "resume_after_stop_via_follower": resume_after_stop_via_follower,
    "pause_rebalance_resume": pause_rebalance_resume,
    "shrink_tasks_no_stale_status": shrink_tasks_no_stale_status,
    "restart_with_options": restart_with_options,
    "abandoned_task_cut_off": abandoned_task_cut_off,
    "drain_hands_over": drain_hands_over,
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in SCENARIOS:
        print(f"usage: {sys.argv[0]} KCONNECTD {{{'|'.join(SCENARIOS)}}}")
        return 2
    kc = os.path.abspath(sys.argv[1])
    name = sys.argv[2]
    work = tempfile.mkdtemp(prefix=f"kc-cluster-{name}-")
    say(f"scenario {name}; work directory {work}")
    try:
        SCENARIOS[name](kc, work)
    except (Abort, cl.Fatal) as e:
        if isinstance(e, cl.Fatal):
            failures.append(str(e))
        say(f"aborted: {e}")
    except Exception:  # noqa: BLE001 - a harness bug is a failure, with its trace
        traceback.print_exc()
        failures.append("harness exception")
    return finish(work, failures)


if __name__ == "__main__":
    sys.exit(main())
