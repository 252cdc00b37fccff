"""Pure functions of bench/cluster: downtime from the tasks' own records and
from the workers' task-status samples, running-task series for the chart,
and the Markdown tables (written and parsed back). No processes, no clock.

Times are seconds since the epoch (float); a task is "connector-task".
"""
import re


def gaps(times, lo, hi, threshold, open_end=True):
    """The silent stretches of one task that matter for the window (lo, hi].

    `times` are the task's record timestamps, sorted. A gap is two
    consecutive records further apart than `threshold`, or the task's last
    record more than `threshold` before `hi` with none after it (not back).
    Only gaps that end after `lo` and start before `hi` count. With
    `open_end`, a silence that is open at `hi` but ends in a later record
    counts up to that record (the task's whole outage); without, records
    after `hi` are ignored (for a window that ends where an event begins).
    Returns [(start, end, recovered)]: start = the last record before the
    silence, end = the first record after it (or `hi` if not recovered)."""
    out = []
    if not times:
        return [(lo, hi, False)]
    prev = None
    for t in times:
        if t > hi and not open_end:
            break
        if prev is not None and t - prev > threshold and t > lo and prev < hi:
            out.append((prev, t, True))
        if t > hi:
            return out
        prev = t
    if prev is None:
        out.append((lo, hi, False))
    elif hi - prev > threshold:
        out.append((prev, hi, False))
    return out


def record_downtime(tasks, keys, lo, hi, threshold, period, open_end=True):
    """Downtime in (lo, hi] from records. `tasks` maps task -> [(ts, seq)] in
    offset order; `keys` are the configured tasks. A gap costs its length
    minus one record period (what a running task takes between records).

    Returns a dict: stopped (tasks with a gap), task_s (sum of gap costs),
    longest_s (the largest one task's summed gap costs: the worst outage an
    operator sees on a single task), to_all_running (latest gap end - lo; None if a task wrote nothing after
    its silence), unrecovered (those tasks),
    replayed (records whose sequence number is not above the previous one:
    a restart from committed offsets), lost (sequence numbers skipped)."""
    stopped = 0
    task_s = 0.0
    longest_s = 0.0
    latest_end = lo
    unrecovered = []
    replayed = lost = 0
    for k in keys:
        recs = tasks.get(k, [])
        times = sorted(ts for ts, _ in recs)
        g = gaps(times, lo, hi, threshold, open_end)
        if g:
            stopped += 1
        own_s = 0.0
        for start, end, recovered in g:
            start = max(start, lo - threshold)  # silent since before the window: a previous event's
            own_s += max(0.0, end - start - period)
            if recovered:
                latest_end = max(latest_end, end)
            else:
                unrecovered.append(k)
        task_s += own_s
        longest_s = max(longest_s, own_s)
        prev = None
        for ts, seq in recs:
            if lo - threshold < ts <= hi and prev is not None:
                if seq <= prev:
                    replayed += 1
                elif seq > prev + 1:
                    lost += seq - prev - 1
            prev = seq
    return {"stopped": stopped, "task_s": task_s, "longest_s": longest_s,
            "to_all_running": None if unrecovered else latest_end - lo,
            "unrecovered": sorted(unrecovered), "replayed": replayed, "lost": lost}


def final_start(tasks, keys, threshold):
    """When the last task began the run it is still in: the latest, over
    `keys`, of the first record after a task's last gap longer than
    `threshold` (or of its first record). None if a task wrote nothing."""
    latest = None
    for k in keys:
        times = sorted(ts for ts, _ in tasks.get(k, []))
        if not times:
            return None
        start = times[0]
        for a, b in zip(times, times[1:]):
            if b - a > threshold:
                start = b
        latest = start if latest is None else max(latest, start)
    return latest


def sample_downtime(samples, keys, lo, hi):
    """Downtime in [lo, hi] from status samples [(t, {task: workers running
    it})]: a task is down from a sample where no worker runs it until the
    next sample. Returns stopped, task_s and to_all_running (the first
    sample after the last one with a task down, - lo)."""
    inside = [s for s in samples if lo <= s[0] <= hi]
    down_tasks = set()
    task_s = 0.0
    last_down = None
    for i, (t, running) in enumerate(inside):
        nxt = inside[i + 1][0] if i + 1 < len(inside) else hi
        down = [k for k in keys if running.get(k, 0) < 1]
        if down:
            down_tasks.update(down)
            task_s += len(down) * (nxt - t)
            last_down = i
    if last_down is None:
        to_all = 0.0
    elif last_down + 1 < len(inside):
        to_all = inside[last_down + 1][0] - lo
    else:
        to_all = None
    return {"stopped": len(down_tasks), "task_s": task_s, "to_all_running": to_all}


def running_series(tasks, keys, lo, hi, step, threshold, period):
    """[(t, tasks running)] on a grid of `step` over [lo, hi], from records:
    a task runs at t unless t falls in a gap longer than `threshold` (from
    one period after the last record to the next record), before its first
    record, or more than `threshold` after its last one."""
    n = int((hi - lo) / step) + 1
    diff = [0] * (n + 1)

    def mark(a, b):  # task down on [a, b)
        i = max(0, int((a - lo) / step + 0.999999))
        j = min(n, int((b - lo) / step + 0.999999))
        if i < j:
            diff[i] += 1
            diff[j] -= 1

    for k in keys:
        times = sorted(ts for ts, _ in tasks.get(k, []))
        if not times:
            mark(lo, hi + step)
            continue
        mark(lo - step, times[0])
        for a, b in zip(times, times[1:]):
            if b - a > threshold:
                mark(a + period, b)
        if hi - times[-1] > threshold:
            mark(times[-1] + period, hi + step)
    out = []
    down = 0
    for i in range(n):
        down += diff[i]
        out.append((lo + i * step, len(keys) - down))
    return out


# ---------------------------------------------------------------- tables

PROTOCOLS = ("eager", "sessioned")


def fmt_num(x, unit="", digits=1):
    return "timeout" if x is None else f"{x:.{digits}f}{unit}"


def cell(r):
    """`stopped / task-s down (records) [(events)] / longest task outage / to all running / generations`,
    or n/a."""
    if r is None or r.get("skipped"):
        return f"n/a ({r['why']})" if r and r.get("why") else "n/a"
    rec, ev = r["records"], r["events"]
    return (f"{rec['stopped']} / {rec['task_s']:.1f} ({ev['task_s']:.1f}) / {rec.get('longest_s', 0.0):.1f} s / "
            f"{fmt_num(rec['to_all_running'], ' s')} / {r['generations']}")


def ratio(results, event):
    e, s = results["eager"].get(event), results["sessioned"].get(event)
    if not e or not s or e.get("skipped") or s.get("skipped"):
        return "n/a"
    de, ds = e["records"]["task_s"], s["records"]["task_s"]
    return "n/a" if de <= 0 else f"{ds / de:.2f}"


def table(results, events, titles):
    """The disruption table. `results[protocol][event]` is run_event's dict."""
    lines = ["| event | eager: tasks stopped / task-s down / longest task outage / time to all running / generations "
             "| sessioned: tasks stopped / task-s down / longest task outage / time to all running / generations "
             "| sessioned/eager downtime |",
             "|---|---|---|---:|"]
    for ev in events:
        lines.append(f"| {titles[ev]} | {cell(results['eager'].get(ev))} | {cell(results['sessioned'].get(ev))} "
                     f"| {ratio(results, ev)} |")
    return "\n".join(lines)


def detail_table(results, events, titles):
    """Every measure side by side: records vs the workers' own start/stop events."""
    lines = ["| event | protocol | stopped: records / status / /rebalances revoked | task-s: records / status "
             "| all running: records / status / settled | generations | replayed / lost records "
             "| longest task stop | noise: stopped / task-s in the quiet seconds before |",
             "|---|---|---|---|---|---:|---|---:|---|"]
    for ev in events:
        for p in PROTOCOLS:
            r = results[p].get(ev)
            if r is None or r.get("skipped"):
                lines.append(f"| {titles[ev]} | {p} | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
                continue
            rec, st, rb = r["records"], r["events"], r["rebalances"]
            lines.append(
                f"| {titles[ev]} | {p} | {rec['stopped']} / {st['stopped']} / {rb['revoked']} "
                f"| {rec['task_s']:.1f} / {st['task_s']:.1f} "
                f"| {fmt_num(rec['to_all_running'], ' s')} / {fmt_num(st['to_all_running'], ' s')} / "
                f"{fmt_num(r['settled_after'], ' s')} | {r['generations']} | {rec['replayed']} / {rec['lost']} "
                f"| {rb['max_stop_ms']} ms | {r['quiet_before']['stopped']} / {r['quiet_before']['task_s']:.1f} |")
    return "\n".join(lines)


_CELL = re.compile(r"^(\d+) / (\d+(?:\.\d+)?) \((\d+(?:\.\d+)?)\) / (\d+(?:\.\d+)?) s / "
                   r"(\d+(?:\.\d+)? s|timeout) / (-?\d+)$")


def parse_table(text):
    """Parses the disruption table (the first one in `text`) back: {event
    title: {protocol: dict or None (n/a), "ratio": float or None}}. Raises
    ValueError on a malformed row."""
    rows = {}
    inside = False
    for line in text.splitlines():
        if line.startswith("| event | eager:"):
            inside = True
            continue
        if not inside or line.startswith("|---"):
            continue
        if not line.startswith("| "):
            break  # the end of the disruption table
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) != 4:
            raise ValueError(f"row has {len(parts)} cells: {line}")
        title, cells, rat = parts[0], parts[1:3], parts[3]
        row = {}
        for p, c in zip(PROTOCOLS, cells):
            if c == "n/a":
                row[p] = None
                continue
            m = _CELL.match(c)
            if not m:
                raise ValueError(f"cell does not parse: {c!r}")
            t = m.group(5)
            row[p] = {"stopped": int(m.group(1)), "task_s": float(m.group(2)), "events_task_s": float(m.group(3)),
                      "longest_s": float(m.group(4)),
                      "to_all_running": None if t == "timeout" else float(t[:-2]), "generations": int(m.group(6))}
        row["ratio"] = None if rat == "n/a" else float(rat)
        rows[title] = row
    return rows


def blog_table(blog):
    lines = ["| protocol | connectors x tasks | POSTs took | time to all running | generations | tasks abandoned (logs) |",
             "|---|---|---:|---:|---:|---:|"]
    for p in PROTOCOLS:
        b = blog.get(p)
        if b is None:
            continue
        if b["to_all_running"] is None:
            done = f"timeout after {b['timeout_s']:.0f} s ({b['running_at_end']} of {b['tasks']} running)"
        else:
            rec = b.get("to_all_running_records")
            done = f"{b['to_all_running']:.1f} s" + (f" (records {rec:.1f} s)" if rec is not None else "")
        lines.append(f"| {p} | {b['connectors']} x {b['tasks_per_connector']} | {b['posts_s']:.1f} s | {done} "
                     f"| {b['generations']} | {b['abandoned']} |")
    return "\n".join(lines)
