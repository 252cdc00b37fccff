#!/usr/bin/python3
"""The web console (issue 28, /ui) in a real browser: headless Chromium
driven by Selenium against live `kconnectd run` workers.

usage: test_console.py KCONNECTD [SCREENSHOT_DIR]

Runs with Debian's /usr/bin/python3 (python3-selenium), /usr/bin/chromium and
/usr/bin/chromedriver; when one of them is missing the test FAILS and says to
run scripts/setup (it never skips). Reads the page only through the
console's data-testid attributes (the DOM contract between the frontend and
this test) and cross-checks every value against the REST API.

 a. `kconnectd mock-broker`, three dynamic workers, a SequenceSource with 6
    tasks spread over the three and a second one with 2 tasks. The browser
    opens <follower>/ui (a follower: /cluster is forwarded to the leader).
 b. #/cluster: exactly 3 worker rows, exactly one data-leader="true" and it
    is the leader of GET /rebalances and GET /cluster's served_by; the
    header's generation is REST's; every task of both connectors has a task
    cell whose data-state is GET /connectors/{c}/status's state and whose
    data-worker is its owner in GET /cluster's `tasks` lists.
 c. The connector page: the config table shows the secret key's value as
    [hidden] (and nowhere the secret); pause through the confirmation dialog,
    whose call text is `PUT /connectors/<name>/pause`; then every one of the
    three workers reports the connector and all its tasks PAUSED.
 d. Resumed (REST), then SIGTERM to the other follower (it runs tasks; it
    stops as Connect does, see GROUP): within 5 s #/timeline shows a
    rebalance band of a newer generation, and #/cluster shows 2 worker rows
    with every task cell on a survivor, as GET /cluster says. Both times are
    printed.
 e. PNG screenshots of every view (cluster, timeline, connector page, the
    open confirmation dialog, the cluster at 375x800, the auth pages) into
    SCREENSHOT_DIR (default: the work directory); their paths are printed.
 f. Basic auth: a second two-worker group with rest.basic.auth.credentials.file
    on the same broker. GET /ui without credentials is 401 with
    `WWW-Authenticate: Basic realm="kconnectd"`; the browser with a wrong
    password gets the 401 refusal and no worker row; with the right one the
    console shows both workers through the follower, and when its password
    goes stale it shows [data-testid=auth-error] and stops polling (how the
    browser gets the credentials: the comment in auth_part).
 g. No SEVERE entry in the browser console, except the 401s of part f.

Logs are kept on failure or with KC_KEEP=1; KC_UI_HEADFUL=1 shows the window.
"""
import base64
import json
import os
import re
import signal
import sys
import time
import traceback
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lifecycle"))

from kc_harness import (Abort, Worker, check, create_connector, failures, http, leader_and_followers,  # noqa: E402
                        run_main, say, start_broker, wait_for, wait_healthy)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SETUP_HINT = "run scripts/setup (Debian packages chromium, chromium-driver, python3-selenium)"

BIG = "ui-seq"            # 6 tasks over the 3 workers
SMALL = "ui-small"        # 2 tasks
TOPIC = "ui-seq-data"
SECRET_KEY = "some.password"
SECRET_VALUE = "s3cr3t-do-not-show"
CONNECTORS = {BIG: 6, SMALL: 2}

# Group timings. librdkafka's mock broker holds the first join of an empty
# group 3 s and every later round session.timeout.ms - 1 s
# (worker/coordinator/README.md), and a session shorter than the first join
# loses the JoinGroup answers (seen with 2000: a 65 s hang), so 3000 is the
# floor and a round costs 2 s. The SIGTERM of part d must show within 5 s, so
# the victim stops as Connect does (no drain: the default drain adds a round
# of its own before the LeaveGroup, 4.5 s in all) and the leader places the
# lost tasks in the LeaveGroup's round (no scheduled delay): one round.
GROUP = {"session.timeout.ms": "3000", "heartbeat.interval.ms": "500", "task.shutdown.graceful.timeout.ms": "3000"}
MAIN_GROUP = dict(GROUP, **{"shutdown.drain.enable": "false", "scheduled.rebalance.max.delay.ms": "0"})

AUTH_USER, AUTH_PASSWORD = "admin", "adminpw"

DOM_WAIT_S = 15          # every DOM wait (brief: <= 15 s)
PAUSE_WAIT_S = 20        # pause visible on every worker
MOVE_LIMIT_S = 5.0       # SIGTERM -> the console shows the new round

# One JSON snapshot of everything the test reads from the DOM, taken in one
# script call: the console re-renders every second, so element handles kept
# across calls can go stale; a snapshot cannot.
SNAPSHOT_JS = r"""
const q = (s) => Array.from(document.querySelectorAll(s));
const txt = (s) => { const e = document.querySelector(s); return e ? e.textContent.trim() : null; };
const visible = (s) => { const e = document.querySelector(s); return !!e && !e.hidden && e.offsetParent !== null; };
const dlg = document.querySelector('[data-testid=confirm-dialog]');
const page = document.querySelector('[data-testid=connector-page]');
const cfg = {};
for (const tr of q('[data-testid=connector-config] tr')) {
  const cells = tr.querySelectorAll('th, td');
  if (cells.length >= 2) cfg[cells[0].textContent.trim()] = cells[1].textContent.trim();
}
return {
  hash: location.hash,
  href: location.href,
  last_update: txt('[data-testid=last-update]'),
  generation: txt('[data-testid=cluster-generation]'),
  leader: txt('[data-testid=leader]'),
  rows: q('[data-testid=worker-row]').map((r) => ({id: r.dataset.workerId, leader: r.dataset.leader,
         tasks: (r.querySelector('[data-testid=worker-tasks]') || {}).textContent,
         generation: (r.querySelector('[data-testid=worker-generation]') || {}).textContent,
         missing: ['worker-generation', 'worker-health', 'worker-tasks', 'worker-uptime', 'worker-rss',
                   'worker-threads', 'worker-protocol', 'worker-url', 'action-drain']
                  .filter((t) => !r.querySelector(`[data-testid=${t}]`))})),
  cells: q('[data-testid=task-cell]').map((c) => ({task: c.dataset.task, state: c.dataset.state,
         worker: c.dataset.worker, moved: c.classList.contains('moved')})),
  bands: q('[data-testid=rebalance-band]').map((b) => ({worker: b.dataset.worker,
         generation: Number(b.dataset.generation), reason: b.dataset.reason})),
  lanes: q('[data-testid=timeline-lane]').map((l) => l.dataset.worker),
  timeline: !!document.querySelector('svg[data-testid=timeline]'),
  links: q('[data-testid=connector-link]').map((a) => a.dataset.connector),
  page: page ? page.dataset.connector : null,
  connector_state: txt('[data-testid=connector-state]'),
  config: cfg,
  task_rows: q('[data-testid=task-row]').map((r) => ({task: r.dataset.task, state: r.dataset.state})),
  sparklines: q('svg[data-testid=sparkline]').length,
  page_parts: ['connector-config', 'connector-offsets', 'connector-topics', 'action-pause', 'action-resume',
               'action-stop', 'action-restart', 'action-delete', 'action-reset-offsets']
              .filter((t) => document.querySelector(`[data-testid=${t}]`)),
  grid: !!document.querySelector('[data-testid=assignment-grid]'),
  dialog_open: !!(dlg && dlg.open),
  confirm_call: txt('[data-testid=confirm-call]'),
  action_result: visible('[data-testid=action-result]') ? txt('[data-testid=action-result]') : null,
  auth_error: visible('[data-testid=auth-error]') ? txt('[data-testid=auth-error]') : null,
  error_banner: visible('[data-testid=error-banner]') ? txt('[data-testid=error-banner]') : null,
  body: document.body ? document.body.innerText.slice(0, 2000) : '',
};
"""


def require_browser():
    """Selenium, Chromium and chromedriver, or exit 1 with what to install."""
    missing = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append(f"the selenium module (python3-selenium) for {sys.executable}")
    for p in (CHROMIUM, CHROMEDRIVER):
        if not os.access(p, os.X_OK):
            missing.append(p)
    if missing:
        print(f"FAIL: the web console test needs a browser: missing {', '.join(missing)}; {SETUP_HINT}", flush=True)
        sys.exit(1)


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def http_auth(method, url, auth=None, timeout=5):
    """(status, parsed body or text, headers); status None = no connection."""
    req = urllib.request.Request(url, method=method)
    if auth:
        req.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw, code, headers = r.read().decode(errors="replace"), r.status, r.headers
    except urllib.error.HTTPError as e:
        raw, code, headers = e.read().decode(errors="replace"), e.code, e.headers
    except (urllib.error.URLError, ConnectionError, OSError) as e:
        return None, str(e), {}
    try:
        return code, json.loads(raw) if raw else None, headers
    except ValueError:
        return code, raw, headers


class Browser:
    """One headless Chromium with its chromedriver; `logs` keeps every
    browser console entry read so far, tagged with the phase."""

    def __init__(self, work, phase):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        if os.environ.get("KC_UI_HEADFUL") != "1":
            opts.add_argument("--headless=new")
        for a in ("--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                  "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  f"--user-data-dir={os.path.join(work, 'chromium-' + phase)}"):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(CHROMEDRIVER, log_path=os.path.join(work, f"chromedriver-{phase}.log"))
        self.driver = webdriver.Chrome(service=service, options=opts)
        self.driver.set_page_load_timeout(30)
        self.driver.set_script_timeout(10)
        self.phase = phase
        self.logs = []

    def snap(self):
        return self.driver.execute_script(SNAPSHOT_JS)

    def wait(self, what, pred, timeout_s=DOM_WAIT_S):
        """Polls pred(snapshot) every 0.1 s until it returns a truthy value
        (returned) or a string starting with '!' (not yet; the reason); on
        timeout raises Abort with the last reason and snapshot. Plain
        WebDriverWait semantics, but with the reason of the last miss."""
        from selenium.webdriver.support.ui import WebDriverWait
        last = {"why": "never evaluated", "snap": None}

        def probe(_driver):
            s = self.snap()
            v = pred(s)
            if isinstance(v, str) and v.startswith("!"):
                last.update(why=v[1:], snap=s)
                return False
            return v
        try:
            return WebDriverWait(self.driver, timeout_s, poll_frequency=0.1).until(probe)
        except Exception as e:  # TimeoutException (and anything else the driver raises)
            snap = dict(last["snap"] or {})
            snap.pop("body", None)
            raise Abort(f"{what}: not within {timeout_s} s ({type(e).__name__}): {last['why']}; DOM: "
                        f"{json.dumps(snap)[:1500]}")

    def click(self, css, timeout_s=DOM_WAIT_S):
        """Clicks the element; retried while it is missing or replaced (stale)."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.by import By
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.driver.find_element(By.CSS_SELECTOR, css).click()
                return
            except WebDriverException as e:
                if time.monotonic() > deadline:
                    raise Abort(f"cannot click {css}: {type(e).__name__}: {str(e).splitlines()[0]}")
                time.sleep(0.1)

    def route(self, hash_):
        self.driver.execute_script("location.hash = arguments[0];", hash_)

    def next_poll(self):
        """Waits for the console's next poll ([data-testid=last-update] changes),
        so a screenshot shows a settled page (the nav's current-view mark, for
        one, follows a route change only at the next poll)."""
        first = self.snap()["last_update"]
        self.wait("the next poll", lambda s: s["last_update"] != first or f"!last update {first}", timeout_s=5)

    def shot(self, shots_dir, name):
        path = os.path.join(shots_dir, f"{name}.png")
        ok = self.driver.save_screenshot(path)
        check(ok and os.path.getsize(path) > 1000, f"screenshot {path}")
        return path

    def collect_logs(self, tag=None):
        for e in self.driver.get_log("browser"):
            e["phase"] = tag or self.phase
            self.logs.append(e)

    def quit(self):
        if self.driver is None:
            return
        try:
            self.collect_logs()
        except Exception:
            pass
        try:
            self.driver.quit()
        except Exception as e:
            say(f"driver.quit: {e}")
        self.driver = None


# ---------------------------------------------------------------- REST views

def cluster_view(url, auth=None):
    code, body, _ = http_auth("GET", url + "/cluster?rebalances=0", auth)
    return body if code == 200 and isinstance(body, dict) and body.get("workers") else None


def owners_from_cluster(cl):
    """{task id "c-n": worker id} from GET /cluster's `tasks` lists."""
    out = {}
    for w in cl.get("workers", []):
        for t in w.get("tasks", []) or []:
            out[t] = w.get("worker_id")
    return out


def statuses(url):
    """{connector: GET /connectors/{c}/status} from one worker, or None."""
    out = {}
    for c in CONNECTORS:
        code, body = http("GET", f"{url}/connectors/{c}/status", timeout=3)
        if code != 200 or not isinstance(body, dict):
            return None
        out[c] = body
    return out


def expected_cells(url):
    """REST's picture of every task: {"c-n": (state, owner)} with the owner from
    GET /cluster and the state from GET /connectors/{c}/status (both asked of
    the same worker), plus the /cluster body; None while REST is incomplete."""
    cl = cluster_view(url)
    st = statuses(url)
    if not cl or not st:
        return None, None
    owners = owners_from_cluster(cl)
    cells = {}
    for c, n in CONNECTORS.items():
        by_id = {t["id"]: t for t in st[c].get("tasks", [])}
        for i in range(n):
            task = f"{c}-{i}"
            cells[task] = (by_id.get(i, {}).get("state", "UNASSIGNED"), owners.get(task))
    return cells, cl


def cells_match(snap, want):
    """'' when the DOM's task cells are exactly `want`, else the difference."""
    got = {c["task"]: (c["state"], c["worker"]) for c in snap["cells"]}
    if len(snap["cells"]) != len(got):
        return f"duplicate task cells: {[c['task'] for c in snap['cells']]}"
    diff = {t: {"dom": got.get(t), "rest": want.get(t)} for t in set(got) | set(want) if got.get(t) != want.get(t)}
    return json.dumps(diff) if diff else ""


def all_running(url):
    """True when every task of both connectors is RUNNING on one worker each and
    all three workers are in one generation."""
    st = statuses(url)
    if not st:
        return False
    for c, n in CONNECTORS.items():
        tasks = st[c].get("tasks", [])
        if st[c]["connector"]["state"] != "RUNNING" or len(tasks) != n or any(t["state"] != "RUNNING" for t in tasks):
            return False
    cl = cluster_view(url)
    if not cl or len(cl["workers"]) != 3 or any("error" in w for w in cl["workers"]):
        return False
    if len({w["generation"] for w in cl["workers"]}) != 1:
        return False
    owners = owners_from_cluster(cl)
    return len(owners) == sum(CONNECTORS.values()) and len({owners[f"{BIG}-{i}"] for i in range(6)}) == 3


# ---------------------------------------------------------------- scenario

def scenario(kc, work, cluster, shots_dir):
    browsers = []
    try:
        run(kc, work, cluster, shots_dir, browsers)
    finally:
        for b in browsers:
            b.quit()
        check_console_logs(browsers)


def run(kc, work, cluster, shots_dir, browsers):
    # ------------------------------------------------------------ a. cluster
    # The auth group's internal topics too (the mock broker's CreateTopics can time out).
    cluster.broker, bootstrap = start_broker(kc, work, [f"{TOPIC}:3", "ui-auth-configs:1", "ui-auth-offsets:25",
                                                         "ui-auth-status:5"])
    workers = [Worker(n, kc, work, bootstrap, group="ui-console", overrides=MAIN_GROUP) for n in (1, 2, 3)]
    cluster.workers = list(workers)
    # The auth group of part f starts now, so it is up by then (idle workers cost little).
    creds = os.path.join(work, "rest-credentials")
    with open(creds, "w") as f:
        f.write(f"{AUTH_USER}: {AUTH_PASSWORD}\n")
    auth_overrides = dict(GROUP, **{"rest.basic.auth.credentials.file": creds, "rest.health.auth": "false",
                                    "config.storage.topic": "ui-auth-configs", "offset.storage.topic": "ui-auth-offsets",
                                    "status.storage.topic": "ui-auth-status"})
    auth_workers = [Worker(n, kc, work, bootstrap, group="ui-auth", overrides=auth_overrides) for n in (11, 12)]
    cluster.workers += auth_workers
    wait_healthy(workers)
    t_up = time.monotonic()
    for name, n in CONNECTORS.items():
        config = {"connector.class": "SequenceSource", "topic": TOPIC, "tasks.max": str(n), "throughput": "20"}
        if name == BIG:
            config[SECRET_KEY] = SECRET_VALUE  # a harmless extra key the console must redact
        if not create_connector(workers, {"name": name, "config": config}):
            raise Abort(f"cannot create {name}")
    got = wait_for(lambda: (r := http("GET", f"{workers[0].url}/connectors/{BIG}/config"))[0] == 200 and r, 30,
                   step=0.3)
    code, cfg = got or http("GET", f"{workers[0].url}/connectors/{BIG}/config")
    check(code == 200 and cfg.get(SECRET_KEY) == SECRET_VALUE,
          f"the connector accepted the extra secret key {SECRET_KEY} (GET config: {code} {str(cfg)[:200]})")
    if not wait_for(lambda: all_running(workers[0].url), 60, step=0.3):
        raise Abort(f"the tasks never ran on all three workers: {statuses(workers[0].url)} "
                    f"{cluster_view(workers[0].url)}")
    say(f"8 tasks RUNNING over 3 workers, {time.monotonic() - t_up:.1f} s after the workers were healthy")
    leader, followers = leader_and_followers(workers)
    if leader is None or len(followers) != 2:
        raise Abort("no leader in GET /rebalances")
    cl = cluster_view(followers[0].url)
    owners = owners_from_cluster(cl)
    # The page is served by a follower that the SIGTERM of part d spares; the
    # victim is the other follower, which must run tasks.
    victim = next((f for f in followers if any(o == f.worker_id for o in owners.values())), None)
    if victim is None:
        raise Abort(f"no follower runs tasks: {owners}")
    server = next(f for f in followers if f is not victim)
    say(f"leader {leader.worker_id}, page from follower {server.worker_id}, victim {victim.worker_id}")
    check(cl["served_by"] == leader.worker_id,
          f"GET /cluster through the follower is served by the leader ({cl['served_by']})")

    # ------------------------------------------------------------ b. the cluster view
    b = Browser(work, "main")
    browsers.append(b)
    t0 = time.monotonic()
    b.driver.get(server.url + "/ui")
    b.wait("3 worker rows", lambda s: len(s["rows"]) == 3 or f"!{len(s['rows'])} rows")
    say(f"console loaded: 3 worker rows {time.monotonic() - t0:.2f} s after driver.get")

    def leader_ok(s):
        leaders = [r["id"] for r in s["rows"] if r["leader"] == "true"]
        return (leaders == [leader.worker_id] and s) or f"!leader rows {leaders}, want [{leader.worker_id}]"
    s = b.wait("exactly one leader row, the REST leader", leader_ok)
    check(sorted(r["id"] for r in s["rows"]) == sorted(w.worker_id for w in workers),
          f"the 3 rows are the 3 workers: {[r['id'] for r in s['rows']]}")
    check([r["id"] for r in s["rows"] if r["leader"] == "true"] == [leader.worker_id],
          f"exactly one row has data-leader=true and it is the leader {leader.worker_id} "
          f"(GET /rebalances is_leader, GET /cluster served_by {cl['served_by']})")
    check(leader.worker_id in (s["leader"] or ""), f"[data-testid=leader] names the leader: {s['leader']!r}")
    check(all(not r["missing"] for r in s["rows"]),
          f"every worker row has the contract's cells and drain button (missing: {[r['missing'] for r in s['rows']]})")

    def gen_ok(s):
        c = cluster_view(server.url)
        g = str(c["generation"]) if c else None
        return (g is not None and s["generation"] == g and g) or f"!DOM {s['generation']!r}, REST {g}"
    g = b.wait("[data-testid=cluster-generation] is REST's generation", gen_ok)
    check(True, f"[data-testid=cluster-generation] = {g} = GET /cluster generation")

    def grid_ok(s):
        want, _ = expected_cells(server.url)
        if want is None:
            return "!REST incomplete"
        d = cells_match(s, want)
        return (not d and want) or f"!{d}"
    want = b.wait("every task cell's state and worker are REST's", grid_ok)
    check(True, f"all {len(want)} task cells match REST: " +
          ", ".join(f"{t}={st}@{w}" for t, (st, w) in sorted(want.items())))
    shots = {"cluster": b.shot(shots_dir, "cluster")}

    # ------------------------------------------------------------ c. connector page, pause
    b.click(f"[data-testid=connector-link][data-connector='{BIG}']")
    s = b.wait("the connector page", lambda s: (s["page"] == BIG and s["task_rows"] and s["config"]
                                                and SECRET_KEY in s["config"] and s) or
               f"!page {s['page']}, {len(s['task_rows'])} task rows, config keys {sorted(s['config'])}")
    check(s["hash"] == f"#/connectors/{BIG}", f"the link routes to {s['hash']}")
    check(s["config"].get(SECRET_KEY) == "[hidden]",
          f"the config table shows {SECRET_KEY} as [hidden]: {s['config'].get(SECRET_KEY)!r}")
    check(SECRET_VALUE not in b.driver.page_source, "the secret value appears nowhere in the page")
    check(s["config"].get("tasks.max") == "6", f"the config table shows tasks.max 6: {s['config'].get('tasks.max')!r}")
    check(s["connector_state"] == "RUNNING", f"[data-testid=connector-state] is RUNNING: {s['connector_state']!r}")
    check(sorted(r["task"] for r in s["task_rows"]) == sorted(f"{BIG}-{i}" for i in range(6)),
          f"6 task rows: {[r['task'] for r in s['task_rows']]}")
    s = b.wait("a sparkline per task", lambda s: (s["sparklines"] == 6 and s) or f"!{s['sparklines']} sparklines")
    want_parts = ['connector-config', 'connector-offsets', 'connector-topics', 'action-pause', 'action-resume',
                  'action-stop', 'action-restart', 'action-delete', 'action-reset-offsets']
    check(s["page_parts"] == want_parts, f"the page has {want_parts} (missing {set(want_parts) - set(s['page_parts'])})")
    shots["connector"] = b.shot(shots_dir, "connector")
    b.click("[data-testid=action-pause]")
    s = b.wait("the confirmation dialog", lambda s: (s["dialog_open"] and s) or "!dialog closed")
    check(s["confirm_call"] == f"PUT /connectors/{BIG}/pause",
          f"[data-testid=confirm-call] is {s['confirm_call']!r}")
    shots["confirm-dialog"] = b.shot(shots_dir, "confirm-dialog")
    t_pause = time.monotonic()
    b.click("[data-testid=confirm-ok]")
    res = b.wait("the action result", lambda s: (s["action_result"] and re.search(r"\b[1-5]\d\d\b", s["action_result"])
                                                 and s["action_result"]) or f"!action result {s['action_result']!r}")
    check("202" in res, f"[data-testid=action-result] shows the 202: {res!r}")

    def paused_everywhere():
        for w in workers:
            code, body = http("GET", f"{w.url}/connectors/{BIG}/status", timeout=3)
            if code != 200 or body["connector"]["state"] != "PAUSED" or \
                    len(body["tasks"]) != 6 or any(t["state"] != "PAUSED" for t in body["tasks"]):
                return False
        return True
    ok = wait_for(paused_everywhere, PAUSE_WAIT_S, step=0.2)
    check(ok, f"all 3 workers report {BIG} and its 6 tasks PAUSED ({time.monotonic() - t_pause:.2f} s after confirm)")
    b.wait("the connector page shows PAUSED",
           lambda s: (s["connector_state"] == "PAUSED" and all(r["state"] == "PAUSED" for r in s["task_rows"])
                      and len(s["task_rows"]) == 6) or f"!{s['connector_state']} {s['task_rows']}")
    check(True, "the connector page shows the connector and its 6 task rows PAUSED")

    # ------------------------------------------------------------ d. resume, SIGTERM a follower
    code, _ = http("PUT", f"{server.url}/connectors/{BIG}/resume")
    check(code == 202, f"PUT resume: {code}")
    if not wait_for(lambda: all_running(server.url), 30, step=0.2):
        raise Abort(f"not all RUNNING again after the resume: {statuses(server.url)}")
    b.route("#/timeline")
    before = cluster_view(server.url)["generation"]
    s = b.wait("the timeline with 3 lanes", lambda s: (s["timeline"] and len(s["lanes"]) == 3 and s["bands"] and s)
               or f"!timeline {s['timeline']}, lanes {s['lanes']}")
    check(max(x["generation"] for x in s["bands"]) <= before,
          f"no band newer than generation {before} yet: {sorted({x['generation'] for x in s['bands']})}")
    b.next_poll()
    shots["timeline"] = b.shot(shots_dir, "timeline")
    survivors = [leader.worker_id, server.worker_id]
    say(f"SIGTERM to {victim.worker_id} (generation {before}, runs "
        f"{sorted(t for t, o in owners_from_cluster(cluster_view(server.url)).items() if o == victim.worker_id)})")
    t_sig = time.monotonic()
    victim.signal(signal.SIGTERM)
    s = b.wait(f"a rebalance band newer than generation {before}",
               lambda s: [x for x in s["bands"] if x["generation"] > before] or f"!bands {s['bands'][-6:]}")
    t_band = time.monotonic() - t_sig
    check(t_band <= MOVE_LIMIT_S, f"#/timeline shows a band of a newer generation {t_band:.2f} s after the SIGTERM "
                                  f"(limit {MOVE_LIMIT_S} s): {s[:3]}")
    b.route("#/cluster")

    def moved_ok(s):
        if len(s["rows"]) != 2:
            return f"!{len(s['rows'])} rows: {[r['id'] for r in s['rows']]}"
        if sorted(r["id"] for r in s["rows"]) != sorted(survivors):
            return f"!rows {[r['id'] for r in s['rows']]}"
        off = [c for c in s["cells"] if c["worker"] not in survivors]
        if off or len(s["cells"]) != sum(CONNECTORS.values()):
            return f"!{len(s['cells'])} cells, not on a survivor: {off}"
        want, _ = expected_cells(server.url)
        d = "REST incomplete" if want is None else cells_match(s, want)
        return (not d and s) or f"!{d}"
    s = b.wait("2 worker rows and every task on a survivor", moved_ok, timeout_s=DOM_WAIT_S)
    t_grid = time.monotonic() - t_sig
    check(t_grid <= MOVE_LIMIT_S, f"#/cluster shows 2 rows and all 8 tasks on the survivors, as REST, "
                                  f"{t_grid:.2f} s after the SIGTERM (limit {MOVE_LIMIT_S} s)")
    say(f"after the SIGTERM: band {t_band:.2f} s, grid {t_grid:.2f} s; generation {s['generation']}; cells " +
        ", ".join(f"{c['task']}={c['state']}@{c['worker']}{' moved' if c['moved'] else ''}" for c in s["cells"]))
    check(victim.wait_exit(15) == 0, f"the victim exited 0 ({victim.proc.poll()})")
    shots["cluster-after-sigterm"] = b.shot(shots_dir, "cluster-after-sigterm")
    b.route("#/timeline")
    b.wait("the timeline again", lambda s: s["timeline"] or "!no timeline")
    b.next_poll()
    shots["timeline-after-sigterm"] = b.shot(shots_dir, "timeline-after-sigterm")

    # ------------------------------------------------------------ e. phone width
    b.route("#/cluster")
    b.driver.set_window_size(375, 800)
    b.wait("the cluster view at 375 px", lambda s: len(s["rows"]) == 2 or f"!{len(s['rows'])} rows")
    width = b.driver.execute_script("return document.documentElement.scrollWidth;")
    inner = b.driver.execute_script("return window.innerWidth;")
    check(width <= inner + 1, f"at 375 px the page does not scroll sideways (scrollWidth {width}, innerWidth {inner})")
    b.next_poll()
    shots["cluster-375"] = b.shot(shots_dir, "cluster-375")
    b.driver.set_window_size(1280, 900)
    b.collect_logs()

    # ------------------------------------------------------------ f. basic auth
    auth_part(work, auth_workers, shots_dir, browsers, shots)

    say("screenshots:")
    for name, path in shots.items():
        print(f"  {name}: {path}", flush=True)


def auth_part(work, auth_workers, shots_dir, browsers, shots):
    good = basic(AUTH_USER, AUTH_PASSWORD)
    wait_healthy(auth_workers)  # /health is open (rest.health.auth=false)

    def stable():
        c = cluster_view(auth_workers[0].url, good)
        return c if c and len(c["workers"]) == 2 and not any("error" in w for w in c["workers"]) \
            and len({w["generation"] for w in c["workers"]}) == 1 else None
    cl = wait_for(stable, 60, step=0.3)
    if not cl:
        raise Abort(f"the auth group never formed: {http_auth('GET', auth_workers[0].url + '/cluster', good)[:2]}")
    follower = next(w for w in auth_workers if w.worker_id != cl["served_by"])
    port = follower.port
    say(f"auth group: leader {cl['served_by']}, follower {follower.worker_id}")

    code, body, headers = http_auth("GET", follower.url + "/ui")
    challenge = headers.get("WWW-Authenticate", "") if headers else ""
    check(code == 401 and challenge.startswith("Basic") and 'realm="kconnectd"' in challenge,
          f"GET /ui without credentials: {code}, WWW-Authenticate {challenge!r}")
    code, _, _ = http_auth("GET", follower.url + "/ui", basic(AUTH_USER, "wrong"))
    check(code == 401, f"GET /ui with a wrong password: {code}")
    code, _, _ = http_auth("GET", follower.url + "/ui", good)
    check(code == 200, f"GET /ui with the right password: {code}")

    # How the browser gets the credentials. Chromium headless has no login
    # prompt, so the test hands them over the two ways a browser keeps them
    # after a prompt: CDP Network.setExtraHTTPHeaders puts the Authorization
    # header on every request of the page, and credentials in the URL
    # (http://admin:pw@host/ui) authenticate the navigation and are cached
    # for the origin. For the latter the console builds its fetch URLs from
    # location.origin (api.js sameOrigin): a relative fetch('/cluster') would
    # resolve against a base URL that keeps the userinfo, which fetch()
    # refuses ("Request cannot be constructed from a URL that includes
    # credentials"). A fresh browser profile for each check, so nothing is
    # cached across.
    def browser_with(phase, password):
        br = Browser(work, phase)
        browsers.append(br)
        br.driver.execute_cdp_cmd("Network.enable", {})
        br.driver.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                                  {"headers": {"Authorization": basic(AUTH_USER, password)}})
        return br

    # A wrong password: the navigation itself is refused. With no prompt to
    # fall back on, Chromium headless shows its (empty) error page for the
    # 401, chrome-error://chromewebdata/, and logs the 401: no console, no rows.
    bad = browser_with("auth-wrong", "wrong")
    bad.driver.get(f"http://127.0.0.1:{port}/ui")
    s = bad.wait("the refusal", lambda s: s["href"].startswith("chrome-error:") and s or f"!at {s['href']}")
    bad.collect_logs()
    refused = [e["message"] for e in bad.logs if "401" in e.get("message", "")]
    check(not s["rows"] and s["generation"] is None,
          f"a wrong password shows no console and no worker row ({len(s['rows'])} rows)")
    check(bool(refused), f"the browser reports the 401 refusal of /ui: {refused[:1]}")
    shots["auth-refused"] = bad.shot(shots_dir, "auth-refused")
    time.sleep(1.0)
    check(not bad.snap()["rows"], "still no worker row 1 s later")
    bad.quit()  # its logs still count (quit collects them)

    ok = browser_with("auth-right", AUTH_PASSWORD)
    ok.driver.get(f"http://127.0.0.1:{port}/ui")
    s = ok.wait("both workers through the follower with the right password",
                lambda s: (len(s["rows"]) == 2 and s) or f"!{len(s['rows'])} rows, auth {s['auth_error']!r}, "
                                                          f"banner {s['error_banner']!r}")
    check(sorted(r["id"] for r in s["rows"]) == sorted(w.worker_id for w in auth_workers),
          f"the right password shows both workers through the follower {follower.worker_id}: "
          f"{[r['id'] for r in s['rows']]}")
    check([r["id"] for r in s["rows"] if r["leader"] == "true"] == [cl["served_by"]],
          f"and its leader row is {cl['served_by']}")
    check(s["auth_error"] is None and s["error_banner"] is None, "no auth error, no error banner")
    first = s["last_update"]
    s = ok.wait("a later successful poll", lambda s: (s["last_update"] != first and len(s["rows"]) == 2
                                                      and not s["auth_error"] and s) or "!no new poll")
    check(True, f"the polls keep their credentials (last update {first} -> {s['last_update']})")
    shots["auth-ok"] = ok.shot(shots_dir, "auth-ok")

    # The same through credentials in the URL, with no header from CDP.
    url_br = Browser(work, "auth-url")
    browsers.append(url_br)
    url_br.driver.get(f"http://{AUTH_USER}:{AUTH_PASSWORD}@127.0.0.1:{port}/ui")
    s = url_br.wait("both workers with credentials in the URL",
                    lambda s: (len(s["rows"]) == 2 and s) or f"!{len(s['rows'])} rows, auth {s['auth_error']!r}, "
                                                              f"banner {s['error_banner']!r}")
    check(len(s["rows"]) == 2 and s["auth_error"] is None and s["error_banner"] is None,
          "credentials in the URL (as after the browser's prompt) show both workers, with no error")
    url_br.quit()

    # The password goes stale under a running console: its next data call is
    # refused and the page shows [data-testid=auth-error] with the server's
    # message, and stops polling.
    ok.driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": basic(AUTH_USER, "old")}})
    s = ok.wait("[data-testid=auth-error] after a refused poll",
                lambda s: (s["auth_error"] and s) or f"!auth error {s['auth_error']!r}")
    check("401" in s["auth_error"], f"[data-testid=auth-error] shows the refusal: {s['auth_error']!r}")
    stopped = s["last_update"]
    time.sleep(1.5)
    check(ok.snap()["last_update"] == stopped, f"polling stopped after the 401 (last update stays {stopped})")
    shots["auth-error"] = ok.shot(shots_dir, "auth-error")


def check_console_logs(browsers):
    """g. No SEVERE browser console entry, except the expected 401s (auth phases)."""
    severe = []
    expected = []
    for b in browsers:
        for e in b.logs:
            if e.get("level") != "SEVERE":
                continue
            msg = e.get("message", "")
            if e["phase"].startswith("auth") and "401" in msg:
                expected.append(msg)
            else:
                severe.append(f"[{e['phase']}] {msg}")
    say(f"browser console: {len(expected)} expected 401 entries, {len(severe)} other SEVERE")
    for m in expected:
        say(f"  expected: {m[:200]}")
    check(not severe, "no SEVERE browser console entry" + "".join(f"\n    {m[:300]}" for m in severe))


def main():
    require_browser()
    if len(sys.argv) < 2:
        print("usage: test_console.py KCONNECTD [SCREENSHOT_DIR]")
        return 2
    shots_dir = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None

    def scen(kc, work, cluster):
        d = shots_dir or os.path.join(work, "screenshots")
        os.makedirs(d, exist_ok=True)
        try:
            scenario(kc, work, cluster, d)
        except Abort:
            raise
        except Exception:  # a bug or a driver error: one failed check, with the processes still stopped
            say(f"FAIL: {traceback.format_exc()}")
            failures.append("unexpected exception (traceback above)")
    t = time.monotonic()
    rc = run_main("kc-ui-", scen)
    print(f"wall time {time.monotonic() - t:.1f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
