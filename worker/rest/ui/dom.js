// DOM and formatting helpers. Every server string reaches the page through
// textContent or setAttribute (never innerHTML), so it cannot inject markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Creates an HTML element: el('td', {class: 'x', 'data-testid': 'y'}, child, 'text', ...).
 * attrs: null/undefined values are skipped, `true` sets an empty attribute, keys starting
 * with "on" add event listeners. Children: Nodes, strings/numbers (as text), arrays, null.
 */
export function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** Same as el() but in the SVG namespace (createElementNS). */
export function svg(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Applies attrs and appends children to node (shared by el and svg); returns node. */
function fill(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') setHandler(node, k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

/**
 * Sets node's handler for event type. The listener calls node._on[type] so that
 * morph() can swap in the fresh closure of a re-render without re-adding listeners.
 */
function setHandler(node, type, fn) {
  node._on = node._on || {};
  if (!(type in node._on)) node.addEventListener(type, (e) => node._on[type] && node._on[type](e));
  node._on[type] = fn;
}

/** Identity of an element across renders (tag + identifying data attributes), or null for positional matching. */
function keyOf(node) {
  if (node.nodeType !== 1) return null;
  let key = '';
  for (const a of ['data-testid', 'data-key', 'data-task', 'data-worker-id', 'data-worker', 'data-connector', 'data-scroll-key']) {
    const v = node.getAttribute(a);
    if (v !== null) key += `|${a}=${v}`;
  }
  return key ? node.nodeName + key : null;
}

/**
 * Updates the live tree `from` in place to look like the freshly built `to`
 * (attributes, text, children matched by keyOf or position). Elements that stay
 * keep their identity, so focus, open <details>, scroll positions and references
 * held by a browser test survive the 1 s refresh. Returns the node now in the page.
 */
export function morph(from, to) {
  if (from.nodeType !== to.nodeType || from.nodeName !== to.nodeName) {
    from.replaceWith(to);
    return to;
  }
  if (from.nodeType !== 1) {
    if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
    return from;
  }
  for (const a of [...from.attributes]) {
    // "open" of <details> belongs to the user, not to the data.
    if (!to.hasAttribute(a.name) && !(a.name === 'open' && from.nodeName === 'DETAILS')) from.removeAttribute(a.name);
  }
  for (const a of to.attributes) if (from.getAttribute(a.name) !== a.value) from.setAttribute(a.name, a.value);
  for (const [type, fn] of Object.entries(to._on || {})) setHandler(from, type, fn);
  morphChildren(from, to);
  return from;
}

/** Morphs the children of from into those of to: keyed ones by key, others by position; extra old ones are removed. */
function morphChildren(from, to) {
  const keyed = new Map();
  for (const c of from.childNodes) { const k = keyOf(c); if (k) keyed.set(k, c); }
  const fresh = [...to.childNodes];
  fresh.forEach((n, i) => {
    const k = keyOf(n);
    const here = from.childNodes[i] || null;
    let old = null;
    if (k) { old = keyed.get(k) || null; keyed.delete(k); }
    else if (here && !keyOf(here) && here.nodeName === n.nodeName) old = here;
    if (!old) { from.insertBefore(n, here); return; }
    if (old !== here) from.insertBefore(old, here);
    morph(old, n);
  });
  while (from.childNodes.length > fresh.length) from.lastChild.remove();
}

/** Appends children (Node | string | number | array | null) to node as nodes/text. */
function append(node, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else if (c instanceof Node) node.appendChild(c);
    else node.appendChild(document.createTextNode(String(c)));
  }
}

/** A state badge: text label plus a colour class (state-running, ...), so colour is never the only cue. */
export function stateBadge(state, attrs) {
  const s = String(state || 'UNASSIGNED').toUpperCase();
  return el('span', { class: `badge ${stateClass(s)}`, ...attrs }, s);
}

/** CSS class for a Connect state name ("RUNNING" -> "state-running"). */
export function stateClass(state) {
  return 'state-' + String(state || 'UNASSIGNED').toLowerCase().replace(/[^a-z]/g, '');
}

/** Formats a duration in ms as "850 ms", "12.3 s", "4 m 05 s", "3 h 07 m", "2 d 04 h". */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  const p2 = (n) => String(n).padStart(2, '0'); // zero-pads to 2 digits
  if (m < 60) return `${m} m ${p2(Math.floor(s % 60))} s`;
  if (h < 24) return `${h} h ${p2(m % 60)} m`;
  return `${d} d ${p2(h % 24)} h`;
}

/** Formats a byte count as "41.2 MiB" (binary units). */
export function fmtBytes(b) {
  if (b === null || b === undefined || !Number.isFinite(b)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
  return `${b.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/** Formats a wall-clock time (ms since epoch) as local "HH:MM:SS" (plus ".mmm" if withMs). */
export function fmtTime(ms, withMs) {
  if (ms === null || ms === undefined) return '–';
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, '0'); // zero-pads to w digits
  const t = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  return withMs ? `${t}.${p(d.getMilliseconds(), 3)}` : t;
}

/** Formats a records/s rate: "0", "3.4", "1 250". */
export function fmtRate(r) {
  if (r === null || r === undefined || !Number.isFinite(r)) return '–';
  return r < 10 ? String(Math.round(r * 10) / 10) : Math.round(r).toLocaleString();
}

/** The worker id of a /cluster worker object; unreachable members have only a url, so use its host:port. */
export function workerId(w) {
  if (w.worker_id) return w.worker_id;
  return String(w.url || w.member_id || '?').replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
}

/** Splits a task id "<connector>-<n>" into [connector, n]; the connector name may itself contain '-'. */
export function splitTaskId(task) {
  const i = String(task).lastIndexOf('-');
  return i < 0 ? [String(task), NaN] : [task.slice(0, i), Number(task.slice(i + 1))];
}

/** A horizontally scrolling wrapper for a table (narrow screens); key lets re-renders keep scrollLeft. */
export function scroller(key, table) {
  return el('div', { class: 'table-scroll', 'data-scroll-key': key, tabindex: 0, role: 'region',
    'aria-label': table.getAttribute('aria-label') || key }, table);
}
