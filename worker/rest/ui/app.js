// kconnectd web console: entry module (loaded by index.html as /ui/app.js).
//
// Modules (all served flat from /ui/):
//   app.js       state, polling, hash routing, header/nav, confirmation dialog, actions
//   api.js       same-origin fetch helpers (getJson for data, callAction for actions)
//   dom.js       el()/svg() node builders (textContent only, never innerHTML), morph(), formatters
//   cluster.js   #/cluster: worker table + assignment grid (task cells, "moved" highlight)
//   timeline.js  #/timeline: SVG lanes per worker, rebalance bands, task marks, delays, zoom
//   connector.js #/connectors/<name>: state, actions, redacted config, tasks, sparklines, topics, offsets
//
// Data flow: every 1000 ms poll() fetches /cluster?rebalances=100 and
// /connectors?expand=status&expand=info in parallel. ingestCluster() derives
// task owners (task -> worker id), stamps tasks whose owner changed (movedAt,
// for the 5 s "moved" class) and turns successive task_records counters into
// records/s samples (rates, last 60 per task). Then the current view is rebuilt
// from `state` and morphed into <main> in place (same elements stay, so focus,
// open <details>, scroll and test references survive). The connector page's config/topics/offsets are fetched on
// entry and every 5 s. A 401 from any data call shows the auth error and stops
// polling; other failures show the error banner and polling goes on.
// Actions go through the <dialog> showing the exact call, then the result is
// written to [data-testid=action-result] and a poll runs at once.

import { getJson, callAction, enc } from '/ui/api.js';
import { fmtTime, workerId, morph } from '/ui/dom.js';
import { renderCluster, MOVED_MS } from '/ui/cluster.js';
import { renderTimeline } from '/ui/timeline.js';
import { renderConnector } from '/ui/connector.js';

const POLL_MS = 1000;          // poll period
const DETAILS_MS = 5000;       // refresh period of config/topics/offsets on the connector page
const RATE_POINTS = 60;        // sparkline history per task (one per poll)

/** Everything the views render from; kept across polls to detect moves and compute rates. */
const state = {
  cluster: null,          // last good /cluster answer
  connectors: null,       // last good /connectors?expand=status&expand=info answer
  owners: new Map(),      // task id -> worker id owning it now (from /cluster workers[].tasks)
  lastOwner: new Map(),   // task id -> last known owner (kept while unowned, so a reassignment counts as a move)
  movedAt: new Map(),     // task id -> Date.now() ms when its owner last changed
  lastRecords: new Map(), // task id -> {worker, n (records), t (worker now_ms)}
  rates: new Map(),       // task id -> [{t: ms, v: records/s}], oldest first
  details: new Map(),     // connector -> {config, topics, offsets, *Error, at: ms, loading}
  zoom: 'minute',         // timeline zoom: minute | hour | day
  width: 800,             // px available to the timeline
  stopped: false,         // true after a 401: no more polling
  lastSeen: new Map(),    // worker id -> its last good /cluster entry (an unreachable one keeps its lane history)
  departed: new Map(),    // worker id -> {worker: last good entry, left_ms: leader now_ms when it left the group}
};

let pollTimer = 0;
let polling = false;
let pollAgain = false;
let lastNavKey = '';

/** Shorthand for document.getElementById (shell elements only). */
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- routing

/** Parses location.hash into {view: 'cluster'|'timeline'|'connector', name?}; anything unknown is the cluster. */
function route() {
  const h = location.hash || '';
  if (h === '#/timeline') return { view: 'timeline' };
  const m = /^#\/connectors\/(.+)$/.exec(h);
  if (m) {
    try { return { view: 'connector', name: decodeURIComponent(m[1]) }; } catch { /* bad escape: fall back */ }
  }
  return { view: 'cluster' };
}

/** Handles a hash change: re-renders, moves focus to the new heading (screen readers hear the change), loads details. */
function onRoute() {
  updateNav();
  render(true);
  const h = $('main').querySelector('h1');
  if (h) h.focus({ preventScroll: true });
  window.scrollTo(0, 0);
  maybeLoadDetails(true);
}

// ---------------------------------------------------------------- polling

/** One poll: fetches both data routes in parallel, updates state and the page, schedules the next in ~1000 ms. */
async function poll() {
  if (state.stopped) return;
  if (polling) { pollAgain = true; return; }
  polling = true;
  clearTimeout(pollTimer);
  const began = performance.now();
  const [c, k] = await Promise.allSettled([
    getJson('/cluster?rebalances=100'),
    getJson('/connectors?expand=status&expand=info'),
  ]);
  polling = false;
  const failures = [c, k].filter((r) => r.status === 'rejected').map((r) => r.reason);
  const auth = failures.find((e) => e.status === 401);
  if (auth) return authFailed(auth);
  if (c.status === 'fulfilled') ingestCluster(c.value);
  if (c.status === 'fulfilled' && c.value && c.value.partial) failures.push({ message: String(c.value.error || 'partial view') });
  if (k.status === 'fulfilled') state.connectors = k.value && typeof k.value === 'object' ? k.value : {};
  showPollErrors(failures);
  if (!failures.length) $('last-update').textContent = fmtTime(Date.now());
  updateHeader();
  updateNav();
  render(false);
  maybeLoadDetails(false);
  const wait = pollAgain ? 0 : Math.max(0, POLL_MS - (performance.now() - began));
  pollAgain = false;
  pollTimer = setTimeout(poll, wait);
}

/** Runs a poll now (after an action) instead of waiting for the timer. */
function pollNow() {
  clearTimeout(pollTimer);
  poll();
}

/**
 * Takes a /cluster answer: owners (task -> worker id), movedAt for tasks whose owner
 * changed, and records/s samples from task_records deltas over each worker's now_ms (ms).
 */
function ingestCluster(cluster) {
  if (cluster.partial && state.cluster) {
    // The leader did not answer: this worker's fresh entry, the others as last known.
    const fresh = new Map((cluster.workers || []).map((w) => [workerId(w), w]));
    const merged = (state.cluster.workers || []).map((w) => fresh.get(workerId(w)) || { ...w, stale: true });
    for (const [id, w] of fresh) if (!merged.some((m) => workerId(m) === id)) merged.push(w);
    cluster = { ...cluster, workers: merged };
  }
  state.cluster = cluster;
  // Workers that left the group keep their timeline lane while their last
  // rebalance is in the window, so a stop shows where the work came from.
  const present = new Set((cluster.workers || []).map(workerId));
  for (const [id, w] of cluster.partial ? [] : state.lastSeen) {
    if (!present.has(id) && !state.departed.has(id)) state.departed.set(id, { worker: w, left_ms: cluster.now_ms });
  }
  for (const w of cluster.workers || []) {
    const id = workerId(w);
    state.departed.delete(id);
    if (!w.error) state.lastSeen.set(id, w);
  }
  for (const id of state.departed.keys()) state.lastSeen.delete(id);
  const owners = new Map();
  for (const w of cluster.workers || []) {
    if (w.error) continue;
    for (const t of w.tasks || []) owners.set(t, workerId(w));
  }
  const now = Date.now();
  for (const [task, wid] of owners) {
    const prev = state.lastOwner.get(task);
    if (prev !== undefined && prev !== wid) {
      state.movedAt.set(task, now);
      setTimeout(() => render(false), MOVED_MS + 50); // drop the highlight on time even if polls stall
    }
    state.lastOwner.set(task, wid);
  }
  state.owners = owners;

  for (const w of cluster.workers || []) {
    if (w.error || !w.task_records) continue;
    const wid = workerId(w);
    for (const [task, n] of Object.entries(w.task_records)) {
      if (owners.get(task) !== wid || typeof n !== 'number') continue;
      const prev = state.lastRecords.get(task);
      if (prev && prev.worker === wid && prev.t === w.now_ms) continue; // same snapshot again
      // Only a delta on the same worker is a rate: a move or restart resets the counter.
      if (prev && prev.worker === wid && n >= prev.n && w.now_ms > prev.t) {
        const hist = state.rates.get(task) || [];
        hist.push({ t: w.now_ms, v: (n - prev.n) / ((w.now_ms - prev.t) / 1000) });
        if (hist.length > RATE_POINTS) hist.splice(0, hist.length - RATE_POINTS);
        state.rates.set(task, hist);
      }
      state.lastRecords.set(task, { worker: wid, n, t: w.now_ms });
    }
  }
}

/** A 401 from a data call: shows [data-testid=auth-error] with the server's message and stops polling for good. */
function authFailed(err) {
  state.stopped = true;
  clearTimeout(pollTimer);
  const box = $('auth-error');
  const msg = String(err.serverMessage || err.message || '').replace(/\.+$/, '');
  box.textContent = `Not authorised (HTTP 401): ${msg}. ` +
    'Live updates stopped; sign in again (reload the page) to continue.';
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
  $('error-banner').hidden = true;
}

/** Shows the error banner for failed polls (ApiError list) or hides it when the list is empty. */
function showPollErrors(errors) {
  const b = $('error-banner');
  if (!errors.length) { b.hidden = true; b.textContent = ''; return; }
  b.textContent = `Update failed at ${fmtTime(Date.now())}: ${errors.map((e) => e.message).join('; ')}. ` +
    'Showing the last data received; retrying every second.';
  b.hidden = false;
}

// ---------------------------------------------------------------- header, nav, views

/** Updates generation (max over workers) and leader (its worker id) in the header. */
function updateHeader() {
  const c = state.cluster;
  if (!c) return;
  const workers = c.workers || [];
  const gens = workers.map((w) => w.generation).filter((g) => typeof g === 'number');
  if (typeof c.generation === 'number') gens.push(c.generation);
  $('cluster-generation').textContent = gens.length ? String(Math.max(...gens)) : '–';
  const leader = workers.find((w) => w.is_leader === true);
  $('leader').textContent = leader ? workerId(leader) : (c.served_by || '–');
}

/** Rebuilds the connector links when the set of names changes and marks the current route with aria-current. */
function updateNav() {
  const names = Object.keys(state.connectors || {}).sort();
  const key = JSON.stringify(names);
  const ul = $('connector-nav');
  if (key !== lastNavKey) {
    lastNavKey = key;
    ul.replaceChildren(...names.map((n) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `#/connectors/${encodeURIComponent(n)}`;
      a.dataset.testid = 'connector-link';
      a.dataset.connector = n;
      a.textContent = n;
      li.appendChild(a);
      return li;
    }));
  }
  const r = route();
  for (const a of document.querySelectorAll('header nav a')) {
    const cur = a.dataset.route ? a.dataset.route === r.view : (r.view === 'connector' && a.dataset.connector === r.name);
    if (cur) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

/**
 * Brings <main> up to date with the current view. force (route change): a fresh
 * view replaces the old one. Otherwise the new tree is morphed into the live one,
 * so elements keep their identity (focus, open <details>, scroll, test references).
 */
function render(force) {
  const main = $('main');
  if (!state.cluster && !state.connectors) return; // nothing yet: keep "Loading…"
  const r = route();
  const pad = parseFloat(getComputedStyle(main).paddingLeft) || 0;
  state.width = main.clientWidth - 2 * pad;
  const view = r.view === 'timeline' ? renderTimeline(state, actions)
    : r.view === 'connector' ? renderConnector(state, actions, r.name)
      : renderCluster(state, actions);
  view.dataset.view = r.view === 'connector' ? `connector:${r.name}` : r.view;
  const cur = main.firstElementChild;
  if (force || !cur || cur.dataset.view !== view.dataset.view) main.replaceChildren(view);
  else morph(cur, view);
}

/** Loads config, topics and offsets of the routed connector on entry (now=true) or when older than DETAILS_MS. */
async function maybeLoadDetails(now) {
  const r = route();
  if (r.view !== 'connector' || state.stopped) return;
  const name = r.name;
  const det = state.details.get(name) || {};
  if (det.loading || (!now && det.at && Date.now() - det.at < DETAILS_MS)) return;
  det.loading = true;
  state.details.set(name, det);
  const p = `/connectors/${enc(name)}`;
  const [cfg, top, off] = await Promise.allSettled([
    getJson(`/ui/api/connectors/${enc(name)}/config`), getJson(`${p}/topics`), getJson(`${p}/offsets`)]);
  const auth = [cfg, top, off].find((x) => x.status === 'rejected' && x.reason.status === 401);
  if (auth) return authFailed(auth.reason);
  /** Stores one settled result into det[field] (or det[field + 'Error'] as text). */
  const put = (res, field) => {
    if (res.status === 'fulfilled') { det[field] = res.value; det[field + 'Error'] = ''; }
    else det[field + 'Error'] = res.reason.message;
  };
  put(cfg, 'config'); put(top, 'topics'); put(off, 'offsets');
  det.at = Date.now();
  det.loading = false;
  if (route().view === 'connector' && route().name === name) render(false);
}

// ---------------------------------------------------------------- actions and the dialog

let pending = null; // {method, path|pathFn, title, danger, note, restart}

/** What views may do: confirm an action, restart with options, drain a worker, change the timeline zoom. */
const actions = {
  /** Opens the dialog for {method, path, title, danger?, note?}; the call runs only on "Send". */
  confirm: (spec) => openDialog(spec),
  /** Opens the restart dialog for connector name with the includeTasks/onlyFailed checkboxes. */
  restart: (name) => openDialog({ method: 'POST', title: `Restart ${name}`, restart: true,
    pathFn: (inc, only) => `/connectors/${enc(name)}/restart?includeTasks=${inc}&onlyFailed=${only}` }),
  /** Opens the drain dialog for worker id (relayed by the serving worker to that worker's /admin/drain). */
  drain: (id) => openDialog({ method: 'POST', path: `/cluster/workers/${enc(id)}/drain`, title: `Drain worker ${id}`, danger: true,
    note: 'The worker stops taking work and hands its connectors and tasks to the others.' }),
  /** Sets the timeline zoom ('minute' | 'hour' | 'day') and re-renders. */
  setZoom: (z) => { state.zoom = z; render(false); },
};

/** The exact path the pending action will call (restart: from the two checkboxes). */
function pendingPath() {
  if (!pending) return '';
  return pending.pathFn ? pending.pathFn($('opt-include-tasks').checked, $('opt-only-failed').checked) : pending.path;
}

/** Fills and opens the modal confirmation dialog for spec; focus starts on Cancel (safe default). */
function openDialog(spec) {
  pending = spec;
  const d = $('confirm-dialog');
  $('confirm-title').textContent = `${spec.title}?`;
  $('confirm-options').hidden = !spec.restart;
  $('opt-include-tasks').checked = false;
  $('opt-only-failed').checked = false;
  $('confirm-note').hidden = !spec.note;
  $('confirm-note').textContent = spec.note || '';
  $('confirm-ok').className = `btn ${spec.danger ? 'btn-danger' : 'btn-primary'}`;
  $('confirm-ok').textContent = spec.title;
  $('confirm-ok').disabled = false;
  $('confirm-call').textContent = `${spec.method} ${pendingPath()}`;
  if (!d.open) d.showModal();
  $('confirm-cancel').focus();
}

/** Sends the confirmed call, shows "<call> → <status> <text>: <message>" in [data-testid=action-result], polls at once. */
async function runPending() {
  if (!pending) return;
  const spec = pending;
  const path = pendingPath();
  pending = null;
  $('confirm-ok').disabled = true;
  $('confirm-dialog').close();
  const box = $('action-result');
  box.hidden = false;
  box.className = 'alert alert-result';
  box.textContent = `${spec.method} ${path} … sending`;
  const res = await callAction(spec.method, path);
  const head = res.status ? `HTTP ${res.status} ${res.statusText || STATUS_TEXT[res.status] || ''}`.trim() : 'no answer';
  box.textContent = `${spec.method} ${path} → ${head}${res.message ? `: ${res.message}` : ''}`;
  box.className = `alert alert-result ${res.ok ? 'ok' : 'fail'}`;
  if (res.status === 401) authFailed({ serverMessage: res.message, message: res.message });
  for (const det of state.details.values()) det.at = 0; // offsets/config may have changed
  if (res.ok && spec.method === 'DELETE' && /^\/connectors\/[^/]+$/.test(path)) location.hash = '#/cluster';
  pollNow();
  maybeLoadDetails(true);
}

/** Reason phrases for when the browser gives no statusText (HTTP/2). */
const STATUS_TEXT = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Wires the dialog buttons, hash routing and resize; starts polling. */
function start() {
  const d = $('confirm-dialog');
  $('confirm-ok').addEventListener('click', runPending);
  $('confirm-cancel').addEventListener('click', () => { pending = null; d.close(); });
  d.addEventListener('close', () => { pending = null; });
  for (const id of ['opt-include-tasks', 'opt-only-failed']) {
    $(id).addEventListener('change', () => { if (pending) $('confirm-call').textContent = `${pending.method} ${pendingPath()}`; });
  }
  window.addEventListener('hashchange', onRoute);
  let resizeTimer = 0;
  window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => render(false), 150); });
  updateNav();
  poll();
}

start();
