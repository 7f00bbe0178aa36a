import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Anthropic Messages API on loopback, for the real Claude Code CLI in the real-program
 * lane. It speaks the wire format the CLI consumes (POST /v1/messages with `stream: true` ->
 * the Messages SSE events: message_start, content_block_start, ping, content_block_delta
 * (text_delta / input_json_delta), content_block_stop, message_delta, message_stop), as the
 * CLI echoed them in the recorded runs (shared/fixtures/runtimes/clia/runs/*: stream_event
 * lines) and as the recorded requests show it calls them. Replies are scripted by the last
 * user text (`role: "system"` turns are skipped, as the CLI sends some after the user turn):
 *
 * - a tool_result in the last user turn -> "The tool returned: <content>"
 * - "echo hi" -> "I'll run that command." + a Bash tool_use `echo hi`
 * - "write <name> containing <text>" -> "I'll write that file." + a Write tool_use of
 *   <primary working directory>/<name> (the cwd the CLI states in its system prompt)
 * - "run `<command>`" -> "I'll run that command." + a Bash tool_use of <command> (its text
 *   streamed slowly when the prompt also says "slow", so a test can act while it streams)
 * - "slow" -> an echo streamed in many deltas, `slowDeltaMs` apart
 * - "delegate <task>" -> "I'll hand that to a sub-agent." + the CLI's agent tool (`Agent` or
 *   `Task`, whichever the request offers) with the prompt `Sub-task: <task>`; "delegate to
 *   haiku <task>" (or sonnet, opus, fable) also asks for that model for the sub-agent
 * - anything else -> "Hello from the fake Anthropic API. You said: <text>"
 *
 * Authentication: `x-api-key` or `Authorization: Bearer` must equal `apiKey`, else 401 with
 * the API's error body. Every request is kept in `requests`, with the usage the fake returned.
 *
 * Beyond the script (docs/limits.md): `inputUsage(n)` sets the input side of the n-th model
 * request's usage (input, cache creation, cache read; default 5, 0, 0), and `headers()` adds
 * response headers to every answer, as the vendor's `anthropic-ratelimit-unified-*` headers
 * that Claude Code turns into `rate_limit_event` lines for subscription logins;
 * `reject()` answers a request with the 429 a plan limit gives (with those headers).
 */
export interface FakeAnthropic {
  url: string;
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: any; usage?: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  apiKey: string;
  slowDeltaMs?: number;
  inputUsage?: (request: number) => InputUsage;
  headers?: () => Record<string, string>;
  reject?: () => Record<string, string> | undefined;
}

export interface InputUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export async function startFakeAnthropic(options: FakeAnthropicOptions): Promise<FakeAnthropic> {
  const requests: FakeAnthropic['requests'] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any = undefined;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const recorded: FakeAnthropic['requests'][number] = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    requests.push(recorded);
    const route = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || (route !== '/v1/messages' && route !== '/v1/messages/count_tokens')) return json(res, 404, apiError('not_found_error', 'Not found'));
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (key !== options.apiKey) return json(res, 401, apiError('authentication_error', 'invalid x-api-key'));
    if (route === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: 1000 });
    const rejected = options.reject?.();
    if (rejected) return json(res, 429, apiError('rate_limit_error', 'This request would exceed your account\'s rate limit. Please try again later.'), rejected);
    const calls = requests.filter((r) => r.url.startsWith('/v1/messages?') || r.url === '/v1/messages').length - 1;
    const input = options.inputUsage?.(calls) ?? { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const extra = options.headers?.() ?? {};
    const reply = script(body?.messages ?? [], workingDirectory(body?.system), toolNames(body?.tools));
    const message = { id: `msg_${randomBytes(12).toString('hex')}`, model: String(body?.model ?? 'claude-opus-5-5') };
    recorded.usage = usage(outputTokens(reply.blocks), input);
    if (body?.stream) await stream(res, message, reply.blocks, reply.slow ? (options.slowDeltaMs ?? 300) : 0, input, extra);
    else json(res, 200, { ...message, type: 'message', role: 'assistant', content: reply.blocks, stop_reason: stopReason(reply.blocks), stop_sequence: null, usage: recorded.usage }, extra);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The cwd the CLI tells the model in its system prompt ("Primary working directory: ..."). */
function workingDirectory(system: unknown): string {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? system.map((b: any) => String(b?.text ?? '')).join('\n') : '';
  return /Primary working directory: (.+)/.exec(text)?.[1]?.trim() ?? '.';
}

const toolId = (): string => `toolu_${randomBytes(12).toString('hex')}`;

function toolNames(tools: unknown): string[] {
  return Array.isArray(tools) ? tools.map((t: any) => String(t?.name ?? '')) : [];
}

function script(messages: Array<{ role: string; content: unknown }>, cwd: string, tools: string[] = []): { blocks: Block[]; slow: boolean } {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const content = last?.content;
  const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as any[]) : [];
  const toolResult = parts.find((p) => p?.type === 'tool_result');
  if (toolResult) {
    const out = typeof toolResult.content === 'string' ? toolResult.content : (toolResult.content ?? []).map((c: any) => c.text ?? '').join('');
    return { blocks: [{ type: 'text', text: `The tool returned: ${out.trim()}` }], slow: false };
  }
  // The CLI puts <system-reminder> blocks before the prompt in the same user turn.
  const text = parts
    .filter((p) => p?.type === 'text' && !String(p.text).startsWith('<system-reminder>'))
    .map((p) => String(p.text))
    .join('\n')
    .trim();
  const write = /\bwrite (\S+) containing (.+)$/is.exec(text);
  if (write) {
    return { blocks: [{ type: 'text', text: "I'll write that file." }, { type: 'tool_use', id: toolId(), name: 'Write', input: { file_path: `${cwd}/${write[1]}`, content: write[2]!.trim() } }], slow: false };
  }
  // A sub-agent: the CLI's agent tool (`Agent`, formerly `Task`), started with the rest of the prompt.
  const delegate = /^delegate (?:to (sonnet|opus|haiku|fable) )?(.+)$/is.exec(text);
  const agentTool = tools.find((n) => n === 'Agent' || n === 'Task');
  if (delegate && agentTool) {
    const input = { description: 'Delegated task', prompt: `Sub-task: ${delegate[2]!.trim()}`, subagent_type: 'general-purpose', ...(delegate[1] ? { model: delegate[1] } : {}) };
    return { blocks: [{ type: 'text', text: "I'll hand that to a sub-agent." }, { type: 'tool_use', id: toolId(), name: agentTool, input }], slow: false };
  }
  const run = /\brun `([^`]+)`/i.exec(text);
  if (run) {
    return { blocks: [{ type: 'text', text: "I'll run that command." }, { type: 'tool_use', id: toolId(), name: 'Bash', input: { command: run[1], description: 'Run the requested command' } }], slow: /slow/i.test(text) };
  }
  if (/echo hi/i.test(text)) {
    return { blocks: [{ type: 'text', text: "I'll run that command." }, { type: 'tool_use', id: `toolu_${randomBytes(12).toString('hex')}`, name: 'Bash', input: { command: 'echo hi', description: 'Print hi' } }], slow: false };
  }
  return { blocks: [{ type: 'text', text: `Hello from the fake Anthropic API. You said: ${text}` }], slow: /slow/i.test(text) };
}

async function stream(res: ServerResponse, message: { id: string; model: string }, blocks: Block[], deltaMs: number, input: InputUsage, headers: Record<string, string>): Promise<void> {
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${randomBytes(8).toString('hex')}` });
  const send = (event: string, data: unknown): boolean => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', { type: 'message_start', message: { ...message, type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage: usage(1, input) } });
  send('ping', { type: 'ping' });
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of chunks(block.text, deltaMs ? 4 : 12)) {
        if (res.destroyed) return;
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        if (deltaMs) await sleep(deltaMs);
      }
    } else {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const piece of chunks(JSON.stringify(block.input), 10)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  }
  send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason(blocks), stop_sequence: null }, usage: usage(outputTokens(blocks), input) });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function usage(output: number, input: InputUsage): Record<string, unknown> {
  return { ...input, output_tokens: output, service_tier: 'standard' };
}
const outputTokens = (blocks: Block[]): number => blocks.reduce((n, b) => n + Math.ceil((b.type === 'text' ? b.text.length : 20) / 4), 0);
const stopReason = (blocks: Block[]): string => (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
const apiError = (type: string, message: string): unknown => ({ type: 'error', error: { type, message } });

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
