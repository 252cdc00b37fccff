"""ctest bench_cluster_smoke: `bench/cluster/run --smoke` (2 workers, 1
SequenceSource x 2 tasks, a join under eager and sessioned) must print a
disruption table whose numbers parse, write table.md, results.json and a PNG.
Eager stops every task on a join; that much is asserted, nothing about speed.

Also checks the downtime arithmetic of analysis.py on fixed records.

usage: test_smoke.py KCONNECTD
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import analysis  # noqa: E402

failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg, flush=True)
    if not cond:
        failures.append(msg)


def arithmetic():
    # Task a: records every 0.1 s, silent from 10.0 to 12.0. Task b: never silent.
    # Task c: silent from 11.0 to the end of the window.
    a = [(10.0 - i / 10, i) for i in range(20, -1, -1)] + [(12.0 + i / 10, 21 + i) for i in range(10)]
    b = [(8.0 + i / 10, i) for i in range(50)]
    c = [(8.0 + i / 10, i) for i in range(31)]
    tasks = {"x-0": a, "x-1": b, "x-2": c}
    keys = ["x-0", "x-1", "x-2"]
    r = analysis.record_downtime(tasks, keys, 9.5, 12.9, threshold=0.5, period=0.1)
    check(r["stopped"] == 2, f"two tasks stopped ({r['stopped']})")
    check(abs(r["task_s"] - (1.9 + 1.8)) < 1e-6, f"task-seconds 1.9 + 1.8 ({r['task_s']:.3f})")
    check(abs(r["longest_s"] - 1.9) < 1e-6, f"longest single-task outage 1.9 s ({r['longest_s']:.3f})")
    check(r["to_all_running"] is None and r["unrecovered"] == ["x-2"], "x-2 not back: no time to all running")
    r = analysis.record_downtime(tasks, keys[:2], 9.5, 12.9, threshold=0.5, period=0.1)
    check(abs(r["to_all_running"] - 2.5) < 1e-6, f"all running 2.5 s after the event ({r['to_all_running']})")
    s = analysis.running_series(tasks, keys[:2], 9.0, 13.0, 0.5, 0.5, 0.1)
    check([n for _, n in s] == [2, 2, 2, 1, 1, 1, 2, 2, 2], f"running series {s}")
    # A silence open at the window's end: whole outage with open_end, nothing yet without.
    d = {"x-3": [(12.0 + i / 10, i) for i in range(6)] + [(13.5, 6)]}
    r = analysis.record_downtime(d, ["x-3"], 12.0, 12.9, threshold=0.5, period=0.1)
    check(r["stopped"] == 1 and abs(r["task_s"] - 0.9) < 1e-6 and abs(r["to_all_running"] - 1.5) < 1e-6,
          f"open silence counted to its end ({r})")
    r = analysis.record_downtime(d, ["x-3"], 12.0, 12.9, threshold=0.5, period=0.1, open_end=False)
    check(r["stopped"] == 0, f"open silence shorter than the threshold at the end, closed window ({r})")
    samples = [(10.0, {"x-0": 1}), (11.0, {}), (12.0, {"x-0": 1}), (13.0, {"x-0": 1})]
    st = analysis.sample_downtime(samples, ["x-0"], 10.0, 13.0)
    check(st["stopped"] == 1 and st["task_s"] == 1.0 and st["to_all_running"] == 2.0, f"status downtime {st}")
    check(analysis.final_start(tasks, keys[:2], 0.5) == 12.0, "final start of the last task")
    # A row the bench could not measure here (--static on the embedded broker) says why.
    skipped = {"skipped": True, "why": "static: needs a KIP-345 broker (--bootstrap)"}
    check(analysis.cell(skipped) == "n/a (static: needs a KIP-345 broker (--bootstrap))", f"n/a cell {analysis.cell(skipped)}")
    check(analysis.ratio({"eager": {"kill": skipped}, "sessioned": {"kill": skipped}}, "kill") == "n/a", "n/a ratio")


def smoke(kc):
    out = tempfile.mkdtemp(prefix="kc-bench-smoke-")
    p = subprocess.run([sys.executable, os.path.join(HERE, "run"), "--smoke", "--kconnectd", kc, "--out", out],
                       capture_output=True, text=True, timeout=170)
    print(p.stdout[-6000:], p.stderr[-3000:], sep="\n")
    check(p.returncode == 0, f"run --smoke exit status {p.returncode}")
    try:
        rows = analysis.parse_table(p.stdout)
    except ValueError as e:
        check(False, f"the table parses: {e}")
        return
    title = "a worker joins"
    check(title in rows, f"a row for the join ({sorted(rows)})")
    if title in rows:
        eager, sess = rows[title]["eager"], rows[title]["sessioned"]
        check(eager is not None and sess is not None, "both protocols measured")
        if eager and sess:
            check(eager["stopped"] == 2, f"eager stops both tasks on a join ({eager['stopped']})")
            check(eager["to_all_running"] is not None and sess["to_all_running"] is not None,
                  "both protocols got every task running again")
            check(eager["generations"] >= 1 and sess["generations"] >= 1, "each join made a new generation")
            check(eager["longest_s"] <= eager["task_s"] + 1e-6 and eager["longest_s"] > 0,
                  f"eager's longest task outage is within its total ({eager['longest_s']} of {eager['task_s']})")
    for name in ("table.md", "results.json"):
        check(os.path.getsize(os.path.join(out, name)) > 0, f"{name} written")
    png = os.path.join(out, "cluster.png")
    ok = os.path.exists(png)
    if ok:
        with open(png, "rb") as f:
            ok = f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 5000
    check(ok, f"{png} is a PNG")
    if not failures:
        subprocess.run(["rm", "-rf", out])
    else:
        print(f"output kept in {out}")


if __name__ == "__main__":
    arithmetic()
    smoke(os.path.abspath(sys.argv[1]))
    print("OK" if not failures else f"{len(failures)} check(s) failed")
    sys.exit(1 if failures else 0)
