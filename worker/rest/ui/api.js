// Same-origin data calls. Paths are root-relative ("/cluster"), never absolute
// URLs, so the console works behind whatever host:port served it; the browser
// adds cached Basic credentials itself.

/** An HTTP or network failure: status is the HTTP status (0 = network/timeout), message is for the operator. */
/**
 * The absolute URL of a root-relative path on this origin. A page opened as
 * http://user:pw@host/ui has the credentials in its base URL, and fetch()
 * refuses a relative URL resolved against it; location.origin has none (the
 * browser still sends the cached Basic credentials).
 */
function sameOrigin(path) {
  return new URL(path, window.location.origin).href;
}

export class ApiError extends Error {
  /** status: HTTP status or 0; message: a description with the path; serverMessage: the body's "message" (or text). */
  constructor(status, message, serverMessage = '') {
    super(message);
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

/** Percent-encodes one path segment (connector name, worker id). */
export const enc = (s) => encodeURIComponent(String(s));

/**
 * GETs path and parses JSON. Resolves to the parsed body; rejects with ApiError
 * (401 included) on a non-2xx answer, bad JSON, network error or after timeoutMs (default 5000 ms).
 */
export async function getJson(path, timeoutMs = 5000) {
  let res;
  try {
    res = await fetch(sameOrigin(path), { headers: { Accept: 'application/json' }, cache: 'no-store',
      signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw new ApiError(0, `${path}: ${e.name === 'TimeoutError' ? 'timed out' : 'network error'}`);
  }
  const text = await res.text();
  if (!res.ok) {
    const msg = errorMessage(text, res.statusText);
    throw new ApiError(res.status, `${path}: HTTP ${res.status} ${msg}`, msg);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(res.status, `${path}: the answer is not JSON`);
  }
}

/**
 * Sends an action (method + path, no body). Always resolves to
 * {ok, status, statusText, message}: message is the error's "message", or a short
 * summary of a successful body ("" for 204). Network failures give status 0.
 */
export async function callAction(method, path) {
  let res;
  try {
    res = await fetch(sameOrigin(path), { method, headers: { Accept: 'application/json' }, cache: 'no-store',
      signal: AbortSignal.timeout(30000) });
  } catch (e) {
    return { ok: false, status: 0, statusText: '', message: `network error (${e.name})` };
  }
  const text = await res.text();
  const message = res.ok ? successMessage(text) : errorMessage(text, res.statusText);
  return { ok: res.ok, status: res.status, statusText: res.statusText, message };
}

/** Extracts the "message" of a Connect error body {"error_code","message"}, else the raw text (trimmed) or fallback. */
function errorMessage(text, fallback) {
  try {
    const j = JSON.parse(text);
    if (j && typeof j.message === 'string') return j.message;
  } catch { /* not JSON: use the text */ }
  return (text || '').trim().slice(0, 300) || fallback || '';
}

/** Summarises a 2xx body: its "message" if any, else compact JSON cut at 300 chars ("" when empty). */
function successMessage(text) {
  if (!text) return '';
  try {
    const j = JSON.parse(text);
    if (j && typeof j.message === 'string') return j.message;
    return JSON.stringify(j).slice(0, 300);
  } catch {
    return text.trim().slice(0, 300);
  }
}
