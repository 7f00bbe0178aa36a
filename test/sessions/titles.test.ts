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
});
