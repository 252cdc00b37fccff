#!/usr/bin/env python3
"""Randomized cluster conformance (issue 9): random operations through random
workers, worker faults and broker faults on 3-4 `kconnectd run` workers;
after each step the cluster must settle and every invariant of
cluster_lib.Checker must hold.

Usage: test_random.py KCONNECTD [SEED...]
Environment:
  KC_CLUSTER_SEED    run this seed (overrides the arguments)
  KC_CLUSTER_STEPS   steps per seed (default 8)
  KC_CLUSTER_MINIMIZE_S  seconds to spend shrinking a failing sequence
                     (default 120; 0 = do not shrink)
  KC_CLUSTER_SKIP    comma-separated op kinds not to generate (e.g. freeze_long)
  KC_CLUSTER_REPLAY  a JSON list of ops (as printed on failure) to replay
                     instead of generating one
  KC_KEEP=1          keep the work directories
On failure it prints the seed, the failing step and the shortest failing
op sequence it found (delta debugging: the sequence is replayed on a fresh
cluster with ops removed).
"""
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_lib as cl  # noqa: E402
from cluster_lib import say  # noqa: E402

GROUP_ERRORS = {
    "JoinGroup": ["COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS",
                  "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "_TRANSPORT"],
    "SyncGroup": ["REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "NOT_COORDINATOR",
                  "COORDINATOR_NOT_AVAILABLE", "_TRANSPORT"],
    "Heartbeat": ["REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "NOT_COORDINATOR",
                  "COORDINATOR_NOT_AVAILABLE", "_TRANSPORT"],
}
RESTARTS = {  # op -> (path suffix, expected status)
    "restart": ("/restart", 204),
    "restart_tasks": ("/restart?includeTasks=true", 202),
    "restart_failed": ("/restart?onlyFailed=true", 202),
    "restart_both": ("/restart?includeTasks=true&onlyFailed=true", 202),
    "restart_task": (None, 204),
}
WEIGHTS = {
    "create": 3, "reconfig": 3, "pause": 3, "resume": 3, "stop": 2, "delete": 2,
    "restart": 1, "restart_tasks": 1, "restart_failed": 1, "restart_both": 1, "restart_task": 1,
    "join": 1, "sigterm": 1, "kill_inside": 1, "kill_outside": 1, "freeze_short": 1, "freeze_long": 1,
    "group_error": 3, "coord_move": 1, "broker_bounce": 1,
}
NAMES = ["c0", "c1", "c2", "c3"]


def gen_ops(seed, steps):
    """A reproducible op list: each op has its kind and random picks in
    [0, 1) that choose its target when it runs, so that any subsequence can
    be replayed."""
    rng = random.Random(seed)
    skip = set(filter(None, os.environ.get("KC_CLUSTER_SKIP", "").split(",")))
    kinds = [k for k in WEIGHTS if k not in skip]
    ops = []
    for _ in range(steps):
        kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        op = {"op": kind, "a": round(rng.random(), 3), "b": round(rng.random(), 3), "via": round(rng.random(), 3)}
        if kind == "group_error":
            api = rng.choice(sorted(GROUP_ERRORS))
            op["api"] = api
            op["codes"] = [rng.choice(GROUP_ERRORS[api]) for _ in range(rng.randint(1, 3))]
        ops.append(op)
    return ops


def pick(items, x):
    return items[int(x * len(items)) % len(items)] if items else None


class Run:
    """One run of an op list on a fresh cluster."""

    def __init__(self, kc, ops, label, keep=False):
        self.kc = kc
        self.ops = ops
        self.label = label
        self.work = tempfile.mkdtemp(prefix=f"kc-cluster-{label}-")
        self.keep = keep
        self.checker = cl.Checker()
        self.failed_step = None
        self.c = None

    def expect(self, what, code, want):
        return self.checker.ok("rest_answer", code in want, f"{what} -> {code} (want {' or '.join(map(str, want))})")

    def settle_and_check(self, what, timeout_s):
        ok, probs, took = cl.settle(self.c, timeout_s)
        self.checker.ok("settles", ok, f"after {what}: not quiet/converged within {timeout_s}s: {probs[:8]}")
        say(f"  settled in {took:.1f}s" if ok else f"  NOT settled in {took:.1f}s")
        self.checker.check_all(self.c)

    def setup(self):
        self.c = cl.Cluster(self.kc, self.work, n=3, max_workers=4)
        self.c.wait_healthy()
        pl = cl.Pipeline(self.work)
        self.c.pipeline = pl
        for name, cfg in ((pl.src, pl.source_config()), (pl.sink, pl.sink_config(1)), ("c0", cl.seq_config(2))):
            code, resp = self.c.create(name, cfg)
            if code != 201:
                raise cl.Fatal(f"setup: create {name} -> {code} {resp}")
        pl.append(20)
        self.settle_and_check("setup", 90)

    def run(self):
        """Runs setup and the ops; stops at the first step with a failed
        invariant. Returns True if every check passed."""
        try:
            self.setup()
            if self.checker.failures:
                self.failed_step = -1
                return False
            for i, op in enumerate(self.ops):
                say(f"step {i}: {json.dumps(op)}")
                self.apply(op)
                if self.checker.failures:
                    self.failed_step = i
                    return False
            return True
        finally:
            if self.c:
                self.c.stop()
            if self.checker.failures or self.keep:
                print(f"logs kept in {self.work}")
            else:
                shutil.rmtree(self.work, ignore_errors=True)

    # --------------------------------------------------------------- ops

    def apply(self, op):
        c = self.c
        kind = op["op"]
        up = c.up()
        via = pick(up, op["via"])
        model = c.model
        pl = c.pipeline
        seqs = sorted(n for n in model if n in NAMES)
        timeout = 45
        if kind == "create":
            name = pick([n for n in NAMES if n not in model], op["a"])
            if name is None:
                return self.skip(op)
            cfg = cl.seq_config(1 + int(op["b"] * 4))
            code, _ = c.create(name, cfg, via=via)
            self.expect(f"POST /connectors {name} via w{via.n}", code, [201])
        elif kind == "reconfig":
            running = [n for n in sorted(model) if model[n].target == "RUNNING" and n != pl.src]
            name = pick(running, op["a"])
            if name is None:
                return self.skip(op)
            if name == pl.sink:
                cfg = pl.sink_config(1 + int(op["b"] * 3))
            else:
                cfg = cl.seq_config(1 + int(op["b"] * 4), throughput=20 + int(op["a"] * 10))
            code, _ = c.rest("PUT", f"/connectors/{name}/config", cfg, via=via)
            if self.expect(f"PUT /connectors/{name}/config tasks.max={cfg['tasks.max']} via w{via.n}", code, [200]):
                model[name].config = cfg
        elif kind in ("pause", "resume", "stop"):
            name = pick(sorted(model), op["a"])
            if name is None:
                return self.skip(op)
            code, _ = c.rest("PUT", f"/connectors/{name}/{kind}", via=via)
            want = 204 if kind == "stop" else 202
            if self.expect(f"PUT /connectors/{name}/{kind} via w{via.n}", code, [want]):
                model[name].target = {"pause": "PAUSED", "resume": "RUNNING", "stop": "STOPPED"}[kind]
        elif kind == "delete":
            name = pick(seqs, op["a"])
            if name is None:
                return self.skip(op)
            code, _ = c.rest("DELETE", f"/connectors/{name}", via=via)
            if self.expect(f"DELETE /connectors/{name} via w{via.n}", code, [204]):
                del model[name]
        elif kind in RESTARTS:
            # A STOPPED connector has nothing to restart; Connect's answer there is not part of issue 9.
            name = pick([n for n in sorted(model) if model[n].target != "STOPPED"], op["a"])
            if name is None:
                return self.skip(op)
            suffix, want = RESTARTS[kind]
            if suffix is None:
                suffix = f"/tasks/{int(op['b'] * model[name].expected_tasks())}/restart"
            code, body = c.rest("POST", f"/connectors/{name}{suffix}", via=via)
            self.expect(f"POST /connectors/{name}{suffix} via w{via.n}", code, [want])
            if want == 202 and code == 202:
                st = cl.normalize_status(body) if isinstance(body, dict) else None
                self.checker.ok("rest_answer", st is not None and st.get("name") == name,
                                f"202 body of {suffix} is a ConnectorStateInfo of {name}: {json.dumps(body)[:200]}")
        elif kind == "join":
            node = pick([w for w in c.nodes if w.state == "down"], op["a"])
            if node is None:
                return self.skip(op)
            say(f"  start worker {node.n}")
            node.start()
            timeout = 60
        elif kind in ("sigterm", "kill_inside", "kill_outside"):
            if len(up) < 3:
                return self.skip(op)
            node = pick(up, op["a"])
            if kind == "sigterm":
                say(f"  SIGTERM worker {node.n}")
                rc = node.terminate()
                self.checker.ok("rest_answer", rc == 0, f"worker {node.n} exits 0 on SIGTERM (got {rc})")
            else:
                say(f"  SIGKILL worker {node.n}")
                node.kill()
                if kind == "kill_inside":
                    back = 0.5 + op["b"] * cl.REBALANCE_DELAY_MS / 2000
                    time.sleep(back)
                    say(f"  worker {node.n} back after {back:.1f}s (inside the delay)")
                    node.start()
                else:
                    self.settle_and_check(f"SIGKILL of worker {node.n}", 60)
                    say(f"  worker {node.n} back (outside the delay)")
                    node.start()
            timeout = 60
        elif kind in ("freeze_short", "freeze_long"):
            if len(up) < 2:
                return self.skip(op)
            node = pick(up, op["a"])
            say(f"  SIGSTOP worker {node.n}")
            node.freeze()
            if kind == "freeze_short":
                time.sleep(1 + op["b"] * (cl.SESSION_TIMEOUT_MS / 1000 - 3))
            else:
                # The others take its work over after the delay; check them while it is frozen.
                self.settle_and_check(f"SIGSTOP of worker {node.n}", 60)
            say(f"  SIGCONT worker {node.n}")
            node.thaw()
            timeout = 60
        elif kind == "group_error":
            before = self.epochs()
            codes = ",".join(op["codes"])
            r = c.broker.control(f"errors {op['api']} {codes}")
            self.checker.ok("rest_answer", r.startswith("ok"), f"control 'errors {op['api']} {codes}' -> {r}")
            if op["api"] != "Heartbeat":
                # Make a worker rejoin, so that the group meets the pushed errors.
                c.broker.control("errors Heartbeat REBALANCE_IN_PROGRESS")
            # Settle only once the errors made the group rebalance.
            seen = cl.wait_for(lambda: self.rebalance_seen(before), 12, step=0.3)
            say(f"  rebalance {'seen' if seen else 'NOT seen within 12s'} after the pushed errors")
            timeout = 60
        elif kind == "coord_move":
            c.coordinator = c.coordinator % c.brokers + 1
            r = c.broker.control(f"coordinator {cl.GROUP} {c.coordinator}")
            self.checker.ok("rest_answer", r.startswith("ok"), f"control coordinator move -> {r}")
            time.sleep(2)
            timeout = 60
        elif kind == "broker_bounce":
            b = 1 + int(op["a"] * c.brokers)
            secs = 1 + op["b"] * 3
            r1 = c.broker.control(f"down {b}")
            time.sleep(secs)
            r2 = c.broker.control(f"up {b}")
            say(f"  broker {b} down for {secs:.1f}s ({r1}; {r2})")
            self.checker.ok("rest_answer", r1.startswith("ok") and r2.startswith("ok"), f"broker down/up -> {r1}; {r2}")
            timeout = 60
        else:
            raise ValueError(kind)
        if pl:
            pl.append(20)
        # A config write reaches the workers through the config topic and
        # may start a rebalance a moment later: do not call the old state quiet.
        time.sleep(1.0)
        self.settle_and_check(kind, timeout)
        if kind == "group_error":
            for api in GROUP_ERRORS:
                c.broker.control(f"clear {api}")

    def epochs(self):
        """{worker n: generation} of the up workers (metrics)."""
        out = {}
        for w in self.c.up():
            m = w.metrics()
            out[w.n] = m.epoch() if m else None
        return out

    def rebalance_seen(self, before):
        """True once a worker is rebalancing or has a newer generation than in `before`."""
        for w in self.c.up():
            m = w.metrics()
            if m and (m.rebalancing() or (before.get(w.n) is not None and m.epoch() > before[w.n])):
                return True
        return False

    def skip(self, op):
        say(f"  (no target for {op['op']}; skipped)")
        if self.c.pipeline:
            self.c.pipeline.append(20)
        self.settle_and_check("skip", 30)


def minimize(kc, ops, budget_s, seed):
    """Delta debugging: removes chunks of `ops` while the rest still fails,
    within `budget_s`. Returns the shortest failing list found."""
    deadline = time.monotonic() + budget_s
    tries = 0

    def fails(sub):
        nonlocal tries
        tries += 1
        say(f"minimize try {tries}: {len(sub)} ops")
        r = Run(kc, sub, f"min{seed}-{tries}")
        return not r.run()

    n = 2
    while len(ops) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(ops) // n)
        reduced = False
        for start in range(0, len(ops), chunk):
            if time.monotonic() >= deadline:
                break
            sub = ops[:start] + ops[start + chunk:]
            if sub and fails(sub):
                ops = sub
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(ops), n * 2)
    return ops


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    kc = os.path.abspath(sys.argv[1])
    steps = int(os.environ.get("KC_CLUSTER_STEPS", "8"))
    budget = float(os.environ.get("KC_CLUSTER_MINIMIZE_S", "120"))
    keep = os.environ.get("KC_KEEP") == "1"
    if os.environ.get("KC_CLUSTER_SEED"):
        seeds = [int(os.environ["KC_CLUSTER_SEED"])]
    else:
        seeds = [int(s) for s in sys.argv[2:]] or [1]
    totals = {n: 0 for n in cl.Checker.NAMES}
    failed = []
    for seed in seeds:
        replay = os.environ.get("KC_CLUSTER_REPLAY")
        if replay:
            ops = json.loads(open(replay).read() if os.path.exists(replay) else replay)
        else:
            ops = gen_ops(seed, steps)
        say(f"seed {seed}: {len(ops)} steps")
        r = Run(kc, ops, f"seed{seed}", keep=keep)
        try:
            passed = r.run()
        except cl.Fatal as e:
            say(f"harness: {e}")
            passed = False
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            passed = False
        for n, v in r.checker.counts.items():
            totals[n] += v
        print(r.checker.report())
        if passed:
            say(f"seed {seed}: all {len(ops)} steps passed")
            continue
        step = r.failed_step
        failed.append(seed)
        print(f"SEED {seed} FAILED at step {step}: " + "; ".join(r.checker.failures[:5]))
        prefix = ops[:step + 1] if step is not None and step >= 0 else []
        if budget > 0 and prefix:
            say(f"shrinking the failing sequence of {len(prefix)} ops (budget {budget:.0f}s)")
            shortest = minimize(kc, prefix, budget, seed)
        else:
            shortest = prefix
        print(f"SEED {seed}: shortest failing sequence found ({len(shortest)} ops; replay with "
              f"KC_CLUSTER_REPLAY='<json>'):")
        print(json.dumps(shortest))
    print("TOTAL " + " ".join(f"{n}={v}" for n, v in totals.items()) + f" sum={sum(totals.values())}")
    if failed:
        print(f"failed seeds: {failed}")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
