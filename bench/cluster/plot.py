"""The chart of bench/cluster: running tasks over time for both protocols on
one chart, with gnuplot (Debian's gnuplot-nox).

Each event gets a segment of the x axis, from `pre` seconds before it to the
later of the two protocols' window ends, so the eager and sessioned curves
of one event start at the same x and can be compared directly. Solid lines:
tasks running by their records; thin steps: tasks RUNNING by the workers'
kconnectd_task_status.
"""
import os
import shutil
import subprocess

from analysis import PROTOCOLS, running_series

COLORS = {"eager": "#d62728", "sessioned": "#1f77b4"}


def layout(windows, events, pre):
    """{event: (x offset of the event's start, segment length)} for the
    events that ran, in order. `windows[protocol][event]` = (t0, t_end)."""
    out = {}
    x = 0.0
    for ev in events:
        spans = [windows[p][ev][1] - windows[p][ev][0] for p in PROTOCOLS if ev in windows.get(p, {})]
        if not spans:
            continue
        length = max(spans) + pre
        out[ev] = (x + pre, length)
        x += length + 1.0
    return out


def write_chart(out_dir, png, title, events, titles, windows, records, samples, keys, threshold, period, pre,
                step=0.1):
    """Writes the data files and plot.gp into `out_dir` and runs gnuplot.
    `records[protocol]` = task -> [(ts, seq)]; `samples[protocol]` = status
    samples [(t, {task: count})]. Returns None or the reason no PNG was made."""
    lay = layout(windows, events, pre)
    if not lay:
        return "no event ran"
    for p in PROTOCOLS:
        with open(os.path.join(out_dir, f"{p}-records.dat"), "w") as rec_f, \
                open(os.path.join(out_dir, f"{p}-status.dat"), "w") as st_f:
            for ev, (x0, length) in lay.items():
                if ev not in windows.get(p, {}):
                    continue
                t0, t_end = windows[p][ev]  # each protocol's own window: what follows is the next event
                lo, hi = t0 - pre, t_end
                for t, n in running_series(records.get(p, {}), keys, lo, hi, step, threshold, period):
                    rec_f.write(f"{x0 + t - t0:.2f} {n}\n")
                rec_f.write("\n\n")
                for t, running in samples.get(p, []):
                    if lo <= t <= hi:
                        st_f.write(f"{x0 + t - t0:.2f} {sum(1 for k in keys if running.get(k, 0) >= 1)}\n")
                st_f.write("\n\n")
    gp = [
        "set terminal pngcairo size 1600,560 font ',10'",
        f"set output '{png}'",
        f"set title \"{title}\"",
        "set xlabel 'seconds since each event (the events of both protocols are aligned)'",
        "set ylabel 'tasks running'",
        f"set yrange [0:{int(len(keys) * 1.15) + 1}]",
        f"set xrange [0:{max(x0 + length - pre for x0, length in lay.values()):.1f}]",
        "set key outside bottom center horizontal",
        "set grid ytics",
    ]
    tics = []
    for ev, (x0, length) in lay.items():
        gp.append(f"set arrow from {x0:.2f}, graph 0 to {x0:.2f}, graph 1 nohead dt 2 lw 1.5 lc rgb '#555555'")
        gp.append(f"set label \"{titles[ev]}\" at {x0 + 0.3:.2f}, graph 0.96 left font ',9'")
        span = length - pre
        every = 5 if span <= 40 else 10 if span <= 120 else 30
        s = 0
        while s <= span:
            tics.append(f"\"{s}\" {x0 + s:.2f}")
            s += every
    gp.append("set xtics (" + ", ".join(tics) + ") font ',8'")
    plots = []
    for p in PROTOCOLS:
        plots.append(f"'{p}-records.dat' using 1:2 with lines lw 2 lc rgb '{COLORS[p]}' title '{p}: records'")
    for p in PROTOCOLS:
        plots.append(f"'{p}-status.dat' using 1:2 with steps lw 1 dt 3 lc rgb '{COLORS[p]}' "
                     f"title '{p}: task status (metrics)'")
    gp.append("plot " + ", \\\n     ".join(plots))
    with open(os.path.join(out_dir, "plot.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    if shutil.which("gnuplot") is None:
        return "gnuplot not found (apt-get install gnuplot-nox)"
    r = subprocess.run(["gnuplot", "plot.gp"], cwd=out_dir, capture_output=True, text=True)
    if r.returncode != 0:
        return f"gnuplot failed: {r.stderr.strip()[-500:]}"
    return None
