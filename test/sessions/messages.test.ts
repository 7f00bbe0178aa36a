import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { random, runtimeaLines, turns, writeBigLog } from '../../bench/corpus.js';
import { normalizeRuntimea } from '../../service/transcripts/runtimea.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, fixtureLines, FIXTURES, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';

let svc: TestService;
let home: string;
const day = (h: number) => new Date(Date.UTC(2026, 10, 23, h));

/** A clia transcript of recorded run 08 (two prompts on one stdin), with the service's prompt line before each turn. */
function streamedTwoTurns(sessionId: string): string[] {
  const lines = fixtureLines('clia', '08-stream-json-input');
  const second = lines.findIndex((l, i) => i > 0 && l.includes('"subtype":"init"'));
  const prompt = (content: string, at: Date) => JSON.stringify({ type: 'user', message: { role: 'user', content }, session_id: sessionId, parent_tool_use_id: null, uuid: randomUUID(), timestamp: at.toISOString() });
  return [prompt('First streamed prompt', day(1)), ...lines.slice(0, second), prompt('Second streamed prompt, please run echo hi', day(2)), ...lines.slice(second)];
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-messages-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  const clia = path.join(home, 'clia-space');
  await writeCliSessions(clia, 'clia_code', [
    { agentId: 'p', sessionId: 'clia-tool', updatedAt: 5, lines: cliaTranscript('clia-tool', [{ prompt: 'Say hello', run: '01-new-text', at: day(1) }, { prompt: 'run echo hi', run: '03-resume-tool-bash', at: day(2) }]) },
    { agentId: 'p', sessionId: 'clia-replay', updatedAt: 4, lines: streamedTwoTurns('clia-replay') },
    { agentId: 'p', sessionId: 'clia-denied', updatedAt: 3, lines: cliaTranscript('clia-denied', [{ prompt: 'touch denied.txt', run: '05-permission-denied', at: day(3) }]) },
    { agentId: 'p', sessionId: 'clia-thinking', updatedAt: 2, lines: cliaTranscript('clia-thinking', [{ prompt: 'think about 2+2', run: '11-thinking-partial', at: day(4) }]) },
    { agentId: 'p', sessionId: 'clia-error', updatedAt: 1, lines: cliaTranscript('clia-error', [{ prompt: 'hi', run: '40-error-401-bad-key-noretry', at: day(5) }]) },
    { agentId: 'p', sessionId: 'clia-empty', title: 'no transcript yet', updatedAt: 1, lines: [] },
  ]);
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    {
      agentId: 'q',
      sessionId: 'clib-all',
      updatedAt: 6,
      lines: clibTranscript([
        { prompt: 'Say hello', run: 'new-text', at: day(1) },
        { prompt: '[[shell]] Run a shell command', run: 'shell-gpt-5.5', at: day(2) },
        { prompt: '[[patch]] Create hello.txt', run: 'patch-file-change', at: day(3) },
        { prompt: '[[500]] hi', run: 'err-500', at: day(4) },
        { prompt: 'Say hello', run: 'unknown-model-warning', at: day(5) },
        { prompt: '[[slow]] take your time', run: 'interrupt-sigint', at: day(6) },
      ]),
    },
  ]);
  const legacy = path.join(clia, 'old', '.sessions');
  await mkdir(legacy, { recursive: true });
  const native = (await readFile(path.join(FIXTURES, 'clia', 'native-session.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  await writeFile(path.join(legacy, 'legacy-native.json'), JSON.stringify({ sessionId: 'legacy-native', updatedAt: 1, messages: native }));
  await writeFile(path.join(legacy, 'legacy-plain.json'), JSON.stringify({ title: 'plain', messages: [{ role: 'user', content: 'hi there', timestamp: '2025-05-01T10:00:00Z' }, { role: 'assistant', text: 'hello!', timestamp: '2025-05-01T10:00:02Z' }, { role: 'system', content: 'not shown' }] }));
  svc = await startService({ home });
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

async function messages(id: string, query = 'limit=1000'): Promise<any> {
  const res = await svc.get(`/api/messages/${id}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json();
}

const brief = (m: any) => [m.role, m.text || m.tool_call?.name || m.tool_result?.output];

describe('normalization of every log format to the Message envelope', () => {
  it('runtimea file store: prompts, replies, tool calls with input, tool results with output', async () => {
    const body = await messages('06ea5b77-66f5-409a-96a6-9287e9225d4f');
    expect(body.total).toBe(8);
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'tool', 'tool', 'assistant']);
    const [first, reply] = body.messages;
    expect(first).toEqual({ id: '5cdb0b02', role: 'user', text: 'hello there', tool_call: null, tool_result: null, timestamp: '2026-11-21T15:17:50.514Z' });
    expect(reply.text).toBe('Fake reply #1: you said "hello there"');
    expect(body.messages[5]).toMatchObject({ role: 'tool', text: '', tool_call: { id: 'call_fake_3', name: 'session_status', input: {} }, tool_result: null });
    expect(body.messages[6]).toMatchObject({ role: 'tool', tool_call: null, tool_result: { tool_call_id: 'call_fake_3', name: 'session_status', is_error: false } });
    expect(body.messages[6].tool_result.output).toMatch(/^🦞 OpenClaw 2026\.7\.1/);
  });

  it('runtimea SQLite store: the tool_call wrapper and nested tools keep the real tool name', async () => {
    const body = await messages('f509bcde-19b1-43aa-b4a5-8f33a2a29b0c');
    expect(body.messages.map(brief).map((b: any[]) => b[0])).toEqual(['user', 'tool', 'tool', 'tool', 'user', 'assistant']);
    expect(body.messages[1].tool_call).toEqual({ id: 'call_fake_10', name: 'get_weather', input: {} });
    expect(body.messages[2]).toMatchObject({ tool_call: { name: 'get_weather' }, tool_result: { name: 'get_weather', is_error: false } });
    expect(body.messages[2].tool_result.output).toContain('Tool execution delegated to client');
    expect(body.messages[5].text).toBe('Client tool e2362f8bf returned: sunny, 21C');
  });

  it('clia: partial-message stream events, init and result lines are not messages', async () => {
    const body = await messages('clia-tool');
    expect(body.messages.map(brief)).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Say hello'],
      ['user', 'run echo hi'],
      ['assistant', "I'll run that command."],
      ['tool', 'Bash'],
      ['tool', 'hi'],
      ['assistant', 'The tool returned: hi'],
    ]);
    expect(body.messages[4].tool_call).toEqual({ id: 'toolu_01dIVO3GQRh6-Hwy_aMCJfg1', name: 'Bash', input: { command: 'echo hi', description: 'Print hi' } });
    expect(body.messages[5].tool_result).toEqual({ tool_call_id: 'toolu_01dIVO3GQRh6-Hwy_aMCJfg1', output: 'hi', is_error: false });
    expect(body.messages[0].timestamp).toBe(day(1).toISOString());
    expect(body.messages[1].timestamp).toBe('2026-11-21T15:24:41.300Z');
  });

  it('clia: the CLI echo of a prompt (isReplay) is not a second user message', async () => {
    const body = await messages('clia-replay');
    expect(body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.text)).toEqual(['First streamed prompt', 'Second streamed prompt, please run echo hi']);
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant']);
  });

  it('clia: a refused tool is an error result; thinking is not shown; API errors are assistant text', async () => {
    const denied = (await messages('clia-denied')).messages;
    expect(denied.map((m: any) => m.role)).toEqual(['user', 'tool', 'tool', 'assistant']);
    expect(denied[2].tool_result.is_error).toBe(true);
    expect(denied[2].tool_result.output).toContain('needs approval');
    const thinking = (await messages('clia-thinking')).messages;
    expect(thinking.map(brief)).toEqual([['user', 'think about 2+2'], ['assistant', 'After thinking: the answer is 4.']]);
    const error = (await messages('clia-error')).messages;
    expect(error.map(brief)).toEqual([['user', 'hi'], ['assistant', 'Invalid API key · Fix external API key']]);
  });

  it('clib: messages, commands and file changes with their results, failed turns; no reasoning or warnings', async () => {
    const body = await messages('clib-all');
    expect(body.messages.map(brief)).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Hello from fake-openai. You said: Say hello'],
      ['user', '[[shell]] Run a shell command'],
      ['tool', 'command_execution'],
      ['assistant', expect.stringContaining('hello-from-tool')],
      ['user', '[[patch]] Create hello.txt'],
      ['tool', 'file_change'],
      ['assistant', expect.stringContaining('Patch result')],
      ['user', '[[500]] hi'],
      ['assistant', 'We’re currently experiencing high demand, which may cause temporary errors.'],
      ['user', 'Say hello'],
      ['assistant', 'Hello from fake-openai. You said: Say hello'],
      ['user', '[[slow]] take your time'],
    ]);
    const shell = body.messages[3];
    expect(shell.tool_call).toEqual({ id: 'item_1', name: 'command_execution', input: { command: "/bin/bash -lc 'echo hello-from-tool && pwd'" } });
    expect(shell.tool_result).toEqual({ tool_call_id: 'item_1', name: 'command_execution', output: 'hello-from-tool\n/home/user/rt-codex/fx/proj\n', is_error: false, details: { exit_code: 0, status: 'completed' } });
    expect(body.messages[6].tool_call.input).toEqual({ changes: [{ path: '/home/user/rt-codex/fx/proj/hello.txt', kind: 'add' }] });
    expect(new Set(body.messages.map((m: any) => m.id)).size).toBe(body.messages.length);
  });

  it('clia legacy records: CLI records or plain role/content messages', async () => {
    expect((await messages('legacy-native')).messages.map(brief)).toEqual([
      ['user', 'Hello with CLAUDE_CONFIG_DIR'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Hello with CLAUDE_CONFIG_DIR'],
    ]);
    expect((await messages('legacy-plain')).messages).toEqual([
      { id: '@0', role: 'user', text: 'hi there', tool_call: null, tool_result: null, timestamp: '2025-05-01T10:00:00.000Z' },
      { id: '@1', role: 'assistant', text: 'hello!', tool_call: null, tool_result: null, timestamp: '2025-05-01T10:00:02.000Z' },
    ]);
  });
});

describe('GET /api/messages paging', () => {
  it('offset -1 (the default) is the newest page, starting at max(0, total - limit)', async () => {
    const all = (await messages('clia-tool')).messages;
    expect(await messages('clia-tool', 'limit=3')).toEqual({ total: 7, offset: 4, messages: all.slice(4) });
    expect(await messages('clia-tool', 'offset=-1&limit=3')).toEqual({ total: 7, offset: 4, messages: all.slice(4) });
    expect(await messages('clia-tool', 'limit=50')).toEqual({ total: 7, offset: 0, messages: all });
    expect(await messages('clia-tool', '')).toEqual({ total: 7, offset: 0, messages: all });
  });

  it('a non-negative offset starts there; past the end or limit 0 is an empty page', async () => {
    const all = (await messages('clib-all')).messages;
    expect(await messages('clib-all', 'offset=2&limit=3')).toEqual({ total: 13, offset: 2, messages: all.slice(2, 5) });
    expect(await messages('clib-all', 'offset=11&limit=10')).toEqual({ total: 13, offset: 11, messages: all.slice(11) });
    expect(await messages('clib-all', 'offset=13')).toEqual({ total: 13, offset: 13, messages: [] });
    expect(await messages('clib-all', 'offset=500')).toEqual({ total: 13, offset: 500, messages: [] });
    expect(await messages('clib-all', 'limit=0')).toEqual({ total: 13, offset: 13, messages: [] });
    expect(await messages('clib-all', 'offset=0&limit=0')).toEqual({ total: 13, offset: 0, messages: [] });
  });

  it('pages the SQLite store and legacy records the same way', async () => {
    const all = (await messages('7cb4cb09-ce41-4864-ae89-03f1fb3be868')).messages;
    expect(all).toHaveLength(10);
    expect(await messages('7cb4cb09-ce41-4864-ae89-03f1fb3be868', 'limit=4')).toEqual({ total: 10, offset: 6, messages: all.slice(6) });
    expect(await messages('7cb4cb09-ce41-4864-ae89-03f1fb3be868', 'offset=3&limit=2')).toEqual({ total: 10, offset: 3, messages: all.slice(3, 5) });
    expect(await messages('legacy-plain', 'limit=1')).toMatchObject({ total: 2, offset: 1, messages: [{ text: 'hello!' }] });
  });

  it('refuses bad limit and offset values', async () => {
    const cases: Array<[string, string]> = [
      ['offset=-2', 'offset must be -1 (the newest page) or an integer of 0 or more'],
      ['offset=abc', 'offset must be -1 (the newest page) or an integer of 0 or more'],
      ['offset=1.5', 'offset must be -1 (the newest page) or an integer of 0 or more'],
      ['limit=-1', 'limit must be an integer from 0 to 1000'],
      ['limit=ten', 'limit must be an integer from 0 to 1000'],
      ['limit=5000', 'limit must be an integer from 0 to 1000'],
    ];
    for (const [query, detail] of cases) {
      const res = await svc.get(`/api/messages/clia-tool?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json()).toEqual({ detail });
    }
  });

  it('404 Session not found: unknown id, a session whose log is missing', async () => {
    for (const id of ['no-such-session', 'clia-empty', '..%2F..%2Fetc%2Fpasswd']) {
      const res = await svc.get(`/api/messages/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.json()).toEqual({ detail: 'Session not found' });
    }
  });
});

describe('damaged and huge logs never break a page', () => {
  let dir: string;
  const rand = random(42);
  const good = (n: number) => runtimeaLines(`0000000${n}-0000-4000-a000-000000000000`, turns(rand, 3), Date.parse('2026-01-01T00:00:00Z') + n * 1e7, rand);

  beforeAll(async () => {
    dir = runtimeaSessionsDir(home, 'damaged');
    await mkdir(dir, { recursive: true });
  });

  async function write(id: string, chunks: Array<string | Buffer>): Promise<string> {
    const file = path.join(dir, `${id}.jsonl`);
    await writeFile(file, Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))));
    await svc.service.ctx.sessions.markDirty([file]);
    return file;
  }

  const lines = (ls: string[]) => `${ls.join('\n')}\n`;

  it('skips a corrupt line, marks a damaged record, decodes invalid UTF-8 with U+FFFD', async () => {
    const before = good(1);
    const after = good(2).slice(2);
    const userLine = (text: string) => `{"type":"message","id":"u-${text.length}","parentId":null,"timestamp":"2026-02-01T00:00:00.000Z","message":{"role":"user","content":"${text}"}}`;
    await write('damaged-1', [
      lines(before),
      'this is not json at all\n',
      '{"type":"message","id":"cut","parentId":null,"timestamp":"2026-02-01T00:00:00.000Z","message":{"role":"user","content":"half a rec}\n',
      Buffer.concat([Buffer.from(userLine('caf').slice(0, -3)), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}}\n')]),
      lines(after),
    ]);
    const body = await messages('damaged-1');
    const expected = countByParsing(before) + countByParsing(after) + 2;
    expect(body.total).toBe(expected);
    const damaged = body.messages.find((m: any) => m.id.startsWith('@'));
    expect(damaged).toMatchObject({ role: 'user', text: expect.stringMatching(/^\[unreadable record: \d+ bytes that are not valid JSON\]$/) });
    const utf = body.messages.find((m: any) => m.text.startsWith('caf'));
    expect(utf.text).toBe('caf\uFFFD(\uFFFD');
    // Pages around the damage agree with the whole
    for (const offset of [0, 3, expected - 5]) expect((await messages('damaged-1', `offset=${offset}&limit=4`)).messages).toEqual(body.messages.slice(offset, offset + 4));
    expect((await messages('damaged-1', 'limit=5')).messages).toEqual(body.messages.slice(-5));
  });

  it('cuts a 5 MB record with a marker and drops a line over 8 MiB', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    const huge = 'y'.repeat(9 * 1024 * 1024);
    const result = JSON.stringify({ type: 'message', id: 'big-result', parentId: null, timestamp: '2026-02-01T00:00:00.000Z', message: { role: 'toolResult', toolCallId: 'c1', toolName: 'exec', content: [{ type: 'text', text: big }], isError: false } });
    const hugeLine = JSON.stringify({ type: 'message', id: 'huge', parentId: null, timestamp: '2026-02-01T00:00:00.000Z', message: { role: 'user', content: huge } });
    const before = good(3);
    await write('damaged-2', [lines(before), `${result}\n`, `${hugeLine}\n`, lines(['{"type":"message","id":"last","parentId":null,"timestamp":"2026-02-01T00:00:01.000Z","message":{"role":"user","content":"after the big ones"}}'])]);
    const body = await messages('damaged-2', 'limit=2');
    expect(body.total).toBe(countByParsing(before) + 2);
    const [cut, last] = body.messages;
    expect(cut.id).toBe('big-result');
    expect(cut.tool_result.output).toHaveLength(64 * 1024 + `\n[truncated: ${big.length - 64 * 1024} more characters]`.length);
    expect(cut.tool_result.output.endsWith(`[truncated: ${big.length - 64 * 1024} more characters]`)).toBe(true);
    expect(last.text).toBe('after the big ones');
    expect((await messages('damaged-2', `offset=${countByParsing(before) - 1}&limit=3`)).messages.map((m: any) => m.id)).toEqual([expect.any(String), 'big-result', 'last']);
  });

  it('does not count a half-written last line until it is complete', async () => {
    const base = good(4);
    const next = '{"type":"message","id":"pending","parentId":null,"timestamp":"2026-02-01T00:00:00.000Z","message":{"role":"user","content":"finished later"}}';
    const file = await write('damaged-3', [lines(base), next.slice(0, 40)]);
    const first = await messages('damaged-3', 'limit=1');
    expect(first.total).toBe(countByParsing(base));
    expect(first.messages[0].id).not.toBe('pending');
    await appendFile(file, `${next.slice(40)}\n`);
    const second = await messages('damaged-3', 'limit=1');
    expect(second).toMatchObject({ total: countByParsing(base) + 1, messages: [{ id: 'pending', text: 'finished later' }] });
  });

  it('pages a 12 MB log consistently forward, backward and from checkpoints, and follows growth and rewrites', async () => {
    const file = path.join(dir, 'big-log.jsonl');
    await writeBigLog(file, 'runtimea', 12 * 1024 * 1024);
    await svc.service.ctx.sessions.markDirty([file]);
    const text = await readFile(file, 'utf8');
    const expected = countByParsing(text.split('\n').filter(Boolean));
    const newest = await messages('big-log', 'limit=1000');
    expect(newest.total).toBe(expected);
    expect(newest.offset).toBe(expected - 1000);
    const ids: string[] = [];
    for (let offset = 0; offset < expected; offset += 1000) ids.push(...(await messages('big-log', `offset=${offset}&limit=1000`)).messages.map((m: any) => m.id));
    expect(ids).toHaveLength(expected);
    expect(new Set(ids).size).toBe(expected);
    expect(newest.messages.map((m: any) => m.id)).toEqual(ids.slice(-1000));
    for (const offset of [1, 499, 500, 501, 7777, expected - 1001, expected - 3]) {
      expect((await messages('big-log', `offset=${offset}&limit=7`)).messages.map((m: any) => m.id), String(offset)).toEqual(ids.slice(offset, offset + 7));
    }
    // grown: only the new bytes are read, and the new messages show
    await appendFile(file, `${runtimeaLines('feedbeef-0000-4000-a000-000000000000', turns(random(9), 2), Date.parse('2027-01-01T00:00:00Z'), random(9)).slice(2).join('\n')}\n`);
    const grown = await messages('big-log', 'limit=2');
    expect(grown.total).toBeGreaterThan(expected);
    expect(grown.messages.at(-1).id.startsWith('feedbeef')).toBe(true);
    // rewritten atomically with other content: counted again
    const replacement = `${file}.new`;
    const small = good(5);
    await writeFile(replacement, lines(small));
    await rename(replacement, file);
    expect((await messages('big-log')).total).toBe(countByParsing(small));
  });
});

/** The oracle: every line parsed and normalized, no peeking. */
function countByParsing(ls: string[]): number {
  let n = 0;
  for (const line of ls) n += normalizeRuntimea(JSON.parse(line), { position: 0, fallbackTime: '' }).filter((e) => e.kind === 'message').length;
  return n;
}
