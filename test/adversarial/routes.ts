/**
 * Every route of the spec (test/fixtures/adversarial/spec.txt, a copy of the contract), plus
 * the routes the service adds beyond it (docs/), as one table the adversarial suite walks:
 * each trust-boundary form and each bad body is tried on every row. `spec-coverage.test.ts`
 * checks the table against the spec's endpoint tables, so a route the spec names cannot be
 * left out.
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: Method;
  /** The path as the spec writes it, `{param}` included. */
  path: string;
  /** What the request carries: nothing, a JSON body, a multipart form. */
  body: 'none' | 'json' | 'multipart';
  /** A well-formed body (the spec's fields), the seed the bad-input family mutates. */
  sample?: Record<string, unknown>;
  /** Answers an SSE stream (a client must not wait for the end). */
  sse?: boolean;
  /** Reachable without the launch token (the banner, the OAuth redirect target, discovery metadata). */
  public?: boolean;
  /** Not in the spec: added by the service and documented in docs/. */
  extra?: boolean;
}

/** Values for path parameters: plausible, and harmless if a handler acts on them. */
const PARAMS: Record<string, string> = {
  auth_session_id: 'a0000000-0000-4000-8000-000000000001',
  stream_id: 'b0000000-0000-4000-8000-000000000002',
  project_id: 'adv-project',
  session_id: 'c0000000-0000-4000-8000-000000000003',
  provider_id: 'prova',
  id: 'adv-agent',
  name: 'advremote',
  ws: 'adv-ws',
};

/** The path with every `{param}` filled in (`override` replaces a parameter's value, raw). */
export function concrete(route: Route, override?: string): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => override ?? PARAMS[name] ?? 'x');
}

const get = (path: string, extra: Partial<Route> = {}): Route => ({ method: 'GET', path, body: 'none', ...extra });
const json = (method: Method, path: string, sample: Record<string, unknown> = {}, extra: Partial<Route> = {}): Route => ({ method, path, body: 'json', sample, ...extra });
const bare = (method: Method, path: string, extra: Partial<Route> = {}): Route => ({ method, path, body: 'none', ...extra });

function drive(d: 'drivea' | 'driveb'): Route[] {
  const base = `/api/connectors/${d}`;
  return [
    get(`${base}/remotes`),
    json('POST', `${base}/remotes`, { name: 'advremote', force: false }),
    get(`${base}/sessions/{session_id}`),
    json('POST', `${base}/sessions/{session_id}/submit`, { code: 'adv-code' }),
    bare('POST', `${base}/sessions/{session_id}/cancel`),
    bare('DELETE', `${base}/remotes/{name}`),
  ];
}

function tokenConnector(c: 'codehost' | 'deployhost' | 'agenthost'): Route[] {
  const base = `/api/connectors/${c}`;
  return [json('POST', `${base}/token`, { token: 'adv-token-value' }), get(`${base}/status`), bare('POST', `${base}/disconnect`), bare('POST', `${base}/reconnect`)];
}

export const ROUTES: readonly Route[] = [
  // Upstream sign-in
  bare('POST', '/space-auth/start'),
  get('/space-auth/status/{auth_session_id}'),
  json('POST', '/space-auth/consume', { auth_session_id: PARAMS.auth_session_id, poll_token: 'adv-poll-token' }),
  get('/space-auth/whoami'),
  get('/space-auth/state'),
  bare('POST', '/space-auth/logout'),
  json('POST', '/space-auth/consume-held', { auth_session_id: PARAMS.auth_session_id }, { extra: true }),
  // Runtime bootstrap
  json('POST', '/clia/setup-token', {}),
  json('POST', '/clia/setup-token/callback', { session_id: PARAMS.session_id, code: 'adv-code#adv-state' }),
  json('POST', '/clib/setup', {}),
  get('/clib/setup/status', { extra: true }),
  bare('POST', '/clib/setup/cancel', { extra: true }),
  get('/api/clib/status'),
  // Chat
  json('POST', '/api/chat/prompt', { text: 'hello', agent_name: 'clia_code', agent_id: 'adv', agent_type: 'greet', model: 'main' }),
  get('/api/chat/stream/{stream_id}', { sse: true }),
  json('POST', '/api/chat/abort', { stream_id: PARAMS.stream_id }),
  json('POST', '/api/chat/respond', { anything: true }),
  get('/api/chat/active'),
  get('/api/events', { sse: true, extra: true }),
  // Legacy chat
  json('POST', '/ask_question', { project_name: 'adv-project', question: 'hello', user_id: 'u', message_type: '@space', agent_type: 'greet' }),
  json('POST', '/ask_question_streaming', { project_name: 'adv-project', question: 'hello' }, { sse: true }),
  get('/sessions'),
  bare('DELETE', '/sessions/{project_id}'),
  // Sessions
  get('/api/sessions'),
  get('/api/sessions/search'),
  get('/api/sessions/{session_id}'),
  get('/api/messages/{session_id}'),
  json('PATCH', '/api/sessions/{session_id}', { directory: '/tmp' }),
  get('/api/sessions/{session_id}/todos'),
  get('/api/sessions/{session_id}/files'),
  json('POST', '/api/sessions', { anything: true }),
  bare('DELETE', '/api/sessions/{session_id}'),
  // Config, onboarding, channels
  get('/api/config/workspace'),
  get('/api/models'),
  ...['api-key', 'providers', 'runtimea', 'provb-subscription', 'hosted-account', 'localmodel', 'local'].map((p) => get(`/api/config/${p}`)),
  json('POST', '/api/config/providers/{provider_id}/key', { key: 'adv-key-value' }),
  get('/api/onboarding'),
  json('POST', '/api/onboarding/complete', {}),
  json('POST', '/api/channels/add', { channel: 'telegram', token: 'adv-channel-token' }),
  get('/api/channels'),
  get('/api/channels/runtimea/status'),
  // Secrets
  get('/api/secrets/env'),
  get('/api/secrets/env/keys'),
  json('PUT', '/api/secrets/env', { entries: [{ key: 'ADV_KEY', value: 'adv-value' }] }),
  // Usage
  get('/api/usage'),
  get('/runtimea/usage/analytics'),
  get('/runtimea/usage/summary'),
  get('/runtimea/usage/summary/card'),
  get('/runtimea/usage/sessions'),
  get('/runtimea/usage/sessions/{session_id}'),
  // Plan limits and budgets (docs/limits.md)
  get('/api/limits', { extra: true }),
  get('/api/budgets', { extra: true }),
  json('PUT', '/api/budgets/{id}', { scope: 'all', period: 'day', limit_usd: 5, warn_at: [0.8, 1], action: 'notify' }, { extra: true }),
  bare('DELETE', '/api/budgets/{id}', { extra: true }),
  // Files
  { method: 'POST', path: '/api/files/upload', body: 'multipart' },
  json('POST', '/api/files/list-directory', { path: '' }),
  json('POST', '/api/files/content', { path: '/etc/hostname' }),
  json('POST', '/api/files/content-binary', { path: '/etc/hostname' }),
  json('POST', '/api/files/save', { path: '/tmp/adv-save.txt', content: 'x' }),
  json('POST', '/api/files/mkdir', { path: '/tmp/adv-dir', scaffold: false, files: [] }),
  // Agents registry
  get('/api/agents'),
  json('POST', '/api/agents', { id: 'adv-agent', name: 'Adversary', model: 'main', tools: [] }),
  get('/api/agents/{id}'),
  json('PATCH', '/api/agents/{id}', { name: 'Renamed' }),
  // Connectors
  ...drive('drivea'),
  ...drive('driveb'),
  ...tokenConnector('codehost'),
  bare('POST', '/api/connectors/codehost/cli/start'),
  json('POST', '/api/connectors/codehost/cli/poll', { session_id: PARAMS.session_id }),
  json('POST', '/api/connectors/codehost/cli/cancel', { session_id: PARAMS.session_id }),
  ...tokenConnector('deployhost'),
  get('/api/connectors/deployhost/oauth/start'),
  json('POST', '/api/connectors/deployhost/oauth/exchange', { code: 'adv-code', state: 'adv-state' }),
  get('/callback', { public: true }),
  get('/.well-known/oauth-protected-resource', { public: true }),
  ...tokenConnector('agenthost'),
  // Status, stubs, lifecycle
  get('/', { public: true }),
  get('/health'),
  get('/debug/ai-auth'),
  bare('POST', '/gateway/restart'),
  bare('POST', '/app/restart'),
  bare('POST', '/app/update'),
  ...['/api/tools', '/api/skills', '/api/connectors', '/api/automations', '/api/mcp/status', '/api/plugins/status', '/api/localmodel/status'].map((p) => get(p)),
  get('/api/fts/index/{ws}'),
  get('/api/fts/search', { extra: true }),
  get('/api/workspace-memory'),
  // The diagnostics page (docs/diagnostics.md): public files that hold no data.
  ...['/diagnostics', '/diagnostics/app.js', '/diagnostics/app.css'].map((p) => get(p, { public: true, extra: true })),
];

export const JSON_ROUTES = ROUTES.filter((r) => r.body === 'json');

/** Routes that take a body at all (JSON or multipart): the targets of form CSRF. */
export const BODY_ROUTES = ROUTES.filter((r) => r.body !== 'none' || r.method !== 'GET');

export function label(route: Route): string {
  return `${route.method} ${route.path}`;
}
