import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES, writeCliSessions } from '../sessions/fixtures.js';
import { at, awayFromMidnight, clibTurn, MIDNIGHT_WAIT_MS, nativeRecords, type NativeMessage, usageOf } from './seed.js';

/**
 * Claude Code writes one on-disk record per content block of a message, each with the
 * message's usage so far: records of one message id (and request id) with growing
 * `output_tokens`. The message counts once, with the record of the most output tokens (as
 * ccusage 20 counts it), wherever that record is and whenever it is read.
 *
 * claude-haiku-4-5: in 1e-6, out 5e-6, cache read 1e-7, cache write 1.25e-6 per token.
 */
const ID = '88888888-8888-4888-8888-888888888888';
let svc: TestService;
let home: string;
let log: string;

const usage = (output: number) => ({ input_tokens: 3, output_tokens: output, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 });
const part = (output: number, second: number, text: string): NativeMessage => ({
  id: 'msg_A',
  requestId: 'req_A',
  model: 'claude-haiku-4-5',
  usage: usage(output),
  blocks: [{ at: at(0, `00:00:${String(second).padStart(2, '0')}.000`), text }],
});
const lines = (messages: NativeMessage[]): string[] => nativeRecords(ID, 'write a poem', at(0, '00:00:00.000'), messages).map((r) => JSON.stringify(r));

beforeAll(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-dedupe-'));
  // The largest in the middle: 1, 50, then 30 output tokens for the same message.
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'proj', sessionId: ID, title: 'poem', updatedAt: at(0, '00:00:10.000').getTime(), lines: lines([part(1, 1, 'Roses'), part(50, 2, 'are red'), part(30, 3, 'violets')]) },
  ]);
  log = path.join(home, 'clia-space', 'proj', 'sessions', `${ID}.jsonl`);
  svc = await startService({ home });
}, MIDNIGHT_WAIT_MS + 30_000);

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

describe('records of one Claude Code message with growing output', () => {
  it('count once, with the most output tokens', async () => {
    const body = await usageOf(svc);
    expect(body.total_tokens).toEqual({ input: 3, output: 50, cache_read: 1000, cache_write: 200 });
    // 3e-6 + 50 * 5e-6 + 1000 * 1e-7 + 200 * 1.25e-6
    expect(body.total_cost_usd).toBe(0.000603);
    expect(body.by_model).toEqual([expect.objectContaining({ model: 'claude-haiku-4-5', tokens_out: 50, priced: true })]);
  });

  it('a larger record appended later replaces what was counted; a smaller one changes nothing', async () => {
    await appendFile(log, `${lines([part(80, 4, 'are blue')]).slice(1).join('\n')}\n`);
    const grown = await usageOf(svc);
    expect(grown.total_tokens).toEqual({ input: 3, output: 80, cache_read: 1000, cache_write: 200 });
    expect(grown.total_cost_usd).toBe(0.000753);
    await appendFile(log, `${lines([part(60, 5, 'and so')]).slice(1).join('\n')}\n`);
    expect((await usageOf(svc)).total_tokens.output).toBe(80);
  });
});

describe('codex usage: cached input is inside input_tokens', () => {
  // The rollout codex itself wrote for the recorded `shell-gpt-5.5` run (codex-home/sessions):
  // its token_count says total_tokens = input_tokens + output_tokens, so the cached tokens
  // are part of input_tokens (and reasoning part of output_tokens).
  const rollout = readFileSync(path.join(FIXTURES, 'clib', 'shell-gpt-5.5.rollout.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { payload?: { type?: string; info?: { total_token_usage?: Record<string, number> } | null } })
    .flatMap((r) => (r.payload?.type === 'token_count' && r.payload.info?.total_token_usage ? [r.payload.info.total_token_usage] : []))
    .at(-1)!;

  it('the recorded rollout shows it', () => {
    expect(rollout.total_tokens).toBe(rollout.input_tokens! + rollout.output_tokens!);
    expect(rollout.cached_input_tokens).toBeGreaterThan(0);
  });

  it('is billed once: as cache reads, the rest as input', async () => {
    const codexHome = await mkdtemp(path.join(os.tmpdir(), 'space-usage-codex-'));
    const id = '99999999-9999-4999-8999-999999999999';
    await writeCliSessions(path.join(codexHome, 'clib-space'), 'clib', [
      { agentId: 'proj', sessionId: id, title: 'ls', updatedAt: at(0, '00:01:00.000').getTime(), lines: clibTurn('run ls', at(0, '00:00:00.000'), 'shell-gpt-5.5', 'gpt-5.5') },
    ]);
    const codex = await startService({ home: codexHome });
    try {
      const body = await usageOf(codex);
      expect(body.total_tokens).toEqual({ input: rollout.input_tokens! - rollout.cached_input_tokens!, output: rollout.output_tokens, cache_read: rollout.cached_input_tokens, cache_write: 0 });
      // The session's tokens are codex's own total, not more.
      expect(body.by_session).toEqual([expect.objectContaining({ session_id: id, tokens_total: rollout.total_tokens })]);
      // gpt-5.5: 8410 * 5e-6 + 5696 * 5e-7 + 91 * 3e-5
      expect(body.total_cost_usd).toBe(0.047628);
    } finally {
      await codex.close();
      await rm(codexHome, { recursive: true, force: true });
    }
  });
});
