// The #/cluster view: the worker table (one row per group member) and the
// assignment grid (workers x connectors, one cell per task, coloured by the
// status-topic state, "moved" for 5 s after its owner changed).

import { el, stateClass, fmtDuration, fmtBytes, workerId, splitTaskId, scroller } from '/ui/dom.js';

/** How long (ms) a task cell keeps the "moved" class after its owner changed. */
export const MOVED_MS = 5000;

/** Renders the whole cluster view from state (see app.js) into a new <section>. */
export function renderCluster(state, act) {
  const workers = state.cluster ? state.cluster.workers || [] : [];
  return el('section', { class: 'view', 'aria-labelledby': 'view-title' },
    el('h1', { id: 'view-title', tabindex: -1 }, 'Cluster'),
    el('h2', {}, 'Workers'),
    workers.length ? scroller('workers', workerTable(workers, act)) : el('p', { class: 'muted' }, 'No workers yet.'),
    el('h2', {}, 'Assignment'),
    el('p', { class: 'muted small' }, 'Rows are workers, columns connectors; each chip is a task (number and state). ',
      'A highlighted chip moved to this worker in the last 5 s.'),
    assignmentGrid(state));
}

/** The worker table: one [data-testid=worker-row] per /cluster worker, with a drain button each. */
function workerTable(workers, act) {
  const head = ['Worker', 'URL', 'Health', 'Generation', 'Protocol', 'Tasks', 'Uptime', 'RSS', 'Threads', 'Actions'];
  return el('table', { class: 'data', 'aria-label': 'Workers' },
    el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, workers.map((w) => workerRow(w, act))));
}

/** One worker row; an unreachable member ({url, member_id, error}) keeps every cell, with "–" and the error. */
function workerRow(w, act) {
  const id = workerId(w);
  const leader = w.is_leader === true;
  const down = !!w.error;
  const health = w.health || {};
  const healthText = down ? 'unreachable' : (health.status || 'unknown');
  const tasks = Array.isArray(w.tasks) ? w.tasks : [];
  return el('tr', { 'data-testid': 'worker-row', 'data-worker-id': id, 'data-leader': String(leader),
    class: down ? 'row-error' : null },
  el('th', { scope: 'row' }, el('span', { class: 'mono' }, id),
    leader ? el('span', { class: 'tag tag-leader' }, 'leader') : null,
    w.draining ? el('span', { class: 'tag tag-drain' }, 'draining') : null),
  el('td', { 'data-testid': 'worker-url', class: 'mono' }, w.url || '–'),
  el('td', { 'data-testid': 'worker-health', class: 'health' },
    el('span', { class: `badge health-${healthText.toLowerCase().replace(/[^a-z]/g, '')}`,
      title: down ? w.error : [health.message, health.worker_state].filter(Boolean).join(' · ') || null },
    healthText),
    down ? el('div', { class: 'small err-text' }, w.error)
      : (health.message ? el('div', { class: 'small muted' }, health.message) : null)),
  el('td', { 'data-testid': 'worker-generation', class: 'num' }, down ? '–' : String(w.generation ?? '–')),
  el('td', { 'data-testid': 'worker-protocol' }, down ? '–' : (w.protocol || '–')),
  el('td', { 'data-testid': 'worker-tasks', class: 'num', title: tasks.join(', ') || null }, down ? '–' : String(tasks.length)),
  el('td', { 'data-testid': 'worker-uptime', class: 'num' }, down ? '–' : fmtDuration(w.uptime_ms)),
  el('td', { 'data-testid': 'worker-rss', class: 'num' }, down ? '–' : fmtBytes(w.rss_bytes)),
  el('td', { 'data-testid': 'worker-threads', class: 'num' }, down ? '–' : String(w.threads ?? '–')),
  el('td', {}, el('button', { type: 'button', class: 'btn btn-warn', 'data-testid': 'action-drain', 'data-worker-id': id,
    'aria-label': `Drain worker ${id}`, onclick: () => act.drain(id) }, 'Drain')));
}

/**
 * Collects the grid model: connector names (sorted), tasks per connector ("c-n", by n),
 * owner of each task (worker id from /cluster) and its state (status topic, "UNASSIGNED" if none).
 */
export function gridModel(state) {
  const owners = state.owners; // Map task -> worker id
  const status = state.connectors || {};
  const names = new Set(Object.keys(status));
  const tasks = new Map(); // connector -> Set(n)
  /** Records connector c and (if a number) its task n. */
  const add = (c, n) => { if (!tasks.has(c)) tasks.set(c, new Set()); if (Number.isFinite(n)) tasks.get(c).add(n); };
  for (const [c, v] of Object.entries(status)) {
    add(c, NaN);
    for (const t of (v.status && v.status.tasks) || []) add(c, Number(t.id));
    for (const t of (v.info && v.info.tasks) || []) add(c, Number(t.task));
  }
  for (const task of owners.keys()) { const [c, n] = splitTaskId(task); names.add(c); add(c, n); }
  /** Status-topic state of task n of connector c, "UNASSIGNED" when it has none. */
  const stateOf = (c, n) => {
    const t = ((status[c] && status[c].status && status[c].status.tasks) || []).find((x) => Number(x.id) === n);
    return (t && t.state) || 'UNASSIGNED';
  };
  const connectors = [...names].sort();
  return { connectors, tasks: (c) => [...(tasks.get(c) || [])].sort((a, b) => a - b), stateOf };
}

/** The assignment grid table: rows = workers (+ "not assigned" when some task has no owner), columns = connectors. */
function assignmentGrid(state) {
  const workers = state.cluster ? state.cluster.workers || [] : [];
  const model = gridModel(state);
  const rows = workers.map((w) => ({ id: workerId(w), label: workerId(w), w }));
  const orphan = [];
  for (const c of model.connectors) for (const n of model.tasks(c)) if (!state.owners.has(`${c}-${n}`)) orphan.push(`${c}-${n}`);
  if (orphan.length) rows.push({ id: '', label: 'not assigned', w: null });
  const now = Date.now();
  const status = state.connectors || {};

  /** One grid cell: the task chips of connector c owned by row r, plus the connector instance if r owns it. */
  const cell = (r, c) => {
    const chips = [];
    if (r.w && Array.isArray(r.w.connectors) && r.w.connectors.includes(c)) {
      const cs = (status[c] && status[c].status && status[c].status.connector && status[c].status.connector.state) || 'UNASSIGNED';
      chips.push(el('span', { class: `chip conn-chip ${stateClass(cs)}`, title: `connector ${c} ${cs} on ${r.id}` },
        el('span', { class: 'chip-num' }, 'conn'), el('span', { class: 'chip-state' }, cs)));
    }
    for (const n of model.tasks(c)) {
      const task = `${c}-${n}`;
      if ((state.owners.get(task) || '') !== r.id) continue;
      const st = model.stateOf(c, n);
      const moved = (state.movedAt.get(task) || -Infinity) > now - MOVED_MS;
      const label = `${task} ${st} on ${r.id || 'no worker'}`;
      chips.push(el('a', { href: `#/connectors/${encodeURIComponent(c)}`, 'data-testid': 'task-cell', 'data-task': task,
        'data-state': st, 'data-worker': r.id, class: `chip ${stateClass(st)}${moved ? ' moved' : ''}`,
        title: label, 'aria-label': label }, el('span', { class: 'chip-num' }, String(n)), el('span', { class: 'chip-state' }, st)));
    }
    return el('td', { 'data-label': c }, el('div', { class: 'chips' }, chips.length ? chips : el('span', { class: 'muted small' }, 'none')));
  };

  const table = el('table', { class: 'grid', 'data-testid': 'assignment-grid', 'aria-label': 'Task assignment by worker and connector' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Worker'),
      model.connectors.map((c) => el('th', { scope: 'col' }, el('a', { href: `#/connectors/${encodeURIComponent(c)}` }, c))))),
    el('tbody', {}, rows.map((r) => el('tr', { 'data-worker': r.id },
      el('th', { scope: 'row', class: 'mono' }, r.label), model.connectors.map((c) => cell(r, c))))));
  return el('div', { class: 'grid-wrap', 'data-scroll-key': 'grid' }, table);
}
