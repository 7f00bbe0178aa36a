import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from '../sessions/fixtures.js';

/**
 * Sub-agents' usage, each token once (docs/history.md), on records Claude Code 2.1.330 wrote:
 * a session's sub-agent transcript (`<session>/subagents/agent-*.jsonl`, and the legacy
 * `<key>/agent-*.jsonl`) counts in its parent session on its own model; a side-chain copy of a parent's message (another request id, as
 * a `/btw` replay writes) loses to the parent. Where ccusage runs (the real-program lane), the
 * report equals `ccusage claude daily` per day and model.
 */
const ccusage = realProgram('ccusage');
const CLAUDE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
/** A message of the parent that the sub-agent's transcript copies (with another request id and far more cache reads). */
const COPIED = 'msg_01ZMiewQsiJXzqN-MGLyqK_I';
const SUB = { input: 7, output: 21, cacheRead: 300, cacheWrite: 40 };
/** What the legacy transcript (`<key>/agent-*.jsonl`, Claude Code before `subagents/`) used. */
const LEGACY = { input: 3, output: 5, cacheRead: 0, cacheWrite: 0 };
const SUB_MODEL = 'claude-haiku-5-5';

let home: string;
let svc: TestService;
const projectDir = (): string => path.join(home, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const parentFile = (): string => path.join(projectDir(), `${CLAUDE_ID}.jsonl`);

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'usage-subagents-'));
  await mkdir(projectDir(), { recursive: true });
  await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), parentFile());
  svc = await startService({ home });
});
afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

const report = async (): Promise<any> => (await svc.get('/api/usage?days=3650')).json();

/** The sub-agent's transcript: a side-chain copy of a parent's record, then its own answer streamed in two blocks. */
async function subagentLines(): Promise<string> {
  const copied = await parentRecord();
  const side = { isSidechain: true, agentId: 'a0sub1' };
  const replay = { ...copied, ...side, uuid: 'side-1', requestId: 'req_sidechain_replay', message: { ...copied.message, usage: { ...copied.message.usage, cache_read_input_tokens: 50_000 } } };
  const prompt = { ...copied, type: 'user', ...side, uuid: 'side-2', parentUuid: 'side-1', message: { role: 'user', content: 'Sub-task: count the harbour stars' } };
  const usage = { input_tokens: SUB.input, output_tokens: SUB.output, cache_read_input_tokens: SUB.cacheRead, cache_creation_input_tokens: SUB.cacheWrite };
  const answer = (n: number, block: unknown): unknown => ({
    ...copied,
    ...side,
    uuid: `side-${3 + n}`,
    parentUuid: `side-${2 + n}`,
    requestId: 'req_sub_own',
    message: { ...copied.message, id: 'msg_sub_own', model: SUB_MODEL, content: [block], usage },
  });
  return [replay, prompt, answer(0, { type: 'text', text: 'Seven stars.' }), answer(1, { type: 'tool_use', id: 'toolu_sub', name: 'Bash', input: { command: 'true' } })].map((r) => JSON.stringify(r)).join('\n') + '\n';
}

async function parentRecord(): Promise<any> {
  const records = (await readFile(parentFile(), 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
  return records.find((r) => r.type === 'assistant' && r.message.id === COPIED);
}

/** A legacy sub-agent transcript: its records name the parent's sessionId. */
async function legacyLines(): Promise<string> {
  const copied = await parentRecord();
  const usage = { input_tokens: LEGACY.input, output_tokens: LEGACY.output, cache_read_input_tokens: LEGACY.cacheRead, cache_creation_input_tokens: LEGACY.cacheWrite };
  const record = { ...copied, isSidechain: true, agentId: 'legacy1', uuid: 'legacy-1', requestId: 'req_legacy_own', message: { ...copied.message, id: 'msg_legacy_own', model: SUB_MODEL, content: [{ type: 'text', text: 'Done.' }], usage } };
  return `${JSON.stringify(record)}\n`;
}

describe('sub-agents in usage', () => {
  it('a sub-agent\'s transcript counts in its parent session, on its own model; a side-chain copy of a parent\'s message does not', async () => {
    const before = await report();
    const parentBefore = before.by_session.find((s: any) => s.session_id === CLAUDE_ID);
    expect(parentBefore.tokens_total).toBeGreaterThan(0);
    const dir = path.join(projectDir(), CLAUDE_ID, 'subagents');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'agent-a0sub1.jsonl'), await subagentLines());
    await writeFile(path.join(dir, 'agent-a0sub1.meta.json'), JSON.stringify({ agentType: 'general-purpose', description: 'Delegated task', toolUseId: 'toolu_parent' }));
    await writeFile(path.join(projectDir(), 'agent-legacy1.jsonl'), await legacyLines());
    // The parent gets the Agent tool's result once its sub-agent ends: its file changes.
    const now = new Date();
    await utimes(parentFile(), now, now);
    const subTotal = SUB.input + SUB.output + SUB.cacheRead + SUB.cacheWrite + LEGACY.input + LEGACY.output;
    let after: any;
    await eventually(async () => {
      after = await report();
      expect(after.by_session.find((s: any) => s.session_id === CLAUDE_ID).tokens_total).toBe(parentBefore.tokens_total + subTotal);
    }, 5000);
    // One session still, its messages its own; the sub-agent's model is a row of its own.
    expect(after.by_session.map((s: any) => s.session_id)).toEqual([CLAUDE_ID]);
    expect(after.by_session[0].messages).toBe(parentBefore.messages);
    expect(after.by_model.find((m: any) => m.model === SUB_MODEL)).toMatchObject({ tokens_in: SUB.input + LEGACY.input, tokens_out: SUB.output + LEGACY.output, cache_read: SUB.cacheRead, cache_write: SUB.cacheWrite });
    expect(after.by_model.filter((m: any) => m.model !== SUB_MODEL)).toEqual(before.by_model);
    expect(after.tool_usage.find((t: any) => t.tool === 'Bash')?.count ?? 0).toBe((before.tool_usage.find((t: any) => t.tool === 'Bash')?.count ?? 0) + 1);
  });

  it('a restart counts the same (the sub-agent\'s aggregates are kept like any log\'s)', async () => {
    const first = await report();
    await svc.close();
    svc = await startService({ home });
    expect(await report()).toEqual(first);
  });

  it.skipIf(!ccusage)('equals ccusage per day and per model, to the token', async () => {
    const ran = spawnSync(ccusage!, ['claude', 'daily', '--json', '--offline', '--timezone', 'UTC'], { env: { PATH: process.env.PATH, HOME: home }, encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    const cc = JSON.parse(ran.stdout);
    const ours = await report();
    for (const day of cc.daily) expect(ours.daily.find((d: any) => d.date === day.date)?.tokens_total, day.date).toBe(day.totalTokens);
    const models = new Map<string, any>();
    for (const day of cc.daily) for (const m of day.modelBreakdowns) models.set(m.modelName, m);
    expect(ours.by_model.map((m: any) => [m.model, m.tokens_in, m.tokens_out, m.cache_read, m.cache_write]).sort()).toEqual(
      [...models.values()].map((m) => [m.modelName, m.inputTokens, m.outputTokens, m.cacheReadTokens, m.cacheCreationTokens]).sort(),
    );
  });
});
