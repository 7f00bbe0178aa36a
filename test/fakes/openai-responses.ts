import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A loopback stand-in for the OpenAI Responses API (`POST /v1/responses`, SSE), speaking the
 * wire format codex 0.169.0 consumed in the recorded runs (shared fixtures clib/fake/
 * sse-text.sample.txt): response.created ... output_text.delta ... response.completed.
 * The last user text picks a scenario:
 *   default     reasoning summary + "Hello from fake-openai. You said: <text>"
 *   [[shell]]   a function_call exec_command {cmd}; once its output comes back, a message quoting it
 *   [[shell: <command>]]  the same with that command
 *   [[patch: <file> <text>]]  a custom_tool_call apply_patch adding <file> (relative) with <text>
 *   [[401]]     HTTP 401 invalid_api_key        [[500]]  HTTP 500 server_error
 *   [[slow]]    reasoning, then `slowMs` of silence before the text (for interrupts)
 *   [[spawn: <task>]]  a sub-agent: the thread calls `spawn_agent {task_name, message: <task>}`
 *               (namespace `collaboration`), then `wait_agent`, then answers; any other
 *               thread (the sub-agent, which inherits the history) gets the default answer
 * A request whose bearer is not `apiKey` (when set) gets the 401 too.
 * `headers()` adds response headers to each streamed answer: the provider's
 * `x-codex-primary-*` / `x-codex-secondary-*` rate-limit headers codex reads (docs/limits.md).
 */
export interface FakeResponsesOptions {
  apiKey?: string;
  /** Gap between SSE events. */
  gapMs?: number;
  slowMs?: number;
  headers?: () => Record<string, string>;
}

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  threadId: string | undefined;
  userText: string;
  /** Every user message's text in the request's input, in order (a steered turn's request has the steer too). */
  userTexts: string[];
  /** The image inputs of the request's user messages (`input_image` parts): their URL's first 64 characters. */
  images: string[];
  hasToolOutput: boolean;
  /** The input_tokens this fake reported for the request (body length / 4). */
  inputTokens: number;
  /** The total_tokens it reported (input + output), once the answer is complete. */
  totalTokens?: number;
}

export interface FakeResponses {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeResponses(options: FakeResponsesOptions = {}): Promise<FakeResponses> {
  const requests: RecordedRequest[] = [];
  const spawners = new Map<string, number>();
  const { url, close } = await serveOnLoopback((req, res, raw) => void handle(req, res, raw, options, requests, spawners));
  return {
    url: `${url}/v1`,
    requests,
    close,
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, raw: string, options: FakeResponsesOptions, requests: RecordedRequest[], spawners: Map<string, number>): Promise<void> {
  if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    return;
  }
  const body = JSON.parse(raw) as { model?: string; input?: InputItem[] };
  const input = body.input ?? [];
  const record: RecordedRequest = {
    path: req.url,
    authorization: req.headers.authorization,
    threadId: header(req, 'thread-id'),
    userText: lastUserText(input),
    userTexts: userTexts(input),
    images: imagesOf(input),
    // This turn's tool output only: a resumed thread's input holds the earlier turns' too.
    hasToolOutput: input.slice(lastUserIndex(input) + 1).some((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output'),
    inputTokens: Math.ceil(raw.length / 4),
  };
  requests.push(record);
  const keyOk = !options.apiKey || req.headers.authorization === `Bearer ${options.apiKey}`;
  if (!keyOk || record.userText.includes('[[401]]')) return jsonError(res, 401, 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_api_key');
  if (record.userText.includes('[[500]]')) return jsonError(res, 500, 'The server had an error while processing your request.', 'server_error');

  const sse = new SseOut(res, options.gapMs ?? 5, body.model ?? 'gpt-5.5');
  await sse.begin(options.headers?.() ?? {});
  const shell = /\[\[shell(?:: (.+?))?\]\]/.exec(record.userText);
  await sse.reasoning(shell && !record.hasToolOutput ? '**Running a command**\n\nI will run a shell command to answer.' : '**Answering**\n\nA short greeting is enough.');
  const patch = /\[\[patch: (\S+) (.+?)\]\]/.exec(record.userText);
  // A thread's steps through [[spawn]] (the first thread to ask spawns; others answer).
  const spawn = /\[\[spawn: (.+?)\]\]/.exec(record.userText);
  const thread = record.threadId ?? '';
  const step = spawn ? (spawners.get(thread) ?? (record.hasToolOutput ? undefined : 0)) : undefined;
  if (step !== undefined && step < 2) {
    spawners.set(thread, step + 1);
    if (step === 0) await sse.functionCall('spawn_agent', JSON.stringify({ task_name: 'helper', message: spawn![1] }), 'collaboration');
    else await sse.functionCall('wait_agent', JSON.stringify({ timeout_ms: 10000 }), 'collaboration');
  } else if (patch && !record.hasToolOutput) {
    await sse.customToolCall('apply_patch', `*** Begin Patch\n*** Add File: ${patch[1]}\n+${patch[2]}\n*** End Patch\n`);
  } else if (shell && !record.hasToolOutput) {
    await sse.functionCall('exec_command', JSON.stringify({ cmd: shell[1] ?? 'echo hello-from-tool' }));
  } else {
    if (record.userText.includes('[[slow]]')) await sse.pause(options.slowMs ?? 30_000);
    const text = record.hasToolOutput ? `The command ran. Its output was:\n\n${lastToolOutput(input)}` : `Hello from fake-openai. You said: ${record.userText}`;
    await sse.message(text);
  }
  record.totalTokens = await sse.complete(record.inputTokens);
}

interface InputItem {
  type?: string;
  role?: string;
  content?: Array<{ type?: string; text?: string; image_url?: string }> | string;
  output?: unknown;
}

function lastUserText(input: InputItem[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!;
    if (item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content)) continue;
    const text = item.content.map((c) => c.text ?? '').join('');
    if (/^<(environment_context|skill|turn_aborted)/.test(text)) continue;
    return text;
  }
  return '';
}

function userTexts(input: InputItem[]): string[] {
  return input
    .filter((i) => i.type === 'message' && i.role === 'user' && Array.isArray(i.content))
    .map((i) => (i.content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''))
    .filter((t) => !/^<(environment_context|skill|turn_aborted)/.test(t));
}

function imagesOf(input: InputItem[]): string[] {
  return input.flatMap((i) => (i.type === 'message' && i.role === 'user' && Array.isArray(i.content) ? i.content.filter((c) => c.type === 'input_image').map((c) => String(c.image_url ?? '').slice(0, 64)) : []));
}

function lastUserIndex(input: InputItem[]): number {
  for (let i = input.length - 1; i >= 0; i -= 1) if (input[i]!.type === 'message' && input[i]!.role === 'user') return i;
  return -1;
}

function lastToolOutput(input: InputItem[]): string {
  const out = [...input].reverse().find((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output')?.output;
  if (typeof out === 'string') return out.trim();
  if (Array.isArray(out)) return out.map((p: { text?: string }) => p.text ?? '').join('').trim();
  return JSON.stringify(out);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function jsonError(res: ServerResponse, status: number, message: string, code: string): void {
  const requestId = `req_${randomBytes(12).toString('hex')}`;
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
  res.end(JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code } }));
}

/** Writes one Responses-API SSE stream, event by event, with a gap between events. */
class SseOut {
  private seq = 0;
  private index = 0;
  private readonly id = `resp_${randomBytes(12).toString('hex')}`;
  private readonly output: unknown[] = [];
  private outputTokens = 0;
  private gone = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly gapMs: number,
    private readonly model: string,
  ) {
    res.on('close', () => (this.gone = true));
  }

  async begin(headers: Record<string, string>): Promise<void> {
    this.res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'x-request-id': `req_${randomBytes(12).toString('hex')}` });
    const response = { id: this.id, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress', model: this.model, output: [], usage: null };
    await this.event('response.created', { response });
    await this.event('response.in_progress', { response });
  }

  async reasoning(text: string): Promise<void> {
    const item = { type: 'reasoning', id: `rs_${randomBytes(12).toString('hex')}`, summary: [] as unknown[] };
    const output_index = this.index++;
    await this.event('response.output_item.added', { output_index, item });
    await this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    for (const delta of split(text, 2)) await this.event('response.reasoning_summary_text.delta', { item_id: item.id, output_index, summary_index: 0, delta });
    await this.event('response.reasoning_summary_text.done', { item_id: item.id, output_index, summary_index: 0, text });
    await this.event('response.reasoning_summary_part.done', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    const done = { ...item, summary: [{ type: 'summary_text', text }], encrypted_content: null };
    this.output.push(done);
    await this.event('response.output_item.done', { output_index, item: done });
  }

  async message(text: string): Promise<void> {
    const id = `msg_${randomBytes(12).toString('hex')}`;
    const output_index = this.index++;
    await this.event('response.output_item.added', { output_index, item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] } });
    await this.event('response.content_part.added', { item_id: id, output_index, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } });
    for (const delta of text.split(/(?<= )/)) await this.event('response.output_text.delta', { item_id: id, output_index, content_index: 0, delta });
    const part = { type: 'output_text', annotations: [], text };
    await this.event('response.output_text.done', { item_id: id, output_index, content_index: 0, text });
    await this.event('response.content_part.done', { item_id: id, output_index, content_index: 0, part });
    const item = { type: 'message', id, status: 'completed', role: 'assistant', content: [part] };
    this.output.push(item);
    this.outputTokens += Math.ceil(text.length / 4);
    await this.event('response.output_item.done', { output_index, item });
  }

  async functionCall(name: string, args: string, namespace?: string): Promise<void> {
    const item = { type: 'function_call', id: `fc_${randomBytes(12).toString('hex')}`, call_id: `call_${randomBytes(12).toString('hex')}`, name, ...(namespace ? { namespace } : {}), arguments: '', status: 'in_progress' };
    const output_index = this.index++;
    await this.event('response.output_item.added', { output_index, item });
    await this.event('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: args });
    await this.event('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: args });
    const done = { ...item, arguments: args, status: 'completed' };
    this.output.push(done);
    this.outputTokens += Math.ceil(args.length / 4);
    await this.event('response.output_item.done', { output_index, item: done });
  }

  async customToolCall(name: string, input: string): Promise<void> {
    const item = { type: 'custom_tool_call', id: `ctc_${randomBytes(12).toString('hex')}`, call_id: `call_${randomBytes(12).toString('hex')}`, name, input: '', status: 'in_progress' };
    const output_index = this.index++;
    await this.event('response.output_item.added', { output_index, item });
    await this.event('response.custom_tool_call_input.delta', { item_id: item.id, output_index, delta: input });
    await this.event('response.custom_tool_call_input.done', { item_id: item.id, output_index, input });
    const done = { ...item, input, status: 'completed' };
    this.output.push(done);
    this.outputTokens += Math.ceil(input.length / 4);
    await this.event('response.output_item.done', { output_index, item: done });
  }

  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.res.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async complete(inputTokens: number): Promise<number> {
    const usage = { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: this.outputTokens + 16, output_tokens_details: { reasoning_tokens: 16 }, total_tokens: inputTokens + this.outputTokens + 16 };
    await this.event('response.completed', { response: { id: this.id, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: this.model, output: this.output, usage } });
    if (!this.gone) this.res.end();
    return usage.total_tokens;
  }

  private async event(type: string, fields: Record<string, unknown>): Promise<void> {
    if (this.gone) return;
    this.res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...fields })}\n\n`);
    if (this.gapMs > 0) await new Promise((r) => setTimeout(r, this.gapMs));
  }
}

function split(text: string, parts: number): string[] {
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
