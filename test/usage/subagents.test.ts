import { copyFile, mkdir, mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ccusageClaudeDaily, expectSameAsCcusage } from '../helpers/ccusage.js';
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
    expectSameAsCcusage(await report(), ccusageClaudeDaily(ccusage!, home));
  });
});

/**
 * A Codex sub-agent's rollout, as the real codex 0.169.0 wrote it (`codex exec resume` of a
 * session whose model, the fake Responses API, called `spawn_agent`; see the real-program lane
 * in test/sessions/real-history-codex.test.ts): it replays its parent's history before its own
 * turn. 0.169.0 replays no token counts; Codex versions that do (research part A1b, ccusage
 * #1349) are stood in for by the same file with the parent's count put into its replay.
 */
const PARENT = '01a225e4-407e-7cb0-bb25-6cd78701f2d3';
const CHILD = '01a225e4-442a-76d0-a952-bd66079aa633';
const ROLLOUTS = path.join(FIXTURES, 'clib-subagent');
const rolloutName = (id: string): string => (id === PARENT ? `rollout-2026-11-29T06-00-45-${PARENT}.jsonl` : `rollout-2026-11-29T06-00-46-${CHILD}.jsonl`);

/** A rollout's last total_token_usage. */
async function lastTotal(file: string): Promise<{ input_tokens: number; output_tokens: number }> {
  const counts = (await readFile(file, 'utf8')).split('\n').filter((l) => l.includes('"type":"token_count"'));
  return JSON.parse(counts.at(-1)!).payload.info.total_token_usage;
}

describe('Codex sub-agent rollouts in usage', () => {
  let codexHome: string;
  let codexSvc: TestService;
  const dayDir = (): string => path.join(codexHome, '.codex', 'sessions', '2026', '11', '29');
  const tokensOf = async (): Promise<Map<string, number>> => new Map((await (await codexSvc.get('/api/usage?days=3650')).json()).by_session.map((s: any) => [s.session_id, s.tokens_total]));

  beforeAll(async () => {
    codexHome = await mkdtemp(path.join(os.tmpdir(), 'usage-codex-subagents-'));
    await mkdir(dayDir(), { recursive: true });
    for (const id of [PARENT, CHILD]) await copyFile(path.join(ROLLOUTS, rolloutName(id)), path.join(dayDir(), rolloutName(id)));
    codexSvc = await startService({ home: codexHome });
  });
  afterAll(async () => {
    await codexSvc?.close();
    await rm(codexHome, { recursive: true, force: true });
  });

  it('each rollout counts its own last total_token_usage (0.169.0 replays no counts)', async () => {
    const tokens = await tokensOf();
    for (const id of [PARENT, CHILD]) {
      const last = await lastTotal(path.join(ROLLOUTS, rolloutName(id)));
      expect(tokens.get(id), id).toBe(last.input_tokens + last.output_tokens);
    }
  });

  it('a replay that carries the parent\'s token counts adds none of them to the sub-agent', async () => {
    const before = await tokensOf();
    const parentLines = (await readFile(path.join(ROLLOUTS, rolloutName(PARENT)), 'utf8')).split('\n');
    const lines = (await readFile(path.join(ROLLOUTS, rolloutName(CHILD)), 'utf8')).trimEnd().split('\n');
    // The parent's counts up to the spawn, rewritten to the replay's instant, before the replayed turn's abort.
    const replayed = parentLines.filter((l) => l.includes('"type":"token_count"')).slice(0, 2).map((l) => ({ ...JSON.parse(l), timestamp: JSON.parse(lines[1]!).timestamp }));
    const aborted = lines.findIndex((l) => l.includes('"type":"turn_aborted"'));
    expect(aborted).toBeGreaterThan(1);
    lines.splice(aborted, 0, ...replayed.map((r) => JSON.stringify(r)));
    // And one more turn of the child's own, of 100 input tokens (so the new file is seen read).
    const own = JSON.parse(lines.filter((l) => l.includes('"type":"token_count"')).at(-1)!);
    own.payload.info.total_token_usage.input_tokens += 100;
    own.payload.info.last_token_usage = { ...own.payload.info.last_token_usage, input_tokens: 100, output_tokens: 0 };
    lines.push(JSON.stringify(own));
    const file = path.join(dayDir(), rolloutName(CHILD));
    await writeFile(`${file}.tmp`, `${lines.join('\n')}\n`);
    await rename(`${file}.tmp`, file);
    // A request checks the logs it read against the disk (another inode: read again from the start).
    await eventually(async () => expect(await tokensOf()).toEqual(new Map([...before].map(([id, n]) => [id, id === CHILD ? n + 100 : n]))), 5000);
  });
});
