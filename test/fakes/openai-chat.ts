import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A loopback stand-in for an OpenAI Chat Completions provider (`POST /v1/chat/completions`,
 * SSE with a usage chunk), as OpenClaw's custom provider `api: "openai-completions"` calls it
 * (shared fixtures runtimea/openclaw-2026.9.6/provider/). It reads OpenClaw's prompt envelope:
 * the user text is `[<date>] <text>` (the first turn adds `\n\nRuntime: ...`), and OpenClaw
 * adds an internal-context user message after it, which is skipped.
 *   default          "Fake reply #n: you said "<text>""
 *   USE_TOOL         a call of OpenClaw's `ls` tool; once its result is back, "Tool ls returned: ..."
 *   RUN_CMD<c>       a call of OpenClaw's `exec` tool with command c; then "Tool exec returned: ..."
 *   WRITE_FILE<p|c>  a call of OpenClaw's `write` tool (file p, content c); then "Tool write returned: ..."
 *   SLOW_<n>S        n seconds before the first byte        FAIL_500  HTTP 500
 */
export interface FakeChat {
  url: string;
  requests: Array<{ text: string; toolResult: boolean; authorization: string | undefined; /** Every user message's content, as sent. */ users: unknown[] }>;
  close(): Promise<void>;
}

export async function startFakeChat(options: { gapMs?: number } = {}): Promise<FakeChat> {
  const requests: FakeChat['requests'] = [];
  let replies = 0;
  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(raw) as { model?: string; messages?: Message[] };
    const { text, toolResult } = lastTurn(body.messages ?? []);
    requests.push({ text, toolResult: toolResult !== undefined, authorization: req.headers.authorization, users: (body.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content) });
    if (text.includes('FAIL_500')) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"The fake provider failed on purpose.","type":"server_error"}}');
      return;
    }
    const slow = /SLOW_(\d+)S/.exec(text);
    if (slow && toolResult === undefined && !(await pause(res, Number(slow[1]) * 1000))) return;
    const id = `chatcmpl-fake-${++replies}`;
    const chunk = (delta: unknown, finish: string | null = null) => ({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = async (value: unknown) => {
      res.write(`data: ${JSON.stringify(value)}\n\n`);
      await new Promise((r) => setTimeout(r, options.gapMs ?? 30));
    };
    await send(chunk({ role: 'assistant', content: '' }));
    let output: string;
    const call = toolCallOf(text);
    if (call && toolResult === undefined) {
      output = call.arguments;
      await send(chunk({ tool_calls: [{ index: 0, id: `callfake${replies}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
      await send(chunk({ tool_calls: [{ index: 0, function: { arguments: call.arguments } }] }));
      await send(chunk({}, 'tool_calls'));
    } else {
      output = toolResult !== undefined ? `Tool ${call?.name ?? 'ls'} returned: ${toolResult.replace(/\n/g, ' ')}` : `Fake reply #${replies}: you said "${text}"`;
      for (const piece of output.match(/.{1,12}/gs) ?? []) await send(chunk({ content: piece }));
      await send(chunk({}, 'stop'));
    }
    const promptTokens = Math.ceil(raw.length / 4);
    const cached = Math.floor(promptTokens / 2);
    const completion = Math.ceil(output.length / 4);
    await send({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model, choices: [], usage: { prompt_tokens: promptTokens + cached, completion_tokens: completion, total_tokens: promptTokens + cached + completion, prompt_tokens_details: { cached_tokens: cached } } });
    res.end('data: [DONE]\n\n');
  }
  const { url, close } = await serveOnLoopback((req, res, raw) => void handle(req, res, raw));
  return {
    url: `${url}/v1`,
    requests,
    close,
  };
}

interface Message {
  role: string;
  content: unknown;
}

/** The tool call a prompt asks for: USE_TOOL (OpenClaw's `ls`) or RUN_CMD<command> (its `exec`). */
function toolCallOf(text: string): { name: string; arguments: string } | undefined {
  const command = /RUN_CMD<([^>]*)>/.exec(text)?.[1];
  if (command !== undefined) return { name: 'exec', arguments: JSON.stringify({ command }) };
  const write = /WRITE_FILE<([^|>]*)\|([^>]*)>/.exec(text);
  if (write) return { name: 'write', arguments: JSON.stringify({ path: write[1], content: write[2] }) };
  return text.includes('USE_TOOL') ? { name: 'ls', arguments: '{}' } : undefined;
}

const INTERNAL = '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>';

/** The user's own text of the last turn, and the tool result that followed it, if any. */
function lastTurn(messages: Message[]): { text: string; toolResult?: string } {
  const contentOf = (m: Message): string => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
  const userAt = messages.map((m, i) => (m.role === 'user' && !contentOf(m).includes(INTERNAL) ? i : -1)).filter((i) => i >= 0).at(-1);
  if (userAt === undefined) return { text: '' };
  const text = contentOf(messages[userAt]!)
    .replace(/^\[[^\]]*\]\s*/, '')
    .split('\n\nRuntime:')[0]!
    .trim();
  const tool = messages.slice(userAt + 1).find((m) => m.role === 'tool');
  return tool ? { text, toolResult: contentOf(tool) } : { text };
}

function pause(res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
