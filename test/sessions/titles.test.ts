import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startService } from '../helpers/service.js';
import { cliaTranscript, writeCliSessions } from './fixtures.js';

/**
 * Sessions their index leaves untitled are named by their first prompt: the first page reads
 * its own sessions' first lines, and a background pass the rest, so a search made before any
 * page finds sessions far past it, on a first start and on a restart from the saved index.
 */
let home: string;
const COUNT = 120;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-titles-'));
  const day = Date.parse('2026-11-20T00:00:00Z');
  await writeCliSessions(
    path.join(home, 'clia-space'),
    'clia_code',
    Array.from({ length: COUNT }, (_, i) => ({
      agentId: 'p',
      sessionId: `untitled-${i}`,
      updatedAt: day + i * 60_000,
      lines: cliaTranscript(`untitled-${i}`, [{ prompt: `Question number ${i} about walruses`, run: '01-new-text', at: new Date(day + i * 60_000) }]),
    })),
  );
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A search before any page, then the whole listing's titles. */
async function searchFirst(): Promise<{ hits: string[]; titles: string[] }> {
  const svc = await startService({ home });
  try {
    const hits = (await svc.get('/api/sessions/search?q=number%207%20about&limit=1000')).json().sessions.map((s: any) => s.title);
    const titles = (await svc.get('/api/sessions?limit=1000')).json().sessions.map((s: any) => s.title);
    return { hits, titles };
  } finally {
    await svc.close();
  }
}

describe('titles from first prompts', () => {
  it('are all there for a search made before any page, on a first start and a restart', async () => {
    const first = await searchFirst();
    // The oldest of them is 113 sessions past the newest: far past a first page.
    expect(first.hits).toEqual(['Question number 7 about walruses']);
    expect(first.titles).toHaveLength(COUNT);
    expect(first.titles.every((t) => /^Question number \d+ about walruses$/.test(t))).toBe(true);
    expect(await searchFirst()).toEqual(first);
  });

  it('come from past the first 64 KB when a log opens with longer records', async () => {
    // 80 KB of system records before the first prompt, in an old session far past the first page.
    const filler = Array.from({ length: 20 }, () => JSON.stringify({ type: 'system', subtype: 'init', session_id: 'late-prompt', note: 'x'.repeat(4000) }));
    const day = Date.parse('2026-01-01T00:00:00Z');
    await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
      { agentId: 'p', sessionId: 'late-prompt', updatedAt: day, lines: [...filler, ...cliaTranscript('late-prompt', [{ prompt: 'A prompt after the filler', run: '01-new-text', at: new Date(day) }])] },
    ]);
    const { titles } = await searchFirst();
    expect(titles).toHaveLength(COUNT + 1);
    expect(titles.at(-1)).toBe('A prompt after the filler');
  });
});
