// The #/connectors/<name> view: state, actions, redacted config, tasks (with
// trace and a records/s sparkline), topics and offsets. Config, topics and
// offsets come from state.details (fetched by app.js on entry and every 5 s);
// info.config from /connectors is never shown because it is not redacted.

import { el, svg, stateBadge, fmtRate, scroller } from '/ui/dom.js';
import { enc } from '/ui/api.js';

/** Renders the page of connector `name` from state (status, details, rates); act runs the confirmed actions. */
export function renderConnector(state, act, name) {
  const entry = state.connectors ? state.connectors[name] : undefined;
  const title = el('h1', { id: 'view-title', tabindex: -1 }, el('span', { class: 'muted' }, 'Connector '), name);
  if (state.connectors && !entry) {
    return el('section', { class: 'view', 'data-testid': 'connector-page', 'data-connector': name, 'aria-labelledby': 'view-title' },
      title, el('p', { class: 'notice' }, 'This connector does not exist (any more). ', el('a', { href: '#/cluster' }, 'Back to the cluster')));
  }
  const st = (entry && entry.status) || {};
  const cs = (st.connector && st.connector.state) || 'UNASSIGNED';
  const type = st.type || (entry && entry.info && entry.info.type) || '–';
  const det = state.details.get(name) || {};
  const p = `/connectors/${enc(name)}`;

  return el('section', { class: 'view', 'data-testid': 'connector-page', 'data-connector': name, 'aria-labelledby': 'view-title' },
    title,
    el('dl', { class: 'facts' },
      el('div', {}, el('dt', {}, 'State'), el('dd', {}, stateBadge(cs, { 'data-testid': 'connector-state' }))),
      el('div', {}, el('dt', {}, 'Type'), el('dd', {}, type)),
      el('div', {}, el('dt', {}, 'Worker'), el('dd', { class: 'mono' }, (st.connector && st.connector.worker_id) || '–'))),
    st.connector && st.connector.trace ? traceDetails(`trace-connector`, 'Connector trace', st.connector.trace) : null,
    el('div', { class: 'toolbar', role: 'group', 'aria-label': 'Connector actions' },
      actionButton('pause', 'Pause', 'PUT', `${p}/pause`, act),
      actionButton('resume', 'Resume', 'PUT', `${p}/resume`, act),
      actionButton('stop', 'Stop', 'PUT', `${p}/stop`, act),
      el('button', { type: 'button', class: 'btn', 'data-testid': 'action-restart', onclick: () => act.restart(name) }, 'Restart…'),
      actionButton('reset-offsets', 'Reset offsets', 'DELETE', `${p}/offsets`, act, true,
        cs === 'STOPPED' ? null : 'Only works while the connector is STOPPED; the server will say why otherwise.'),
      actionButton('delete', 'Delete', 'DELETE', p, act, true)),
    el('h2', {}, 'Tasks'),
    taskTable(state, name, st, entry, act),
    el('h2', {}, 'Configuration ', el('span', { class: 'muted small' }, '(secrets shown as [hidden])')),
    configTable(det),
    el('h2', {}, 'Topics'),
    topicsList(det, name),
    el('h2', {}, 'Offsets'),
    offsetsTable(det));
}

/** A button asking to confirm `method path` (e.g. PUT /connectors/c1/pause); danger styles destructive ones; note goes into the dialog. */
function actionButton(id, label, method, path, act, danger, note) {
  return el('button', { type: 'button', class: `btn${danger ? ' btn-danger' : ''}`, 'data-testid': `action-${id}`,
    onclick: () => act.confirm({ method, path, title: label, danger, note }) }, label);
}

/** A <details> with a stack trace in a <pre>; key keeps it open across re-renders. */
function traceDetails(key, summary, trace) {
  return el('details', { class: 'trace', 'data-key': key }, el('summary', {}, summary), el('pre', {}, trace));
}

/** The task table: one [data-testid=task-row] per task (status + info tasks), with rate sparkline, trace, restart. */
function taskTable(state, name, st, entry, act) {
  const byId = new Map();
  for (const t of (entry && entry.info && entry.info.tasks) || []) byId.set(Number(t.task), null);
  for (const t of st.tasks || []) byId.set(Number(t.id), t);
  const ids = [...byId.keys()].sort((a, b) => a - b);
  if (!ids.length) return el('p', { class: 'muted' }, 'No tasks.');
  const table = el('table', { class: 'data', 'aria-label': `Tasks of ${name}` },
    el('thead', {}, el('tr', {}, ['Task', 'State', 'Worker', 'Records/s', 'Trace', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ids.map((n) => {
      const t = byId.get(n) || {};
      const task = `${name}-${n}`;
      const s = t.state || 'UNASSIGNED';
      const owner = state.owners.get(task);
      const hist = state.rates.get(task) || [];
      const last = hist.length ? hist[hist.length - 1].v : null;
      return el('tr', { 'data-testid': 'task-row', 'data-task': task, 'data-state': s },
        el('th', { scope: 'row', class: 'num' }, String(n)),
        el('td', {}, stateBadge(s)),
        el('td', { class: 'mono' }, t.worker_id || owner || '–'),
        el('td', {}, el('div', { class: 'rate-cell' }, sparkline(task, hist), el('span', { class: 'num' }, fmtRate(last)))),
        el('td', {}, t.trace ? traceDetails(`trace-${task}`, 'Show trace', t.trace) : el('span', { class: 'muted' }, '–')),
        el('td', {}, el('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'action-restart-task', 'data-task': task,
          'aria-label': `Restart task ${n}`,
          onclick: () => act.confirm({ method: 'POST', path: `/connectors/${enc(name)}/tasks/${n}/restart`, title: `Restart task ${n}` }) },
        'Restart')));
    })));
  return scroller('tasks', table);
}

/** svg[data-testid=sparkline] of hist ([{t: ms, v: records/s}], oldest first, up to 60 points), 120x28 px. */
function sparkline(task, hist) {
  const W = 120, H = 28;
  const max = Math.max(1, ...hist.map((h) => h.v));
  const pts = hist.map((h, i) => `${(W - 2) - (hist.length - 1 - i) * ((W - 4) / 59)},${H - 2 - (h.v / max) * (H - 4)}`).join(' ');
  const last = hist.length ? hist[hist.length - 1].v : null;
  return svg('svg', { 'data-testid': 'sparkline', 'data-task': task, width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'sparkline',
    role: 'img', 'aria-label': `${task}: ${fmtRate(last)} records/s now, peak ${fmtRate(max)} over the last ${hist.length} s` },
  svg('title', {}, `${task}: ${fmtRate(last)} records/s (peak ${fmtRate(max)})`),
  svg('line', { x1: 0, x2: W, y1: H - 2, y2: H - 2, class: 'spark-base' }),
  hist.length > 1 ? svg('polyline', { points: pts, class: 'spark-line' }) : null);
}

/** The redacted config ([data-testid=connector-config]): key/value rows sorted by key, or the fetch error. */
function configTable(det) {
  const cfg = det.config;
  const rows = cfg ? Object.keys(cfg).sort().map((k) => el('tr', {}, el('th', { scope: 'row', class: 'mono' }, k),
    el('td', { class: `mono${cfg[k] === '[hidden]' ? ' hidden-value' : ''}` }, typeof cfg[k] === 'string' ? cfg[k] : JSON.stringify(cfg[k]))))
    : [el('tr', {}, el('td', { colspan: 2, class: det.configError ? 'err-text' : 'muted' }, det.configError || 'Loading…'))];
  return scroller('config', el('table', { class: 'data kv', 'data-testid': 'connector-config', 'aria-label': 'Configuration' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Key'), el('th', { scope: 'col' }, 'Value'))),
    el('tbody', {}, rows)));
}

/** The topics ([data-testid=connector-topics]) from {name: {topics: [...]}}, or the fetch error. */
function topicsList(det, name) {
  let body;
  if (det.topicsError) body = el('p', { class: 'err-text' }, det.topicsError);
  else if (!det.topics) body = el('p', { class: 'muted' }, 'Loading…');
  else {
    const list = (det.topics[name] && det.topics[name].topics) || [];
    body = list.length ? el('ul', { class: 'pills' }, list.map((t) => el('li', { class: 'mono' }, t))) : el('p', { class: 'muted' }, 'No topics recorded.');
  }
  return el('div', { 'data-testid': 'connector-topics' }, body);
}

/** The offsets ([data-testid=connector-offsets]) from {offsets: [{partition, offset}]}, as compact JSON per row. */
function offsetsTable(det) {
  let body;
  if (det.offsetsError) body = el('p', { class: 'err-text' }, det.offsetsError);
  else if (!det.offsets) body = el('p', { class: 'muted' }, 'Loading…');
  else {
    const list = det.offsets.offsets || [];
    body = list.length ? scroller('offsets', el('table', { class: 'data', 'aria-label': 'Offsets' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Partition'), el('th', { scope: 'col' }, 'Offset'))),
      el('tbody', {}, list.map((o) => el('tr', {}, el('td', { class: 'mono' }, JSON.stringify(o.partition)),
        el('td', { class: 'mono' }, JSON.stringify(o.offset)))))))
      : el('p', { class: 'muted' }, 'No offsets.');
  }
  return el('div', { 'data-testid': 'connector-offsets' }, body);
}
