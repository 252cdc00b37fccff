// The #/timeline view: an SVG with one lane per worker and, per rebalance of
// that worker, a band from join_started_ms to assignment_applied_ms (or now),
// task stop/start marks, the scheduled delay and drains. The window is the
// last minute/hour/day before the leader's now_ms (one clock for all lanes).

import { el, svg, fmtTime, fmtDuration, workerId } from '/ui/dom.js';

/** Zoom levels: window length in ms. */
export const ZOOMS = { minute: 60e3, hour: 3600e3, day: 86400e3 };

const AXIS_H = 26;   // px above the first lane for tick labels
const LANE_H = 64;   // px per worker lane
const PAD_X = 10;    // px left/right padding of the plot

/** Renders the timeline view (zoom buttons, legend, SVG, a table alternative) for state.zoom and state.width (px). */
export function renderTimeline(state, act) {
  const zoom = ZOOMS[state.zoom] ? state.zoom : 'minute';
  const now = state.cluster ? state.cluster.now_ms : Date.now();
  const workers = laneWorkers(state, now - ZOOMS[zoom]);
  const width = Math.max(300, Math.floor(state.width || 800));
  return el('section', { class: 'view', 'aria-labelledby': 'view-title' },
    el('h1', { id: 'view-title', tabindex: -1 }, 'Rebalance timeline'),
    el('div', { class: 'toolbar', role: 'group', 'aria-label': 'Zoom' },
      Object.keys(ZOOMS).map((z) => el('button', { type: 'button', class: 'btn', 'data-testid': `zoom-${z}`,
        'aria-pressed': String(z === zoom), onclick: () => act.setZoom(z) }, `Last ${z}`))),
    legend(),
    el('div', { class: 'timeline-wrap' }, timelineSvg(workers, now, ZOOMS[zoom], width)),
    rebalanceTable(workers, now - ZOOMS[zoom]));
}

/**
 * The workers to draw, one lane each: the current members (an unreachable one
 * with the rebalances it last reported), then the workers that left the group
 * at or after t0 (ms), marked with left_ms.
 */
function laneWorkers(state, t0) {
  const current = state.cluster ? state.cluster.workers || [] : [];
  const lanes = current.map((w) => {
    const seen = w.error ? state.lastSeen && state.lastSeen.get(workerId(w)) : null;
    return seen ? { ...seen, error: w.error } : w;
  });
  for (const [, d] of state.departed || []) {
    if (d.left_ms >= t0) lanes.push({ ...d.worker, is_leader: false, left_ms: d.left_ms });
  }
  return lanes;
}

/** The legend explaining band/mark shapes (text, not colour alone). */
function legend() {
  const item = (cls, text, glyph) => el('li', {}, el('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }, glyph || ''), text);
  return el('ul', { class: 'legend' },
    item('sw-band', 'rebalance (join → applied)'), item('sw-drain', 'drain'), item('sw-delay', 'scheduled delay'),
    item('sw-stop', 'task stopped', '▼'), item('sw-start', 'task started', '▲'), item('sw-handover', 'task handed over', '╌'),
    item('sw-error', 'assignment error'));
}

/** Picks a tick step (ms) so that span (ms) over plotW (px) gives labels at least ~90 px apart. */
function tickStep(span, plotW) {
  const steps = [1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3];
  const want = span / Math.max(1, plotW / 90);
  return steps.find((s) => s >= want) || steps[steps.length - 1];
}

/** Builds svg[data-testid=timeline]: axis, then one lane per /cluster worker; times in ms, now = leader clock. */
function timelineSvg(workers, now, span, width) {
  const t0 = now - span;
  const plotW = width - 2 * PAD_X;
  const height = AXIS_H + Math.max(1, workers.length) * LANE_H + 4;
  /** Maps a wall-clock time (ms) to an x coordinate (px), clamped to the plot. */
  const x = (t) => PAD_X + Math.min(plotW, Math.max(0, ((t - t0) / span) * plotW));
  const root = svg('svg', { 'data-testid': 'timeline', width, height, viewBox: `0 0 ${width} ${height}`,
    role: 'img', 'aria-label': `Rebalance timeline, ${workers.length} workers, ${fmtTime(t0)} to ${fmtTime(now)}; the table below lists the same rebalances` });
  root.appendChild(svg('title', {}, 'Rebalance timeline'));
  const defs = svg('defs', {},
    svg('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      svg('rect', { width: 6, height: 6, class: 'hatch-bg' }), svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line' })));
  root.appendChild(defs);

  // Axis: ticks at round local times, grid lines through all lanes.
  const step = tickStep(span, plotW);
  const tzOffset = new Date(now).getTimezoneOffset() * 60e3; // align ticks to local round times
  const axis = svg('g', { class: 'axis' });
  for (let t = Math.ceil((t0 - tzOffset) / step) * step + tzOffset; t <= now; t += step) {
    const xx = x(t);
    axis.appendChild(svg('line', { x1: xx, x2: xx, y1: AXIS_H - 6, y2: height, class: 'gridline' }));
    const anchor = xx < 40 ? 'start' : xx > width - 40 ? 'end' : 'middle';
    axis.appendChild(svg('text', { x: xx, y: AXIS_H - 10, 'text-anchor': anchor, class: 'tick' },
      step < 60e3 ? fmtTime(t) : fmtTime(t).slice(0, 5)));
  }
  axis.appendChild(svg('line', { x1: PAD_X + plotW, x2: PAD_X + plotW, y1: AXIS_H - 6, y2: height, class: 'nowline' },
    svg('title', {}, `now ${fmtTime(now, true)}`)));
  root.appendChild(axis);

  workers.forEach((w, i) => root.appendChild(lane(w, AXIS_H + i * LANE_H, { t0, now, x, plotW })));
  root.appendChild(handOvers(workers, { t0, now, x }));
  return root;
}

/**
 * Dashed links from a task's stop on one lane to its start on another: the
 * task was handed over. A start counts when it is in the same generation
 * (kconnectd's hand-over: the leader gives the task to its new owner in the
 * round that revokes it) or the next one (plain cooperative rebalancing),
 * and not before the stop. Times in ms; win.x maps a time to px.
 */
function handOvers(workers, win) {
  const g = svg('g', { class: 'handovers' });
  const stops = [], starts = [];
  workers.forEach((w, i) => {
    const id = workerId(w), y0 = AXIS_H + i * LANE_H;
    for (const r of w.rebalances || []) {
      const base = r.sync_done_ms ?? r.join_started_ms;
      const took = new Map((r.task_stops || []).map((s) => [s.task, s.stop_ms || 0]));
      if (base !== null && base !== undefined) {
        for (const t of (r.revoked && r.revoked.tasks) || []) stops.push({ task: t, id, y0, gen: r.generation, at: base + (took.get(t) || 0) });
      }
      if (r.assignment_applied_ms !== null && r.assignment_applied_ms !== undefined) {
        for (const t of (r.assigned && r.assigned.tasks) || []) starts.push({ task: t, id, y0, gen: r.generation, at: r.assignment_applied_ms });
      }
    }
  });
  for (const s of stops) {
    const to = starts.filter((t) => t.task === s.task && t.id !== s.id && (t.gen === s.gen || t.gen === s.gen + 1))
      .sort((a, b) => a.at - b.at)[0];
    if (!to || Math.max(s.at, to.at) < win.t0) continue;
    const x1 = win.x(s.at), y1 = s.y0 + 26, x2 = win.x(to.at), y2 = to.y0 + 48;
    g.appendChild(svg('line', { 'data-testid': 'task-handover', 'data-task': s.task, 'data-from': s.id, 'data-to': to.id,
      x1, y1, x2, y2, class: 'handover' },
    svg('title', {}, `${s.task} handed over from ${s.id} to ${to.id}: stopped ${fmtTime(s.at, true)}, ` +
      `started ${fmtTime(to.at, true)} (${fmtDuration(Math.max(0, to.at - s.at))} without an owner)`)));
  }
  return g;
}

/** One worker lane (g[data-testid=timeline-lane]) at vertical offset y0 (px), with its rebalances in the window. */
function lane(w, y0, win) {
  const id = workerId(w);
  const g = svg('g', { 'data-testid': 'timeline-lane', 'data-worker': id, class: 'lane' });
  g.appendChild(svg('rect', { x: 0, y: y0, width: win.plotW + 2 * PAD_X, height: LANE_H - 2, class: 'lane-bg' }));
  g.appendChild(svg('text', { x: PAD_X, y: y0 + 14, class: 'lane-label' },
    id + (w.is_leader ? ' (leader)' : '') + (w.error ? ` — unreachable: ${w.error}` : '') +
      (w.left_ms ? ` — left the group at ${fmtTime(w.left_ms)}` : w.draining ? ' — draining' : '')));
  for (const r of w.rebalances || []) {
    const start = r.join_started_ms ?? r.sync_done_ms ?? r.assignment_applied_ms;
    if (start === null || start === undefined) continue;
    const end = r.assignment_applied_ms ?? win.now;
    const delayEnd = r.delay_ms > 0 && r.sync_done_ms ? r.sync_done_ms + r.delay_ms : -Infinity;
    if (Math.max(end, delayEnd) < win.t0) continue; // entirely before the window
    g.appendChild(band(r, id, y0, start, end, win));
  }
  return g;
}

/** One rebalance: the band (with a <title> of details), its scheduled delay and task marks, as a <g>. */
function band(r, id, y0, start, end, win) {
  const drain = /drain/i.test(r.reason || '');
  const open = r.assignment_applied_ms === null || r.assignment_applied_ms === undefined;
  const g = svg('g', { class: 'rebalance', 'data-key': `${id}|${r.generation}|${start}` });
  const x1 = win.x(start), x2 = Math.max(win.x(end), x1 + 3); // at least 3 px so short ones stay visible
  const cls = ['band', drain && 'band-drain', open && 'band-open', r.error && 'band-error'].filter(Boolean).join(' ');
  g.appendChild(svg('rect', { 'data-testid': 'rebalance-band', 'data-worker': id, 'data-generation': r.generation,
    'data-reason': r.reason || '', x: x1, y: y0 + 28, width: x2 - x1, height: 18, rx: 2, class: cls },
  svg('title', {}, bandTitle(r, id))));

  if (r.delay_ms > 0 && r.sync_done_ms !== null && r.sync_done_ms !== undefined) {
    const d1 = win.x(r.sync_done_ms), d2 = Math.max(win.x(r.sync_done_ms + r.delay_ms), d1 + 3);
    g.appendChild(svg('rect', { 'data-testid': 'scheduled-delay', 'data-worker': id, 'data-generation': r.generation,
      x: d1, y: y0 + 32, width: d2 - d1, height: 10, class: 'delay' },
    svg('title', {}, `${id} gen ${r.generation}: scheduled delay ${fmtDuration(r.delay_ms)} from ${fmtTime(r.sync_done_ms, true)}`)));
  }

  // Stops: revoked tasks, stopped after the assignment arrived (sync_done_ms); stop_ms says how long each took.
  const stops = new Map();
  for (const t of (r.revoked && r.revoked.tasks) || []) stops.set(t, null);
  for (const s of r.task_stops || []) stops.set(s.task, s);
  const stopBase = r.sync_done_ms ?? start;
  [...stops].forEach(([task, s], i) => {
    const t = stopBase + (s ? s.stop_ms || 0 : 0);
    if (t < win.t0) return;
    const cx = win.x(t) + i * 4; // small offset so simultaneous marks stay distinguishable
    const text = `${task} stopped at ${fmtTime(t, true)}` + (s ? ` (took ${fmtDuration(s.stop_ms)}${s.timed_out ? ', timed out' : ''})` : '');
    g.appendChild(svg('path', { 'data-testid': 'task-stop', 'data-task': task, 'data-worker': id,
      d: `M${cx - 4},${y0 + 18} L${cx + 4},${y0 + 18} L${cx},${y0 + 26} Z`, class: `mark-stop${s && s.timed_out ? ' timed-out' : ''}` },
    svg('title', {}, text)));
  });
  // Starts: newly assigned tasks, running once the assignment was applied.
  if (!open) {
    ((r.assigned && r.assigned.tasks) || []).forEach((task, i) => {
      if (r.assignment_applied_ms < win.t0) return;
      const cx = win.x(r.assignment_applied_ms) + i * 4;
      g.appendChild(svg('path', { 'data-testid': 'task-start', 'data-task': task, 'data-worker': id,
        d: `M${cx - 4},${y0 + 56} L${cx + 4},${y0 + 56} L${cx},${y0 + 48} Z`, class: 'mark-start' },
      svg('title', {}, `${task} started at ${fmtTime(r.assignment_applied_ms, true)}`)));
    });
  }
  return g;
}

/** The tooltip text of a band: generation, reason, protocol, phase times (ms), assigned/revoked, delay, error. */
function bandTitle(r, id) {
  /** Lists {connectors, tasks} as "a, b-0" ("none" if empty). */
  const list = (o) => [...((o && o.connectors) || []), ...((o && o.tasks) || [])].join(', ') || 'none';
  return [
    `${id} — generation ${r.generation}${r.is_leader ? ' (leader)' : ''}`,
    `reason: ${r.reason || 'unknown'}`,
    `protocol: ${r.protocol || '–'}, config offset ${r.config_offset ?? '–'}`,
    `join ${fmtTime(r.join_started_ms, true)} → sync ${fmtTime(r.sync_done_ms, true)} → applied ${fmtTime(r.assignment_applied_ms, true)}`,
    `join→sync ${fmtDuration(r.join_to_sync_ms)}, sync→applied ${fmtDuration(r.sync_to_applied_ms)}`,
    `assigned: ${list(r.assigned)}`,
    `revoked: ${list(r.revoked)}`,
    r.delay_ms > 0 ? `scheduled delay: ${fmtDuration(r.delay_ms)}` : null,
    r.error ? `assignment error ${r.error}` : null,
  ].filter(Boolean).join('\n');
}

/** A collapsible table with the same rebalances (newest first) for keyboard/screen-reader users and small screens. */
function rebalanceTable(workers, t0) {
  const rows = [];
  for (const w of workers) for (const r of w.rebalances || []) {
    const end = r.assignment_applied_ms ?? Infinity;
    if (end >= t0) rows.push({ id: workerId(w), r });
  }
  rows.sort((a, b) => (b.r.join_started_ms || 0) - (a.r.join_started_ms || 0));
  /** Lists the tasks of {connectors, tasks} as "c-0, c-1". */
  const list = (o) => ((o && o.tasks) || []).join(', ') || '–';
  const table = el('table', { class: 'data', 'aria-label': 'Rebalances in the window' },
    el('thead', {}, el('tr', {}, ['Worker', 'Gen', 'Reason', 'Join', 'Duration', 'Delay', 'Assigned tasks', 'Revoked tasks']
      .map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map(({ id, r }) => el('tr', {},
      el('td', { class: 'mono' }, id), el('td', { class: 'num' }, String(r.generation)), el('td', {}, r.reason || '–'),
      el('td', { class: 'mono' }, fmtTime(r.join_started_ms, true)),
      el('td', { class: 'num' }, r.assignment_applied_ms && r.join_started_ms ? fmtDuration(r.assignment_applied_ms - r.join_started_ms) : 'in progress'),
      el('td', { class: 'num' }, r.delay_ms > 0 ? fmtDuration(r.delay_ms) : '–'),
      el('td', {}, list(r.assigned)), el('td', {}, list(r.revoked))))));
  return el('details', { 'data-key': 'rebalance-table' }, el('summary', {}, `Rebalances in this window as a table (${rows.length})`),
    rows.length ? el('div', { class: 'table-scroll', 'data-scroll-key': 'rebalances' }, table) : el('p', { class: 'muted' }, 'None.'));
}
