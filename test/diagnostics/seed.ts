import path from 'node:path';
import { writeCliSessions } from '../sessions/fixtures.js';
import { clibTurn, cliaTurn, runtimeaTranscript, writeRuntimeaStore, type RuntimeaTurn } from '../usage/seed.js';

/**
 * A workspace as a user would have it after a month of work, in the real on-disk formats:
 * OpenClaw transcripts with their models' costs (runtimea), and clia and clib sessions
 * written through the service's own store (recorded CLI output, retimed). Times are
 * relative to now, so "the last 30 days" holds whenever the test runs.
 */
const DAY = 86_400_000;
const HOUR = 3_600_000;

const CLIA = [
  ['website', 'Fix the flaky upload test in the files API'],
  ['website', 'Why does the landing page load two fonts?'],
  ['billing-api', 'Add an idempotency key to POST /invoices'],
  ['website', 'Write release notes for 0.4'],
  ['billing-api', 'Explain the retry policy of the webhook sender'],
  ['research', 'Summarize the three papers on speculative decoding'],
  ['website', 'Make the pricing table responsive'],
  ['billing-api', 'Find where rounding errors creep into VAT totals'],
  ['research', 'Compare SQLite WAL and rollback journal for our workload'],
  ['website', 'Translate the onboarding copy to German'],
] as const;

const CLIB = [
  ['tools', 'Port the CSV importer to streaming'],
  ['tools', 'Add shell completions to the CLI'],
  ['infra', 'Tidy the Dockerfile and pin base images'],
  ['tools', 'Write unit tests for the date parser'],
  ['infra', 'Set up a nightly backup check'],
  ['tools', 'Profile the report generator'],
] as const;

/** runtimea conversations: a prompt, the day it was sent (days ago) and the model calls it made. */
const RUNTIMEA: Array<{ prompt: string; daysAgo: number; model: string; calls: number[] }> = [
  { prompt: 'Draft the Q3 planning memo', daysAgo: 0, model: 'claude-sonnet-5-5', calls: [0.42, 0.31] },
  { prompt: 'Triage this week\u2019s support inbox', daysAgo: 2, model: 'claude-sonnet-5-5', calls: [0.88, 0.64, 0.35] },
  { prompt: 'Research vector databases for the search revamp', daysAgo: 5, model: 'claude-opus-5-5', calls: [1.9, 1.25] },
  { prompt: 'Prepare the board update slides outline', daysAgo: 8, model: 'claude-sonnet-5-5', calls: [0.57] },
  { prompt: 'Reconcile the March expenses spreadsheet', daysAgo: 11, model: 'gpt-6-luna', calls: [0.22, 0.18, 0.3] },
  { prompt: 'Plan the team offsite agenda', daysAgo: 15, model: 'claude-sonnet-5-5', calls: [0.75] },
  { prompt: 'Summarize customer interviews from last sprint', daysAgo: 19, model: 'claude-opus-5-5', calls: [2.4] },
  { prompt: 'Write the hiring brief for a data engineer', daysAgo: 23, model: 'gpt-6-luna', calls: [0.33, 0.27] },
  { prompt: 'Outline a blog post on local-first agents', daysAgo: 27, model: 'claude-sonnet-5-5', calls: [0.61, 0.44] },
];

export interface SeededSession {
  sessionId: string;
  title: string;
  updatedAt: number;
}

/** The seeded sessions, newest first (the order /api/sessions must give). */
export async function seedWorkspace(home: string, now = Date.now()): Promise<SeededSession[]> {
  const seeded: SeededSession[] = [];
  const today = Math.floor(now / DAY) * DAY;
  // Early in the day UTC, so every seeded time of "today" is already past.
  const sentAt = (daysAgo: number, hours: number): Date => new Date(Math.min(today - daysAgo * DAY + hours * HOUR, now - (daysAgo + 1) * 60_000));

  const runtimea = RUNTIMEA.map((r, i) => {
    const id = `a0a00000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const sent = sentAt(r.daysAgo, 1);
    const turn: RuntimeaTurn = {
      prompt: r.prompt,
      sent,
      calls: r.calls.map((cost, n) => ({ at: new Date(sent.getTime() + (n + 1) * 20_000), model: r.model, cost, usage: { input: Math.round(cost * 40_000), output: Math.round(cost * 6_000), cacheRead: Math.round(cost * 90_000), cacheWrite: 0 }, text: 'Done.' })),
    };
    const updatedAt = turn.calls.at(-1)!.at.getTime();
    seeded.push({ sessionId: id, title: r.prompt, updatedAt });
    return { id, updatedAt, lines: runtimeaTranscript(id, [turn]) };
  });
  writeRuntimeaStore(home, runtimea);

  const clia = CLIA.map(([agentId, prompt], i) => {
    const sent = sentAt(i * 3 + 1, 2);
    const sessionId = `c11a0000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    seeded.push({ sessionId, title: prompt, updatedAt: sent.getTime() + HOUR });
    const run = i % 3 === 0 ? '03-resume-tool-bash' : '02-resume-text';
    return { agentId, sessionId, updatedAt: sent.getTime() + HOUR, directory: path.join(home, 'space-projects', agentId), lines: cliaTurn(sessionId, prompt, sent, run, 800) };
  });
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', clia);

  const clib = CLIB.map(([agentId, prompt], i) => {
    const sent = sentAt(i * 4 + 3, 3);
    const sessionId = `c11b0000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    seeded.push({ sessionId, title: prompt, updatedAt: sent.getTime() + HOUR });
    return { agentId, sessionId, updatedAt: sent.getTime() + HOUR, directory: path.join(home, 'space-projects', agentId), lines: clibTurn(prompt, sent, 'new-text', 'gpt-5.5') };
  });
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', clib);

  return seeded.sort((a, b) => b.updatedAt - a.updatedAt);
}
