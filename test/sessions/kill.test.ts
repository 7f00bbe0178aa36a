import { appendFile, cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { random, runtimeaLines, turns, writeCorpus } from '../../bench/corpus.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';

/**
 * The state the service keeps across restarts (session-index.json, session-counts.json,
 * usage-aggregates.sqlite) is written while it runs. A kill -9 at any moment, logs growing
 * meanwhile, must leave a state the next start uses or discards, never one that changes an
 * answer: after several kills the listing and the usage report equal those of a start with
 * no saved state at all. Between kills, logs and folders are added, removed and replaced.
 */
let home: string;
const logs: string[] = [];

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-kill-'));
  await writeCorpus(home, { sessions: 240, maxTurns: 12, perAgent: 40, now: Date.now() - 3_600_000 });
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (p.endsWith('.jsonl') && p.includes(`${path.sep}.runtimea${path.sep}`)) logs.push(p);
    }
  };
  await walk(home);
}, 60_000);

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/**
 * What a user's tools do while the service is down: a log removed, one added beside others,
 * one replaced by a rename, one grown; a whole agent folder copied in (round 1) or removed
 * (round 3).
 */
async function changeWhileDown(round: number, rand: () => number): Promise<void> {
  const pick = (): string => logs[Math.floor(rand() * logs.length)]!;
  const gone = pick();
  await rm(gone);
  logs.splice(logs.indexOf(gone), 1);
  const source = pick();
  const added = path.join(path.dirname(source), `added-${round}.jsonl`);
  await writeFile(added, await readFile(source));
  logs.push(added);
  const replaced = pick();
  await writeFile(`${replaced}.tmp`, `${runtimeaLines(path.basename(replaced, '.jsonl'), turns(rand, 3), Date.now(), rand).join('\n')}\n`);
  await rename(`${replaced}.tmp`, replaced);
  const grown = pick();
  await appendFile(grown, `${runtimeaLines(path.basename(grown, '.jsonl'), turns(rand, 1), Date.now(), rand).slice(2).join('\n')}\n`);
  const agents = path.dirname(path.dirname(path.dirname(source)));
  if (round === 1) await cp(path.dirname(path.dirname(source)), path.join(agents, 'copied-agent'), { recursive: true });
  if (round === 3) await rm(path.join(agents, 'copied-agent'), { recursive: true, force: true });
}

async function answers(service: ChildService): Promise<unknown> {
  const get = async (target: string): Promise<unknown> => {
    const res = await service.request('GET', target);
    expect(res.status, res.text).toBe(200);
    return res.json();
  };
  return { sessions: await get('/api/sessions?limit=1000'), usage: await get('/api/usage?days=3650') };
}

describe('kill -9 while the state is written', () => {
  it('leaves a state that gives the answers of a start from nothing', async () => {
    const rand = random(3);
    for (let round = 0; round < 5; round++) {
      const service = await startChildService({ home });
      try {
        // Make it read and save: a full usage pass, logs growing, then a kill at some point
        // of the saves (they follow changes by 2 to 5 s).
        await service.request('GET', '/api/usage?days=3650');
        for (let i = 0; i < 3; i++) {
          const log = logs[Math.floor(rand() * logs.length)]!;
          await appendFile(log, `${runtimeaLines(path.basename(log, '.jsonl'), turns(rand, 2), Date.now(), rand).slice(2).join('\n')}\n`);
        }
        await service.request('GET', '/api/usage');
        await new Promise((r) => setTimeout(r, 1500 + rand() * 5000));
      } finally {
        process.kill(service.pid, 'SIGKILL');
        await service.exited;
      }
      await changeWhileDown(round, rand);
    }
    const kept = await startChildService({ home });
    let withState: unknown;
    try {
      withState = await answers(kept);
    } finally {
      await kept.stop();
    }
    await rm(path.join(home, '.space-state'), { recursive: true, force: true });
    const fresh = await startChildService({ home });
    try {
      expect(withState).toEqual(await answers(fresh));
    } finally {
      await fresh.stop();
    }
  }, 180_000);
});
