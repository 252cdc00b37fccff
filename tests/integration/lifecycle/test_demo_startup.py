#!/usr/bin/env python3
"""The demo's worker configs start cleanly (issue 27 item 3).

usage: test_demo_startup.py KCONNECTD DEMO_DIR

Starts `kconnectd mock-broker` and two workers from DEMO_DIR's
worker1.properties and worker2.properties unchanged, with the CONNECT_*
overrides scripts/demo passes (broker address, a free REST port), waits
until both are healthy and the first worker went through the rebalance the
second one's join causes, and checks each worker's output:
  - no line at warning level or above (the demo's session.timeout.ms once
    drew a warning on every start, and every normal rebalance logged
    REBALANCE_IN_PROGRESS twice as a warning);
  - the rebalance is one info line, "rebalance started: REBALANCE_IN_PROGRESS
    from Heartbeat", and no "Heartbeat: REBALANCE_IN_PROGRESS" line;
  - every line, the first included, has the worker's text log format (the
    first line, "worker property ... set from the environment", used to come
    before the format was set).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kc_harness as h  # noqa: E402

# metrics/log_context.cpp, LogFormat::Text: "%Y-%m-%d %H:%M:%S.%e %l [%W gen %G] %v".
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (trace|debug|info|warning|error|critical) \[")


class DemoWorker(h.Worker):
    """A `kconnectd run` of a demo properties file as scripts/demo starts it."""

    def __init__(self, n, kc, work, bootstrap, props_path):  # noqa: super().__init__ writes its own properties
        self.n = n
        self.port = h.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.worker_id = f"127.0.0.1:{self.port}"
        self.out_path = os.path.join(work, f"worker{n}.out")
        self.log_file = None
        self.props_path = props_path
        env = dict(os.environ)
        env["CONNECT_BOOTSTRAP_SERVERS"] = bootstrap
        env["CONNECT_LISTENERS"] = self.url
        env["CONNECT_REST_ADVERTISED_PORT"] = str(self.port)
        self.out = open(self.out_path, "ab")
        self.proc = subprocess.Popen([kc, "run", props_path], stdout=self.out, stderr=subprocess.STDOUT, env=env)


def scenario(kc, work, cluster):
    demo = os.path.abspath(sys.argv[2])
    cluster.broker, bootstrap = h.start_broker(kc, work, [])
    w1 = DemoWorker(1, kc, work, bootstrap, os.path.join(demo, "worker1.properties"))
    cluster.workers.append(w1)
    h.wait_healthy([w1])
    w2 = DemoWorker(2, kc, work, bootstrap, os.path.join(demo, "worker2.properties"))
    cluster.workers.append(w2)
    h.wait_healthy([w2])
    settled = h.wait_for(lambda: w1.rebalances_started() >= 1 and w1.applied_generation() >= 2
                         and w2.applied_generation() == w1.applied_generation(), 60)
    h.check(settled, f"both workers applied one generation after the join (w1 gen {w1.applied_generation()}, "
                     f"w2 gen {w2.applied_generation()}, w1 rebalances started {w1.rebalances_started()})")
    for w in (w1, w2):
        lines = [ln for ln in w.log().splitlines() if ln.strip()]
        h.check(bool(lines), f"worker {w.n} logged something")
        if lines:
            h.check("set from the environment" in lines[0] and LINE.match(lines[0]) is not None,
                    f"worker {w.n}: the first line is the environment note in the worker's format: {lines[0]!r}")
        # A line that starts with white space continues a multi-line record
        # (the config dump at startup lists one key a line, tab-indented).
        unformatted = [ln for ln in lines if not LINE.match(ln) and not ln[:1].isspace()]
        h.check(not unformatted, f"worker {w.n}: every line in the worker's log format (not: {unformatted[:3]})")
        loud = [ln for ln in lines if LINE.match(ln) and LINE.match(ln).group(1) not in ("trace", "debug", "info")]
        h.check(not loud, f"worker {w.n}: no line at warning level or above (got: {loud[:3]})")
        hb = [ln for ln in lines if "Heartbeat: REBALANCE_IN_PROGRESS" in ln]
        h.check(not hb, f"worker {w.n}: no 'Heartbeat: REBALANCE_IN_PROGRESS' error line (got: {hb[:2]})")
    h.check(any(re.search(r" info \[.*rebalance started: REBALANCE_IN_PROGRESS from Heartbeat", ln)
                for ln in w1.log().splitlines()),
            "worker 1 logged the rebalance once, at info ('rebalance started: REBALANCE_IN_PROGRESS from Heartbeat')")


if __name__ == "__main__":
    sys.exit(h.run_main("kc-demo-config-", scenario))
