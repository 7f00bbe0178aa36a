import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive } from './harness.js';
import { startHostile, type HostileService } from './hostile-runtime.js';

/**
 * Damaged session logs (#69-#72): a corrupt line in the middle, a half-written last line (a
 * writer is appending), one 50 MB line, invalid UTF-8. The readers (/api/messages,
 * /api/sessions, search, usage) skip what they cannot parse, answer 200 with the rest, keep
 * memory bounded, and never rewrite the log. A session log is written by a real turn first.
 */
let svc: HostileService;
let sessionId: string;
let log: string;
beforeAll(async () => {
  svc = await startHostile();
  const first = await svc.open('slow 2', { agent_id: 'logs' });
  await first.sse.ended;
  sessionId = first.sessionId!;
  log = path.join(svc.home, 'clia-space', 'logs', 'sessions', `${sessionId}.jsonl`);
  const second = await svc.open('second question', { session_id: sessionId });
  await second.sse.ended;
});
afterAll(() => svc.close());

async function messages(): Promise<Array<{ role: string; text?: string }>> {
  const res = await svc.get(`/api/messages/${sessionId}?limit=200`);
  expect(res.status, res.text.slice(0, 200)).toBe(200);
  return res.json().messages;
}

describe('damaged session logs', () => {
  it('#69 a corrupt line in the middle is skipped; the rest is returned', async () => {
    const good = await messages();
    expect(good.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const lines = (await readFile(log, 'utf8')).split('\n');
    lines.splice(Math.floor(lines.length / 2), 0, '{"type":"assistant","message":{"content":[{"type":"te', 'not json at all', '\u0000\u0000\u0000');
    await writeFile(log, lines.join('\n'));
    expect(await messages()).toEqual(good);
  });

  it('#70 a half-written last line (a writer is appending) is ignored, not a 500', async () => {
    const before = await messages();
    await appendFile(log, '{"type":"user","message":{"role":"user","content":"half');
    expect(await messages()).toEqual(before);
    expect((await svc.get('/api/sessions')).status).toBe(200);
  });

  it('#72 invalid UTF-8 in a log line becomes U+FFFD; in a content file too', async () => {
    await appendFile(log, '\n');
    const line = Buffer.concat([Buffer.from('{"type":"user","message":{"role":"user","content":"bad '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' bytes"},"timestamp":"2026-11-23T00:00:00.000Z"}\n')]);
    await appendFile(log, line);
    const all = await messages();
    expect(all.at(-1)).toMatchObject({ role: 'user', text: expect.stringContaining('bad \ufffd') });
    const file = path.join(svc.home, 'latin1.txt');
    await writeFile(file, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect((await svc.post('/api/files/content', { path: file })).json()).toEqual({ content: 'caf\ufffd\n', path: file });
  });

  it('#71 one 50 MB line is skipped with memory bounded; every reader still answers', async () => {
    const rss = process.memoryUsage().rss;
    await appendFile(log, `{"type":"assistant","message":{"content":[{"type":"text","text":"${'z'.repeat(50 * 1024 * 1024)}"}]}}\n`);
    await appendFile(log, '{"type":"user","message":{"role":"user","content":"after the huge line"},"timestamp":"2026-11-23T00:00:01.000Z"}\n');
    const all = await messages();
    expect(all.at(-1)).toMatchObject({ role: 'user', text: 'after the huge line' });
    expect(all.some((m) => (m.text ?? '').length > 1024 * 1024)).toBe(false);
    for (const target of ['/api/sessions', '/api/sessions/search?q=second', `/api/sessions/${sessionId}`, '/api/usage', '/runtimea/usage/summary', '/api/fts/search?q=huge', '/api/fts/index/logs']) {
      const res = await svc.get(target);
      expect(res.status, target).toBeLessThan(500);
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(250 * 1024 * 1024);
    await expectAlive(svc.port);
  });

  it('no reader rewrote the log', async () => {
    const text = await readFile(log, 'utf8');
    expect(text).toContain('not json at all');
    expect(text).toContain('after the huge line');
  });
});
