"""What bench/cluster watches while it disturbs a cluster: the records the
SequenceSource tasks write (read with kcat), the workers' task status
(GET /metrics, polled), their rebalance history (GET /rebalances), and the
wait until the cluster has settled after an event.

Each watcher runs on its own Python thread; the event loop in `run` reads
their snapshots. Python 3 standard library only.
"""
import json
import os
import re
import subprocess
import threading
import time

from cluster_lib import http  # tests/cluster (on sys.path, put there by `run`)


def task_key(connector, task):
    return f"{connector}-{task}"


_STRUCT = re.compile(r"^Struct\{task=(.*),seq=(-?\d+)\}$")


def sequence_of(value):
    """(task, seq text) of a SequenceSource value as StringConverter writes
    it: "Struct{task=c-0,seq=5}", or "c-0:5" from older workers."""
    m = _STRUCT.match(value)
    if m:
        return m.group(1), m.group(2)
    task, _, seq = value.rpartition(":")
    return task, seq


class RecordReader:
    """`kcat -C` on the sequence topic from the beginning, unbuffered, one
    line per record: partition, offset, CreateTime (ms, set by the producer
    when the task hands the record over) and the value "connector-task:seq".
    Keeps, per task, [(timestamp s, seq)] in offset order, and the raw lines
    in `raw_path`. kcat exits when it loses its broker connection for a
    moment (ALL_BROKERS_DOWN is fatal to it; seen under load in the
    full-size blog test), so start() may be called again: the new kcat reads
    from the beginning and records already seen (by partition and offset)
    are skipped."""

    def __init__(self, kcat, bootstrap, topic, raw_path, kafka_props=()):
        self.args = [kcat, "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-u", "-q",
                     "-f", "%p %o %T %s\\n"]
        for p in kafka_props:
            self.args += ["-X", p]
        self.raw_path = raw_path
        self.lock = threading.Lock()
        self.tasks = {}
        self.last = {}
        self.count = 0
        self.next_offset = {}  # partition -> next offset not yet seen
        self.starts = 0
        self.proc = None
        self.thread = None

    def start(self):
        self.starts += 1
        self.err = open(self.raw_path + ".stderr", "ab")
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.raw_path, "a") as raw:
            for line in self.proc.stdout:
                raw.write(line)
                fields = line.strip().split(" ", 3)
                if len(fields) != 4:
                    continue
                part, off, ts, value = fields
                task, seq = sequence_of(value)
                try:
                    p, o, t, s = int(part), int(off), int(ts) / 1000.0, int(seq)
                except ValueError:
                    continue
                if o < self.next_offset.get(p, 0):
                    continue  # read before this kcat was (re)started
                self.next_offset[p] = o + 1
                with self.lock:
                    self.tasks.setdefault(task, []).append((t, s))
                    self.last[task] = max(self.last.get(task, 0.0), t)
                    self.count += 1

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def last_seen(self):
        with self.lock:
            return dict(self.last)

    def snapshot(self):
        with self.lock:
            return {k: list(v) for k, v in self.tasks.items()}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.thread is not None:
            self.thread.join(timeout=5)
        if self.proc is not None:
            self.err.close()


class StatusPoller:
    """Polls every up worker's GET /metrics each `interval` s and keeps
    samples (t, {task: number of workers reporting it RUNNING},
    {worker n: epoch}, {worker n: rebalancing}). A worker that is alive but
    does not answer keeps its previous look; a dead one counts as running
    nothing."""

    def __init__(self, cluster, interval):
        self.cluster = cluster
        self.interval = interval
        self.lock = threading.Lock()
        self.samples = []
        self.looks = {}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def _look(self, w):
        m = w.metrics()
        if m is None:
            return None
        running = [task_key(c, t) for (c, t), st in m.task_states().items() if st == "RUNNING"]
        return running, m.epoch(), m.rebalancing()

    def _run(self):
        while not self.stopping.is_set():
            t_start = time.time()
            for w in self.cluster.nodes:
                if w.state == "up" and w.alive():
                    look = self._look(w)
                    if look is not None:
                        self.looks[w.n] = look
                else:
                    self.looks.pop(w.n, None)
            t = (t_start + time.time()) / 2
            running, epochs, rebalancing = {}, {}, {}
            for n, (tasks, epoch, reb) in self.looks.items():
                for k in tasks:
                    running[k] = running.get(k, 0) + 1
                epochs[n] = epoch
                rebalancing[n] = reb
            with self.lock:
                self.samples.append((t, running, epochs, rebalancing))
            self.stopping.wait(max(0.0, self.interval - (time.time() - t_start)))

    def latest(self):
        with self.lock:
            return self.samples[-1] if self.samples else None

    def running_samples(self):
        with self.lock:
            return [(t, r) for t, r, _, _ in self.samples]

    def max_epoch(self):
        s = self.latest()
        return max(s[2].values(), default=-1) if s else -1


def rebalances(w, limit=64):
    code, body = http("GET", w.url + f"/rebalances?limit={limit}", timeout=3)
    return body if code == 200 and isinstance(body, list) else []


def delay_pending(cluster, now):
    """True while a worker's latest assignment carries a scheduled-rebalance
    delay (KIP-415) that has not expired yet: the follow-up round may still
    move tasks."""
    for w in cluster.up():
        recs = rebalances(w, limit=1)
        if recs:
            r = recs[-1]
            if r.get("delay_ms", 0) > 0 and r.get("sync_done_ms"):
                if now * 1000 < r["sync_done_ms"] + r["delay_ms"] + 2000:
                    return True
    return False


def settle_problems(cluster, poller, reader, keys, epoch0, fresh_s):
    """Why the cluster has not settled after an event (empty = settled):
    a rebalance completed since (generation above `epoch0`), no worker is
    rebalancing, every up worker is on the same generation, every task runs
    on exactly one worker, every task wrote a record in the last `fresh_s`
    and no scheduled-rebalance delay is pending."""
    s = poller.latest()
    now = time.time()
    if s is None:
        return ["no status sample yet"]
    t, running, epochs, rebalancing = s
    up = [w.n for w in cluster.up()]
    probs = []
    if any(n not in epochs for n in up):
        probs.append("an up worker has not answered /metrics yet")
    ep = {epochs.get(n) for n in up}
    if len(ep) != 1:
        probs.append(f"generations differ {epochs}")
    elif epoch0 is not None and max(ep) <= epoch0:
        probs.append(f"no new generation yet ({max(ep)})")
    if any(rebalancing.get(n) for n in up):
        probs.append("rebalancing")
    bad = [k for k in keys if running.get(k, 0) != 1]
    if bad:
        probs.append(f"{len(bad)} tasks not running exactly once")
    if reader is not None:
        last = reader.last_seen()
        stale = [k for k in keys if last.get(k, 0) < now - fresh_s]
        if stale:
            probs.append(f"{len(stale)} tasks wrote nothing in {fresh_s:.1f} s")
    if not probs and delay_pending(cluster, now):
        probs.append("scheduled rebalance delay pending")
    return probs


def wait_settled(cluster, poller, reader, keys, epoch0, fresh_s, timeout_s, stable_s=1.5, step=0.4):
    """Waits until settle_problems() is empty for `stable_s` in a row.
    Returns (settled, seconds until the first of those looks, problems)."""
    t0 = time.time()
    first_ok = None
    probs = ["no look yet"]
    while True:
        probs = settle_problems(cluster, poller, reader, keys, epoch0, fresh_s)
        now = time.time()
        if not probs:
            first_ok = first_ok or now
            if now - first_ok >= stable_s:
                return True, first_ok - t0, []
        else:
            first_ok = None
        if now - t0 > timeout_s:
            return False, None, probs
        time.sleep(step)


def rebalance_summary(cluster, lo_ms, hi_ms):
    """From every up worker's GET /rebalances, the rounds whose assignment
    arrived in [lo_ms, hi_ms]: revoked tasks (union), generations seen, the
    longest task stop. A killed worker's history died with it."""
    revoked, gens, max_stop = set(), set(), 0
    for w in cluster.up():
        for r in rebalances(w):
            done = r.get("sync_done_ms") or 0
            if lo_ms <= done <= hi_ms:
                gens.add(r.get("generation"))
                revoked.update((r.get("revoked") or {}).get("tasks") or [])
                for s in r.get("task_stops") or []:
                    max_stop = max(max_stop, s.get("stop_ms", 0))
    return {"revoked": len(revoked), "generations_seen": sorted(g for g in gens if g is not None),
            "max_stop_ms": max_stop}


def count_in_logs(cluster, needle):
    n = 0
    for w in cluster.nodes:
        try:
            with open(w.out_path, errors="replace") as f:
                n += f.read().count(needle)
        except FileNotFoundError:
            pass
    return n


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
