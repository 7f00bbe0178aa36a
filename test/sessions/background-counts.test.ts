import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCorpus, type CorpusSession } from '../../bench/corpus.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The background count walks the whole listing, newest first, a slice at a time (other work
 * has the thread between slices): every log is counted, however far past the first slices.
 */
let home: string;
let corpus: CorpusSession[];

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-background-counts-'));
  corpus = await writeCorpus(home, { sessions: 2_500 });
});

afterAll(() => rm(home, { recursive: true, force: true }));

/** The `logs` figure of the walk's "counts ready" line. */
async function countedInBackground(svc: TestService): Promise<number> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const line = svc.logs.join('').split('\n').find((l) => l.includes('"session message counts ready"'));
    if (line) return JSON.parse(line).logs as number;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the background count never ended');
}

/** The whole listing, page by page. */
async function listingOf(svc: TestService): Promise<Array<{ session_id: string; message_count: number }>> {
  const out: Array<{ session_id: string; message_count: number }> = [];
  for (;;) {
    const page = (await svc.get(`/api/sessions?offset=${out.length}&limit=1000`)).json();
    out.push(...page.sessions);
    if (out.length >= page.total) return out;
  }
}

const savedCounts = async (): Promise<string[]> => (await readFile(path.join(home, '.space-state', 'session-counts.json'), 'utf8')).split('\n').slice(1, -1);

describe('the background message count', () => {
  it('counts every log of the listing, and after a restart only the one that grew while down', async () => {
    const first = await startService({ home });
    let listing: Array<{ session_id: string; message_count: number }>;
    try {
      expect(await countedInBackground(first)).toBe(2_500);
      listing = await listingOf(first);
    } finally {
      await first.close();
    }
    expect(await savedCounts()).toHaveLength(2_500);

    // An old clia session, far past the first slices of the newest-first walk, grows while down.
    const clia = new Set(corpus.filter((s) => s.runtime === 'clia').map((s) => s.id));
    const old = listing.slice(2_000).find((s) => clia.has(s.session_id))!;
    const { agentId } = corpus.find((s) => s.id === old.session_id)!;
    const file = path.join(home, 'clia-space', agentId, 'sessions', `${old.session_id}.jsonl`);
    const prompt = JSON.parse((await readFile(file, 'utf8')).split('\n')[0]!);
    await appendFile(file, `${JSON.stringify({ ...prompt, uuid: randomUUID(), message: { role: 'user', content: 'one more, while the service was down' } })}\n`);

    const second = await startService({ home });
    try {
      expect(await countedInBackground(second)).toBe(1);
      const after = await listingOf(second);
      expect(after.find((s) => s.session_id === old.session_id)!.message_count).toBe(old.message_count + 1);
    } finally {
      await second.close();
    }
  });
});
