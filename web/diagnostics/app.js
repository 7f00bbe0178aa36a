// @ts-check
// Space diagnostics page: plain DOM, no framework, same-origin requests only.
// Every data call goes through the service's trust guard like any client: in the app the
// Electron host adds the launch token to each request; in a browser a service started with
// SPACE_TOKEN needs the token, given once as /diagnostics#token=<token> (kept in this tab's
// sessionStorage, removed from the address bar) or typed into the banner.
'use strict';

const TOKEN_KEY = 'space-token';
const USAGE_DAYS = 30;
const SESSION_LIMIT = 20;
const MESSAGE_LIMIT = 20;
/** @type {ReadonlyArray<{ name: import('../../service/ids.js').AgentName, cli: string, label: string, kind: string }>} */
const RUNTIMES = [
  { name: 'clia_code', cli: 'clia', label: 'clia', kind: 'Claude Code CLI' },
  { name: 'clib', cli: 'clib', label: 'clib', kind: 'Codex CLI' },
  { name: 'runtimea', cli: 'runtimea', label: 'runtimea', kind: 'agent gateway' },
];

/* ---------- the answers this page reads ----------
 * Types for `npm run typecheck` (tsconfig.web.json); the browser ignores them. Where the
 * service declares an answer's type, the page uses that declaration, so a renamed field
 * fails the type-check instead of the page.
 */

/** @typedef {import('../../service/sessions/types.js').Session} Session */
/** @typedef {import('../../service/sessions/types.js').Message} Message */
/** @typedef {import('../../service/usage/aggregate.js').UsageReport} UsageReport */
/** @typedef {{ bin: string, path: string | null }} CliPath */
/**
 * GET /health (status/routes.ts `health`; the spec leaves its fields open).
 * @typedef {{ status: string, stage: string, version: string, pid: number, node: string, host_kind: string,
 *   uptime_s: number, listen: { host: string, port: number }, upstream_url: string | null, agent_name: string,
 *   projects_root: string, clis: Record<string, CliPath | undefined>, active_sessions: number, child_processes: number }} Health
 */
/**
 * GET /space-auth/state (auth/state.ts `sanitized()` plus `upstream_configured`).
 * @typedef {{ signed_in: boolean, source: 'poll_token' | 'api_key' | 'none', user_id: string | null, expires_at: string | null,
 *   upstream_configured: boolean }} AuthStateAnswer
 */
/** @typedef {{ authorize_url: string, auth_session_id: string }} SignInStart POST /space-auth/start */
/** @typedef {{ status: 'pending' | 'approved' | 'expired' }} SignInStatus GET /space-auth/status/{id} */
/**
 * GET /debug/ai-auth (config-api/ai-auth.ts `AiAuthSnapshot`).
 * @typedef {{ env_file: { path: string, exists: boolean }, backends: Record<string, Array<{ from: string, to: string, set: boolean }> | undefined> }} AiAuth
 */
/** @typedef {{ authenticated: boolean, method?: string, expires_at?: string }} ClibStatus GET /api/clib/status */
/** @typedef {{ roots: Record<string, string>, default: string }} WorkspaceConfig GET /api/config/workspace */
/** @typedef {{ sessions: Session[], total: number }} SessionsPage GET /api/sessions */
/** @typedef {{ messages: Message[], total: number, offset: number }} MessagesPage GET /api/messages/{id} */
/** @typedef {{ stream_id: string, session_id: string | null }} PromptAccepted POST /api/chat/prompt */
/** @typedef {{ event: string, data: any }} Frame one SSE frame of /api/chat/stream/{id} */
/** @typedef {{ error?: string, finish_reason?: string, session_id?: string }} Outcome how a turn ended */

/* ---------- requests ---------- */

class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} detail
   */
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

function takeTokenFromAddress() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(/** @type {string} */ (match[1])));
  history.replaceState(null, '', location.pathname + location.search);
}

/** @returns {Record<string, string>} */
function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { 'X-Space-Token': token } : {};
}

/**
 * @param {string} path
 * @param {{ method?: string, body?: unknown }} [request]
 * @returns {Promise<any>} the answer's JSON; callers name its type
 */
async function api(path, { method = 'GET', body } = {}) {
  /** @type {Record<string, string>} */
  const headers = { ...authHeaders(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (res.status === 401) showTokenBanner();
  if (!res.ok) throw new ApiError(res.status, (data && typeof data.detail === 'string' && data.detail) || `HTTP ${res.status}`);
  return data;
}

/* ---------- DOM helpers (text only: nothing from the service becomes markup) ---------- */

/** @typedef {Node | string | number | boolean | null | undefined} Child */

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElement}
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = /** @type {string} */ (value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of present(children)) node.append(child instanceof Node ? child : String(child));
  return node;
}

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of present(children)) node.append(child instanceof Node ? child : String(child));
  return node;
}

/**
 * Children to show: `undefined`, `null` and `false` stand for "nothing here" and are left out.
 * @template T
 * @param {T[]} children
 * @returns {Array<Exclude<T, undefined | null | false>>}
 */
function present(children) {
  return /** @type {any} */ (children.flat().filter((child) => child !== undefined && child !== null && child !== false));
}

/** @param {string} id */
function bodyOf(id) {
  return /** @type {HTMLElement} */ (document.querySelector(`#${id} .body`));
}

/**
 * @param {string} id
 * @param {...(Node | string | null)} children
 */
function fill(id, ...children) {
  const body = bodyOf(id);
  body.removeAttribute('data-state');
  body.replaceChildren(...present(children));
}

/** A card's failure: a missing API (404) is said plainly, anything else as the service's detail. */
/**
 * @param {string} id
 * @param {unknown} err
 * @param {string} what
 */
function failed(id, err, what) {
  if (err instanceof ApiError && err.status === 404) {
    fill(id, el('p', { class: 'unavailable' }, `${what} is not available in this build of the service (${err.message}).`));
  } else if (err instanceof ApiError && err.status === 401) {
    fill(id, el('p', { class: 'error' }, 'Needs the service token (see the banner above).'));
  } else {
    fill(id, el('p', { class: 'error' }, err instanceof Error ? err.message : String(err)));
  }
}

/** @param {Array<[string, Child]>} pairs */
function kv(pairs) {
  return el('dl', { class: 'kv' }, pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

/** @param {unknown} n */
const money = (n) => `$${(Number(n) || 0).toFixed(2)}`;
/** @param {number} n */
const moneyFine = (n) => ((Number(n) || 0) < 0.1 && n > 0 ? `$${Number(n).toFixed(4)}` : money(n));
/** @param {unknown} n */
const integer = (n) => (Number(n) || 0).toLocaleString('en-US');

/** @param {string} iso */
function when(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 7 * 86400) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** @param {unknown} seconds */
function duration(seconds) {
  const s = Number(seconds) || 0;
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/* ---------- token banner ---------- */

function showTokenBanner() {
  /** @type {HTMLElement} */ (document.getElementById('token-banner')).hidden = false;
}

function wireTokenForm() {
  /** @type {HTMLElement} */ (document.getElementById('token-form')).addEventListener('submit', (event) => {
    event.preventDefault();
    const value = /** @type {HTMLInputElement} */ (document.getElementById('token-input')).value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    /** @type {HTMLInputElement} */ (document.getElementById('token-input')).value = '';
    /** @type {HTMLElement} */ (document.getElementById('token-banner')).hidden = true;
    void loadAll();
  });
}

/* ---------- service health ---------- */

/** @type {Health | undefined} */
let health;

async function loadHealth() {
  const pill = /** @type {HTMLElement} */ (document.getElementById('service-pill'));
  try {
    health = /** @type {Health} */ (await api('/health'));
    pill.className = `pill ${health.status === 'ok' ? 'pill-ok' : 'pill-bad'}`;
    pill.textContent = `${health.status === 'ok' ? 'Running' : health.status} · v${health.version}`;
    fill(
      'health',
      kv([
        ['Status', el('span', { class: `tag ${health.status === 'ok' ? 'ok' : 'bad'}` }, `${health.status} · ${health.stage}`)],
        ['Version', health.version],
        ['Host', health.host_kind === 'electron' ? 'desktop app' : 'headless'],
        ['Listening', `${health.listen.host}:${health.listen.port}`],
        ['Uptime', duration(health.uptime_s)],
        ['Open streams', integer(health.active_sessions)],
        ['Child processes', integer(health.child_processes)],
        ['Node', health.node],
      ]),
    );
  } catch (err) {
    pill.className = 'pill pill-bad';
    pill.textContent = err instanceof ApiError && err.status === 401 ? 'Token needed' : 'Unreachable';
    failed('health', err, 'Health');
  }
}

/* ---------- sign-in ---------- */

const bridge = window.space && window.space.signIn ? window.space : undefined;
let signInRunning = false;

async function loadSignIn() {
  const start = /** @type {HTMLButtonElement} */ (document.getElementById('signin-start'));
  const logout = /** @type {HTMLElement} */ (document.getElementById('signin-logout'));
  try {
    const state = /** @type {AuthStateAnswer} */ (await api('/space-auth/state'));
    /** @type {Array<[string, Child]>} */
    const rows = [
      ['State', state.signed_in ? el('span', { class: 'tag ok' }, 'signed in') : state.source === 'api_key' ? el('span', { class: 'tag ok' }, 'API key') : el('span', { class: 'tag warn' }, 'signed out')],
      ['Upstream', state.upstream_configured ? 'configured' : 'not configured'],
    ];
    if (state.user_id) rows.push(['User', state.user_id]);
    if (state.expires_at) rows.push(['Expires', new Date(state.expires_at).toLocaleString()]);
    fill('signin', kv(rows));
    const usable = state.upstream_configured && state.source !== 'api_key';
    start.disabled = !usable || signInRunning;
    if (!signInRunning) progress(!state.upstream_configured ? 'Sign-in is off: SPACE_UPSTREAM_URL is not set.' : state.source === 'api_key' ? 'SPACE_API_KEY is set: no sign-in needed.' : '');
    start.textContent = state.signed_in ? 'Sign in again' : 'Sign in';
    logout.hidden = !state.signed_in;
  } catch (err) {
    start.disabled = true;
    failed('signin', err, 'Sign-in');
  }
}

/**
 * @param {string | Array<Node | string>} text
 * @param {boolean} [bad]
 */
function progress(text, bad = false) {
  const p = /** @type {HTMLElement} */ (document.getElementById('signin-progress'));
  p.className = `note${bad ? ' bad' : ''}`;
  p.replaceChildren(...(Array.isArray(text) ? text : [text]));
}

/**
 * The poll-token flow. In the app the bridge runs it in the main process (which opens the
 * page in the system browser and consumes with the token it holds); in a browser the page
 * starts it over HTTP, shows the link, polls the status every 2 s and asks the service to
 * consume with the poll_token it holds. The page never sees a poll_token either way.
 */
async function signIn() {
  signInRunning = true;
  /** @type {HTMLButtonElement} */ (document.getElementById('signin-start')).disabled = true;
  try {
    if (bridge) {
      const { auth_session_id } = await bridge.signIn.start();
      progress('Approve the sign-in in your browser…');
      const { status } = await bridge.signIn.waitForApproval(auth_session_id);
      if (status !== 'approved') throw new Error('The sign-in expired; start again.');
      await bridge.signIn.consume(auth_session_id);
    } else {
      /** @type {SignInStart} */
      const { authorize_url, auth_session_id } = await api('/space-auth/start', { method: 'POST', body: {} });
      progress(['Open ', el('a', { href: authorize_url, target: '_blank', rel: 'noopener noreferrer', id: 'signin-link' }, 'the sign-in page'), ' and approve; this page waits…']);
      for (;;) {
        /** @type {SignInStatus} */
        const { status } = await api(`/space-auth/status/${encodeURIComponent(auth_session_id)}`);
        if (status === 'approved') break;
        if (status === 'expired') throw new Error('The sign-in expired; start again.');
        await new Promise((r) => setTimeout(r, 2000));
      }
      await api('/space-auth/consume-held', { method: 'POST', body: { auth_session_id } });
    }
    progress('Signed in.');
  } catch (err) {
    progress(err instanceof Error ? err.message : String(err), true);
  } finally {
    signInRunning = false;
    await loadSignIn();
  }
}

async function signOut() {
  try {
    await api('/space-auth/logout', { method: 'POST', body: {} });
    progress('Signed out.');
  } catch (err) {
    progress(/** @type {Error} */ (err).message, true);
  }
  await loadSignIn();
}

/* ---------- runtimes ---------- */

/** @type {WorkspaceConfig | undefined} */
let workspace;

async function loadRuntimes() {
  try {
    /** @type {[AiAuth, ClibStatus | undefined, WorkspaceConfig]} */
    const [aiAuth, clib, ws] = await Promise.all([api('/debug/ai-auth'), api('/api/clib/status').catch(() => undefined), api('/api/config/workspace')]);
    workspace = ws;
    if (!health) await loadHealth();
    const rows = RUNTIMES.map((runtime) => {
      const cli = health && health.clis ? health.clis[runtime.cli] : undefined;
      const bindings = (aiAuth.backends && aiAuth.backends[runtime.name]) || [];
      const creds = bindings.filter((b) => /KEY|TOKEN/.test(b.from) && !/BOT|APP_TOKEN/.test(b.from));
      const auth = [];
      if (runtime.name === 'clib' && clib) {
        auth.push(el('span', { class: `tag ${clib.authenticated ? 'ok' : 'warn'}` }, clib.authenticated ? `signed in${clib.method ? ` (${clib.method})` : ''}` : 'not signed in'));
      }
      for (const c of creds) auth.push(el('span', { class: `tag ${c.set ? 'ok' : 'off'}`, title: c.set ? `${c.from} is set` : `${c.from} is not set` }, `${c.set ? '✓' : '✗'} ${c.from}`));
      return el(
        'tr',
        { 'data-runtime': runtime.name },
        el('td', {}, el('strong', {}, runtime.label), ws.default === runtime.name ? [' ', el('span', { class: 'tag' }, 'default')] : null, el('div', { class: 'muted' }, runtime.kind)),
        el('td', { class: 'path' }, cli ? (cli.path ? cli.path : el('span', { class: 'tag bad' }, `${cli.bin}: not found`)) : '—'),
        el('td', {}, el('div', { class: 'creds' }, auth.length ? auth : el('span', { class: 'muted' }, 'no credential needed'))),
      );
    });
    fill(
      'runtimes',
      el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Runtime'), el('th', {}, 'Program'), el('th', {}, 'Credentials'))), el('tbody', {}, rows)),
      el('p', { class: 'note' }, 'Active env file: ', el('code', {}, aiAuth.env_file.path), aiAuth.env_file.exists ? '' : ' (not created yet)'),
    );
    fillAgentChoice(ws);
  } catch (err) {
    failed('runtimes', err, 'Runtime configuration');
  }
}

/** @param {WorkspaceConfig} ws */
function fillAgentChoice(ws) {
  const select = /** @type {HTMLSelectElement} */ (document.getElementById('chat-agent'));
  if (select.options.length) return;
  for (const runtime of RUNTIMES) select.append(el('option', { value: runtime.name, selected: ws.default === runtime.name }, `${runtime.label} · ${runtime.kind}`));
}

/* ---------- sessions and messages ---------- */

/** @type {string | undefined} */
let selectedSession;

async function loadSessions() {
  try {
    /** @type {SessionsPage} */
    const { sessions, total } = await api(`/api/sessions?limit=${SESSION_LIMIT}`);
    if (!sessions.length) return fill('sessions', el('p', { class: 'empty' }, 'No sessions yet. Send a prompt to start one.'));
    const items = sessions.map((s) =>
      el(
        'li',
        {},
        el(
          'button',
          { type: 'button', 'data-session': s.session_id, 'aria-current': s.session_id === selectedSession ? 'true' : 'false', onclick: () => void loadMessages(s) },
          el('span', { class: 'title' }, s.title || 'Untitled session'),
          el('span', { class: 'count' }, `${integer(s.message_count)} msg`),
          el('span', { class: 'meta' }, `${s.agent_name} · ${s.agent_id || 'no project'} · ${when(s.updated_at)}`),
        ),
      ),
    );
    fill('sessions', el('ul', { class: 'sessions' }, items), el('p', { class: 'note' }, `Newest ${sessions.length} of ${integer(total)}`));
  } catch (err) {
    failed('sessions', err, 'The sessions list (GET /api/sessions)');
  }
}

/** @param {Session} session */
async function loadMessages(session) {
  selectedSession = session.session_id;
  void loadTurns(session);
  for (const b of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('#sessions [data-session]'))) b.setAttribute('aria-current', String(b.dataset.session === selectedSession));
  /** @type {HTMLElement} */ (document.getElementById('messages-title')).textContent = `· ${session.title || session.session_id}`;
  fill('messages', el('p', { class: 'empty' }, 'Loading…'));
  void loadContext(session.session_id);
  try {
    /** @type {MessagesPage} */
    const { messages, total, offset } = await api(`/api/messages/${encodeURIComponent(session.session_id)}?limit=${MESSAGE_LIMIT}`);
    if (!messages.length) return fill('messages', el('p', { class: 'empty' }, 'This session has no messages.'));
    const list = el(
      'div',
      { class: 'messages' },
      messages.map((m) => el('div', { class: `msg ${m.role}` }, messageText(m), el('span', { class: 'when' }, `${m.role} · ${when(m.timestamp)}`))),
    );
    fill('messages', list, el('p', { class: 'note' }, `Messages ${offset + 1}–${offset + messages.length} of ${integer(total)}`));
    list.scrollTop = list.scrollHeight;
  } catch (err) {
    failed('messages', err, 'Messages (GET /api/messages)');
  }
}

/**
 * A tool message in one line: the call with its main argument, or the first line of the result.
 * @param {Message} m
 */
function messageText(m) {
  if (m.role !== 'tool') return m.text || '';
  const clip = (/** @type {string} */ text) => (text.length > 140 ? `${text.slice(0, 139)}…` : text);
  if (m.tool_call) {
    /** @type {Record<string, unknown>} */
    const input = m.tool_call.input && typeof m.tool_call.input === 'object' ? /** @type {Record<string, unknown>} */ (m.tool_call.input) : {};
    const main = [input.command, input.file_path, input.path, input.query, input.url, ...Object.values(input)].find((v) => typeof v === 'string' && v);
    return clip(`⚙ ${m.tool_call.name || 'tool'}${main ? `: ${main}` : ''}`);
  }
  /** @type {Partial<NonNullable<Message['tool_result']>>} */
  const result = m.tool_result || {};
  const output = typeof result.output === 'string' ? result.output : JSON.stringify(result.output ?? '');
  const first = output.split('\n').find((line) => line.trim()) || '(no output)';
  return clip(`${result.is_error ? '✗' : '↳'} ${result.name ? `${result.name}: ` : ''}${first}`);
}

/* ---------- usage ---------- */

async function loadUsage() {
  try {
    const report = /** @type {UsageReport} */ (await api(`/api/usage?days=${USAGE_DAYS}`));
    const days = lastDays(USAGE_DAYS, report.daily || []);
    const tokens = report.total_tokens || {};
    const totalTokens = (tokens.input || 0) + (tokens.output || 0) + (tokens.cache_read || 0) + (tokens.cache_write || 0);
    const models = [...(report.by_model || [])].sort((a, b) => b.cost_usd - a.cost_usd).slice(0, 4);
    fill(
      'usage',
      el(
        'div',
        { class: 'usage-head' },
        el('div', {}, el('div', { class: 'big', id: 'usage-total' }, money(report.total_cost_usd)), el('div', { class: 'muted' }, `total cost, ${report.window_days ?? USAGE_DAYS} days`)),
        el('div', {}, el('div', { class: 'big' }, integer(totalTokens)), el('div', { class: 'muted' }, 'tokens')),
        el('div', {}, el('div', { class: 'big' }, integer((report.by_session || []).length)), el('div', { class: 'muted' }, 'sessions')),
      ),
      chart(days),
      models.length ? el('div', { class: 'models' }, models.map((m) => el('span', { class: 'tag', title: `${integer(m.tokens_in)} in, ${integer(m.tokens_out)} out` }, `${m.model} · ${moneyFine(m.cost_usd)}`))) : null,
    );
  } catch (err) {
    failed('usage', err, 'Usage (GET /api/usage)');
  }
}

/** The last `n` calendar days (UTC, as the report's dates), zero where the report has none. */
/**
 * @param {number} n
 * @param {UsageReport['daily']} daily
 * @returns {Array<{ date: string, cost_usd: number, tokens_total: number }>}
 */
function lastDays(n, daily) {
  const byDate = new Map(daily.map((d) => [d.date, d]));
  const today = new Date();
  const out = [];
  for (let i = n - 1; i >= 0; i--) {
    const date = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10);
    const d = byDate.get(date);
    out.push({ date, cost_usd: d ? Number(d.cost_usd) || 0 : 0, tokens_total: d ? d.tokens_total : 0 });
  }
  return out;
}

/** Daily cost as an inline SVG bar chart with a few gridlines; each bar has a tooltip. */
/** @param {ReturnType<typeof lastDays>} days */
function chart(days) {
  const W = 720;
  const H = 210;
  const left = 48;
  const bottom = 24;
  const top = 8;
  const plotW = W - left - 8;
  const plotH = H - top - bottom;
  const max = Math.max(...days.map((d) => d.cost_usd), 0);
  const step = niceStep(max / 4);
  const ceiling = Math.max(step * 4, step);
  const y = (/** @type {number} */ v) => top + plotH - (v / ceiling) * plotH;
  const slot = plotW / days.length;
  const parts = [];
  for (let v = 0; v <= ceiling + 1e-9; v += step) {
    parts.push(svg('line', { class: 'grid-line', x1: left, x2: W - 8, y1: y(v), y2: y(v) }));
    parts.push(svg('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, step < 1 ? `$${v.toFixed(2)}` : `$${Math.round(v)}`));
  }
  days.forEach((d, i) => {
    const h = Math.max(d.cost_usd > 0 ? 2 : 0, (d.cost_usd / ceiling) * plotH);
    const x = left + i * slot + slot * 0.18;
    parts.push(svg('rect', { class: 'bar', x, y: top + plotH - h, width: slot * 0.64, height: h, rx: 2, 'data-date': d.date }, svg('title', {}, `${d.date}: ${moneyFine(d.cost_usd)}, ${integer(d.tokens_total)} tokens`)));
    if (i % 5 === 4 || i === days.length - 1) parts.push(svg('text', { x: left + i * slot + slot / 2, y: H - 6, 'text-anchor': 'middle' }, d.date.slice(5)));
  });
  return svg('svg', { class: 'chart', id: 'usage-chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Daily cost over the last ${days.length} days` }, parts);
}

/** @param {number} raw */
function niceStep(raw) {
  if (!(raw > 0)) return 0.25;
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 2.5 ? 2.5 : scaled <= 5 ? 5 : 10) * power;
}

/* ---------- chat ---------- */

/** @type {{ id: string, controller: AbortController } | undefined} */
let currentStream;

/**
 * @param {string} text
 * @param {boolean} [bad]
 */
function chatStatus(text, bad = false) {
  const s = /** @type {HTMLElement} */ (document.getElementById('chat-status'));
  s.className = `note${bad ? ' bad' : ''}`;
  s.textContent = text;
}

/** @param {Event} event */
async function sendPrompt(event) {
  event.preventDefault();
  const text = /** @type {HTMLTextAreaElement} */ (document.getElementById('chat-text')).value.trim();
  if (!text || currentStream) return;
  const output = /** @type {HTMLElement} */ (document.getElementById('chat-output'));
  output.className = 'chat-output';
  output.textContent = '';
  const send = /** @type {HTMLButtonElement} */ (document.getElementById('chat-send'));
  const stop = /** @type {HTMLButtonElement} */ (document.getElementById('chat-stop'));
  send.disabled = true;
  chatStatus('Sending…');
  try {
    /** @type {PromptAccepted} */
    const { stream_id } = await api('/api/chat/prompt', { method: 'POST', body: { text, agent_name: /** @type {HTMLSelectElement} */ (document.getElementById('chat-agent')).value } });
    currentStream = { id: stream_id, controller: new AbortController() };
    stop.disabled = false;
    chatStatus('Streaming…');
    const outcome = await readStream(stream_id, currentStream.controller.signal, (t) => {
      output.textContent += t;
      output.scrollTop = output.scrollHeight;
    });
    if (outcome.error) {
      output.className = 'chat-output failed';
      output.textContent += (output.textContent ? '\n\n' : '') + outcome.error;
      chatStatus('The turn failed.', true);
    } else {
      chatStatus(`Done (${outcome.finish_reason || 'stop'})${outcome.session_id ? ` · session ${outcome.session_id.slice(0, 8)}` : ''}`);
    }
    void loadSessions();
    void loadUsage();
  } catch (err) {
    chatStatus(err instanceof Error ? err.message : String(err), true);
  } finally {
    currentStream = undefined;
    send.disabled = false;
    stop.disabled = true;
  }
}

/**
 * Reads the turn's SSE stream with fetch (EventSource cannot send the token header) and
 * calls `onText` with each text-delta as it arrives. Resolves with how the turn ended.
 */
/**
 * @param {string} streamId
 * @param {AbortSignal} signal
 * @param {(text: string) => void} onText
 * @returns {Promise<Outcome>}
 */
async function readStream(streamId, signal, onText) {
  const res = await fetch(`/api/chat/stream/${encodeURIComponent(streamId)}`, { headers: { ...authHeaders(), Accept: 'text/event-stream' }, signal, credentials: 'omit', cache: 'no-store' });
  if (!res.ok || !res.body) throw new ApiError(res.status, `The stream could not be opened (HTTP ${res.status})`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  /** @type {Outcome} */
  let outcome = { error: 'The stream ended without a result.' };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (!frame) continue;
      if (frame.event === 'text-delta') onText(frame.data.text || '');
      else if (frame.event === 'session-created') chatStatus(`Streaming… session ${String(frame.data.session_id).slice(0, 8)}`);
      else if (frame.event === 'done') outcome = { finish_reason: frame.data.finish_reason, session_id: frame.data.session_id };
      else if (frame.event === 'agent-error' || frame.event === 'error') outcome = { error: frame.data.error_message || 'The runtime failed.' };
    }
  }
  return outcome;
}

/**
 * @param {string} text
 * @returns {Frame | undefined}
 */
function parseFrame(text) {
  let event = 'message';
  const data = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (!data.length) return undefined;
  try {
    return { event, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}

async function stopTurn() {
  if (!currentStream) return;
  /** @type {HTMLButtonElement} */ (document.getElementById('chat-stop')).disabled = true;
  try {
    await api('/api/chat/abort', { method: 'POST', body: { stream_id: currentStream.id } });
    chatStatus('Stopping…');
  } catch (err) {
    chatStatus(/** @type {Error} */ (err).message, true);
  }
}

/* ---------- turns: what each changed, its diff, revert (docs/checkpoints.md) ---------- */

/** @typedef {{ added: number, modified: number, deleted: number, additions: number, deletions: number }} FileCounts */
/** @typedef {{ turn_id: string, kind: string, prompt: string, status: string, files: FileCounts, revertible: boolean, checkpoint: { state: string, note: string | null } }} TurnEntry */
/** @typedef {{ path: string, status: string, binary: boolean, additions: number, deletions: number, patch?: string, truncated?: boolean, skipped?: boolean }} ChangedFile */

/** @param {Session} session */
async function loadTurns(session) {
  /** @type {HTMLElement} */ (document.getElementById('turns-title')).textContent = `· ${session.title || session.session_id}`;
  try {
    /** @type {{ turns: TurnEntry[] }} */
    const { turns } = await api(`/api/sessions/${encodeURIComponent(session.session_id)}/turns`);
    if (!turns.length) return fill('turns', el('p', { class: 'empty' }, 'No turn of this session ran in the service yet.'));
    const rows = [...turns].reverse().map((t) =>
      el(
        'li',
        { class: 'turn', 'data-turn': t.turn_id },
        el('div', { class: 'turn-head' },
          el('span', { class: 'kind' }, t.kind === 'revert' ? '↶ revert' : 'turn'),
          el('span', { class: 'prompt' }, t.prompt || '(no prompt)'),
          el('span', { class: 'muted counts' }, `${t.status} · +${t.files.added} ~${t.files.modified} −${t.files.deleted} files · +${t.files.additions} −${t.files.deletions} lines`),
          el('button', { type: 'button', class: 'secondary diff-button', onclick: () => void showDiff(session, t) }, 'Diff'),
          t.revertible && el('button', { type: 'button', class: 'revert-button', onclick: () => void revertTurn(session, t, false) }, 'Revert'),
        ),
        t.checkpoint.state === 'off' && el('p', { class: 'note' }, `No checkpoint: ${t.checkpoint.note || 'unknown reason'}`),
        el('div', { class: 'turn-detail' }),
      ),
    );
    fill('turns', el('ul', { class: 'turns' }, rows));
  } catch (err) {
    failed('turns', err, 'Turns (GET /api/sessions/{id}/turns)');
  }
}

/** @param {string} turnId */
function turnDetail(turnId) {
  return /** @type {HTMLElement} */ (document.querySelector(`#turns [data-turn="${turnId}"] .turn-detail`));
}

/**
 * @param {Session} session
 * @param {TurnEntry} turn
 */
async function showDiff(session, turn) {
  const detail = turnDetail(turn.turn_id);
  try {
    /** @type {{ files: ChangedFile[] }} */
    const { files } = await api(`/api/sessions/${encodeURIComponent(session.session_id)}/turns/${encodeURIComponent(turn.turn_id)}/diff`);
    if (!files.length) return detail.replaceChildren(el('p', { class: 'empty' }, 'No file changed.'));
    detail.replaceChildren(
      ...files.map((f) =>
        el('div', { class: 'file', 'data-path': f.path },
          el('div', { class: 'file-head' }, `${f.status} ${f.path} (+${f.additions} −${f.deletions})${f.binary ? ' · binary' : ''}${f.skipped ? ' · skipped (too large)' : ''}${f.truncated ? ' · patch cut at 256 KB' : ''}`),
          f.patch !== undefined && el('pre', { class: 'patch' }, f.patch),
        ),
      ),
    );
  } catch (err) {
    detail.replaceChildren(el('p', { class: 'error' }, err instanceof Error ? err.message : String(err)));
  }
}

/**
 * Reverts a turn; a conflict (409) is shown with its paths and a button to overwrite them.
 * @param {Session} session
 * @param {TurnEntry} turn
 * @param {boolean} force
 */
async function revertTurn(session, turn, force) {
  const detail = turnDetail(turn.turn_id);
  const res = await fetch(`/api/sessions/${encodeURIComponent(session.session_id)}/turns/${encodeURIComponent(turn.turn_id)}/revert`, {
    method: 'POST',
    headers: { ...authHeaders(), Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify({ force }),
    credentials: 'omit',
    cache: 'no-store',
  });
  /** @type {{ detail?: string, conflicts?: string[], restored?: string[], removed?: string[] }} */
  const data = await res.json().catch(() => ({}));
  if (res.status === 409 && data.conflicts) {
    return detail.replaceChildren(
      el('div', { class: 'conflict' },
        el('p', { class: 'error' }, data.detail || 'Changed since the turn'),
        el('ul', {}, data.conflicts.map((p) => el('li', { class: 'conflict-path' }, p))),
        el('button', { type: 'button', class: 'force-button', onclick: () => void revertTurn(session, turn, true) }, 'Revert anyway (overwrite these files)'),
      ),
    );
  }
  if (!res.ok) return detail.replaceChildren(el('p', { class: 'error' }, data.detail || `HTTP ${res.status}`));
  await loadTurns(session);
}

/* ---------- context, plan limits, budgets (docs/limits.md) ---------- */

/**
 * @typedef {{ used_tokens: number, window_tokens: number | null, percent: number | null, model: string | null, basis: string, as_of: string | null }} Context
 * @typedef {{ id: string, label: string, window_minutes: number, used_percent: number | null, resets_at: string | null, observed_at: string, stale: boolean }} LimitWindow
 * @typedef {{ runtime: string, account: { kind: string }, windows: LimitWindow[], state: string, reason?: string }} LimitsEntry GET /api/limits
 * @typedef {{ id: string, scope: string, period: string, limit_usd: number, action: string, spent_usd: number, projected_usd: number, resets_at: string, state: string }} Budget GET /api/budgets
 */

/** The selected session's context ring, with its raw numbers beside it. @param {string} id */
async function loadContext(id) {
  const box = /** @type {HTMLElement} */ (document.getElementById('context'));
  box.hidden = true;
  try {
    /** @type {{ context?: Context | null }} */
    const session = await api(`/api/sessions/${encodeURIComponent(id)}`);
    if (id !== selectedSession) return;
    const c = session.context;
    box.replaceChildren(...(c ? contextView(c) : [el('span', { class: 'muted' }, 'Context: no model request recorded yet.')]));
    box.hidden = false;
  } catch {
    // The messages card says what failed; the ring stays hidden.
  }
}

/** @param {Context} c */
function contextView(c) {
  const pct = c.percent ?? 0;
  const r = 15;
  const around = 2 * Math.PI * r;
  const ring = svg(
    'svg',
    { viewBox: '0 0 36 36', width: 44, height: 44, class: `ring${pct >= 80 ? ' hot' : ''}`, role: 'img', 'aria-label': `context ${c.percent ?? '?'} %` },
    svg('circle', { cx: 18, cy: 18, r, class: 'track' }),
    svg('circle', { cx: 18, cy: 18, r, class: 'fill', 'stroke-dasharray': `${(pct / 100) * around} ${around}`, transform: 'rotate(-90 18 18)' }),
  );
  const window = c.window_tokens === null ? 'window not stated by the program' : `of ${integer(c.window_tokens)}`;
  return [ring, el('span', { id: 'context-figures' }, `${c.percent === null ? '' : `${c.percent} % · `}${integer(c.used_tokens)} tokens ${window}`), el('span', { class: 'muted' }, ` · ${c.model ?? 'model unknown'} · ${c.basis === 'estimate' ? 'estimate' : 'last request'}`)];
}

async function loadLimits() {
  try {
    /** @type {{ limits: LimitsEntry[] }} */
    const { limits } = await api('/api/limits');
    const rows = limits.map((e) =>
      el(
        'tr',
        { 'data-runtime': e.runtime },
        el('td', {}, e.runtime, el('div', { class: 'muted' }, e.account.kind.replace('_', ' '))),
        el('td', {}, el('span', { class: `state state-${e.state}` }, e.state)),
        el(
          'td',
          {},
          e.windows.length
            ? e.windows.map((w) => el('div', { class: 'window', 'data-window': w.id }, `${w.label}: ${w.used_percent === null ? '?' : `${w.used_percent} %`}`, w.resets_at ? el('span', { class: 'muted' }, ` · resets ${new Date(w.resets_at).toISOString().slice(0, 16).replace('T', ' ')} UTC`) : null, w.stale ? el('span', { class: 'muted' }, ' · stale') : null))
            : el('span', { class: 'reason' }, e.reason ?? ''),
        ),
      ),
    );
    fill('limits', el('table', { class: 'runtimes' }, el('tbody', {}, rows)));
  } catch (err) {
    failed('limits', err, 'Plan limits (GET /api/limits)');
  }
}

async function loadBudgets() {
  try {
    /** @type {{ budgets: Budget[] }} */
    const { budgets } = await api('/api/budgets');
    if (!budgets.length) return fill('budgets', el('p', { class: 'empty' }, 'No budgets. PUT /api/budgets/{id} sets one.'));
    const rows = budgets.map((b) =>
      el(
        'tr',
        { 'data-budget': b.id },
        el('td', {}, b.id, el('div', { class: 'muted' }, `${b.scope} · ${b.period} · ${b.action.replaceAll('_', ' ')}`)),
        el('td', { class: 'spend' }, `${moneyFine(b.spent_usd)} of ${money(b.limit_usd)}`, el('div', { class: 'muted' }, `projected ${moneyFine(b.projected_usd)}`)),
        el('td', {}, el('span', { class: `state state-${b.state}` }, b.state)),
      ),
    );
    fill('budgets', el('table', { class: 'runtimes' }, el('tbody', {}, rows)));
  } catch (err) {
    failed('budgets', err, 'Budgets (GET /api/budgets)');
  }
}

/* ---------- start ---------- */

async function loadAll() {
  document.body.dataset.loaded = 'false';
  await loadHealth();
  await Promise.all([loadSignIn(), loadRuntimes(), loadSessions(), loadUsage(), loadLimits(), loadBudgets()]);
  document.body.dataset.loaded = 'true';
}

takeTokenFromAddress();
wireTokenForm();
/** @type {HTMLButtonElement} */ (document.getElementById('signin-start')).addEventListener('click', () => void signIn());
/** @type {HTMLElement} */ (document.getElementById('signin-logout')).addEventListener('click', () => void signOut());
/** @type {HTMLElement} */ (document.getElementById('chat-form')).addEventListener('submit', (e) => void sendPrompt(e));
/** @type {HTMLButtonElement} */ (document.getElementById('chat-stop')).addEventListener('click', () => void stopTurn());
void loadAll();
