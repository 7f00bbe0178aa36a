/**
 * A terminal history as a real user has it, for bench/history.bench.ts: Claude Code's
 * `<config>/projects/<cwd key>/<id>.jsonl` (with sub-agents in `<id>/subagents/agent-*.jsonl`
 * and their `.meta.json`) and Codex's `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`, 10 %
 * of the rollouts compressed to `.jsonl.zst` with the zstd CLI as Codex 0.137+ does, plus one
 * rollout of `bigBytes`. Every record is a recorded one (test/fixtures/sessions/clia-native and
 * clib-rollout, the pinned programs' own output) with its ids, times, texts and token counts
 * made anew. Sizes spread as a user's are (log-normal: most sessions small, a few very large).
 * Written once into a cache folder (reused while its manifest is there), streamed to disk in
 * 1 MB writes so no more than one session's turn is ever held.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from '../test/sessions/fixtures.js';
import { random, uuid } from './corpus.js';

export interface HistoryHomeOptions {
  /** Terminal sessions besides the big rollout: half Claude Code, half Codex. */
  sessions: number;
  /** Bytes of them all (plain, before compression). */
  bytes: number;
  /** The one big Codex rollout. */
  bigBytes: number;
}

export interface HistoryHome {
  claudeDir: string;
  codexHome: string;
  /** Sessions the listing must show (the big rollout included). */
  total: number;
  claudeBytes: number;
  codexBytes: number;
  /** Rollouts compressed, and their plain bytes. */
  compressed: number;
  compressedBytes: number;
  subagents: number;
  /** Largest file of each program, to show the spread. */
  largest: number;
  median: number;
  big: { id: string; file: string; bytes: number };
  newestClaude: { id: string; file: string };
  /** Seconds the generation took when it ran. */
  writeSeconds: number;
}

const DAY = 86_400_000;
const VERSION = 2;
type Json = Record<string, any>;

/** The cached history for `opts` under `cacheRoot`, written first when absent. */
export function historyHome(cacheRoot: string, opts: HistoryHomeOptions): HistoryHome {
  const dir = path.join(cacheRoot, `v${VERSION}-${opts.sessions}-${opts.bytes}-${opts.bigBytes}`);
  const manifest = path.join(dir, 'manifest.json');
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as HistoryHome;
  rmSync(dir, { recursive: true, force: true });
  const started = Date.now();
  const made = new Writer(dir, opts).write();
  made.writeSeconds = (Date.now() - started) / 1000;
  writeFileSync(manifest, JSON.stringify(made, null, 1));
  return made;
}

/** A 1 MB pool of text that slices are cut from: words, code-like lines, paths. */
function textPool(rand: () => number): string {
  const words = 'the a of to in is that it for on with as was at by an be this from or have not are but what all were when we there can been has more if will one out do their so up which about into than them some her would make like him time has two see way could people index usage service session history listing build test file error result value function return const import export await async path write read count token model reply prompt'.split(' ');
  const parts: string[] = [];
  let size = 0;
  while (size < 1 << 20) {
    const n = 4 + Math.floor(rand() * 14);
    let line = '';
    for (let i = 0; i < n; i++) line += `${words[Math.floor(rand() * words.length)]} `;
    if (rand() < 0.2) line = `  const ${words[Math.floor(rand() * words.length)]} = await ${line.trim().replace(/ /g, '_')}("src/${words[Math.floor(rand() * words.length)]}.ts");`;
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join('\n');
}

/** Log-normal weights, normalised so they sum to `total`. */
function spread(rand: () => number, n: number, total: number, sigma = 1.6): number[] {
  const w = Array.from({ length: n }, () => Math.exp(sigma * Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand())));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => Math.max(1, Math.floor((x / sum) * total)));
}

/** Buffered appends to one file: 1 MB writes, nothing more held. */
class Out {
  private fd: number;
  private parts: string[] = [];
  private held = 0;
  bytes = 0;
  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.fd = openSync(file, 'w');
  }
  line(text: string): void {
    this.parts.push(text, '\n');
    const n = Buffer.byteLength(text) + 1;
    this.held += n;
    this.bytes += n;
    if (this.held >= 1 << 20) this.flush();
  }
  private flush(): void {
    if (this.parts.length) writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.held = 0;
  }
  close(mtime: number): void {
    this.flush();
    closeSync(this.fd);
    utimesSync(this.file, new Date(mtime), new Date(mtime));
  }
}

function fixtureLines(file: string): Json[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
}

class Writer {
  private rand = random(33);
  private pool: string;
  private claude: Json;
  private codexHead: string[];
  private codexTurn: Json[];
  private codexCall: Json[];
  private readonly now = Date.now();
  private sizes: number[] = [];

  constructor(
    private dir: string,
    private opts: HistoryHomeOptions,
  ) {
    this.pool = textPool(this.rand);
    const cc = fixtureLines(path.join(FIXTURES, 'clia-native', '11111111-2222-4333-8444-555555555555.jsonl'));
    const ccPrompt = fixtureLines(path.join(FIXTURES, 'clia-native', 'cc6f22d1-2573-43be-b0a4-bea238d0d77c.jsonl')).find((r) => r.type === 'user' && typeof r.message.content === 'string')!;
    const assistants = cc.filter((r) => r.type === 'assistant');
    this.claude = {
      prompt: ccPrompt,
      text: assistants.find((r) => r.message.content[0].type === 'text' && r.message.stop_reason === 'tool_use')!,
      tool: assistants.find((r) => r.message.content[0].type === 'tool_use')!,
      result: cc.find((r) => r.type === 'user' && Array.isArray(r.message.content))!,
      end: assistants.find((r) => r.message.stop_reason === 'end_turn')!,
    };
    const rollout = readFileSync(path.join(FIXTURES, 'clib-rollout', 'rollout-2026-11-21T15-07-04-01a1fea5-8c7b-7943-a9b1-1514d8f61ca9.jsonl'), 'utf8').split('\n');
    this.codexHead = rollout.slice(0, 11);
    this.codexTurn = rollout.slice(20, 32).map((l) => JSON.parse(l) as Json);
    this.codexCall = fixtureLines(path.join(FIXTURES, 'clib-rollout', 'rollout-2026-11-21T15-07-10-01a1fea5-a220-7b91-ab91-c3fd23894219.jsonl')).filter((r) => r.payload?.type === 'function_call' || r.payload?.type === 'function_call_output');
  }

  private text(n: number): string {
    const at = Math.floor(this.rand() * Math.max(1, this.pool.length - n));
    let s = this.pool.slice(at, at + n);
    while (s.length < n) s += this.pool.slice(0, n - s.length);
    return s;
  }

  private prompt(): string {
    return this.text(30 + Math.floor(this.rand() * 200)).trim() || 'a prompt';
  }

  /** A tool output's size: log-normal around 2 KB, capped by what the session has left. */
  private toolBytes(left: number): number {
    return Math.max(40, Math.min(left, Math.floor(2000 * Math.exp(1.4 * (this.rand() * 2 - 1) * 1.7))));
  }

  write(): HistoryHome {
    const half = Math.ceil(this.opts.sessions / 2);
    const codexN = this.opts.sessions - half;
    const claudeSizes = spread(this.rand, half, this.opts.bytes / 2);
    const codexHeadBytes = this.codexHead.reduce((a, l) => a + l.length + 1, 0);
    const codexSizes = spread(this.rand, codexN, Math.max(0, this.opts.bytes / 2 - codexN * codexHeadBytes));
    const claudeDir = path.join(this.dir, 'claude');
    const codexHome = path.join(this.dir, 'codex');
    let claudeBytes = 0;
    let subagents = 0;
    let newestClaude = { id: '', file: '', at: 0 };
    for (let i = 0; i < half; i++) {
      const r = this.claudeSession(claudeDir, i, claudeSizes[i]!);
      claudeBytes += r.bytes;
      subagents += r.subagents;
      if (r.at > newestClaude.at) newestClaude = { id: r.id, file: r.file, at: r.at };
    }
    let codexBytes = 0;
    const rollouts: Array<{ file: string; bytes: number; at: number }> = [];
    for (let i = 0; i < codexN; i++) {
      const r = this.codexRollout(codexHome, this.sessionStart(), codexSizes[i]!);
      codexBytes += r.bytes;
      rollouts.push(r);
    }
    const { compressed, compressedBytes } = compressIdle(rollouts, Math.floor(codexN / 10), this.now);
    const big = this.codexRollout(codexHome, this.now - 2 * DAY, this.opts.bigBytes);
    const sorted = [...this.sizes].sort((a, b) => a - b);
    return {
      claudeDir,
      codexHome,
      total: this.opts.sessions + 1,
      claudeBytes,
      codexBytes,
      compressed,
      compressedBytes,
      subagents,
      largest: sorted.at(-1) ?? 0,
      median: sorted[Math.floor(sorted.length / 2)] ?? 0,
      big: { id: big.id, file: big.file, bytes: big.bytes },
      newestClaude: { id: newestClaude.id, file: newestClaude.file },
      writeSeconds: 0,
    };
  }

  /** A start time over the last 180 days, recent ones likelier. */
  private sessionStart(): number {
    return this.now - Math.floor(Math.pow(this.rand(), 2) * 180 * DAY) - DAY;
  }

  private claudeSession(root: string, i: number, target: number): { id: string; file: string; bytes: number; subagents: number; at: number } {
    const id = uuid(this.rand);
    const cwd = `/home/user/work/project-${i % 40}`;
    const projectDir = path.join(root, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
    const out = new Out(path.join(projectDir, `${id}.jsonl`));
    let t = this.sessionStart();
    const clock = (): string => new Date((t += 500 + Math.floor(this.rand() * 4000))).toISOString();
    const agents = target > 20_000 && this.rand() < 0.3 ? 1 + Math.floor(this.rand() * 3) : 0;
    let agentBytes = 0;
    let agentsMade = 0;
    let parent: string | null = null;
    const base = { cwd, sessionId: id };
    const emit = (template: Json, patch: Json): void => {
      const uuidNow = uuid(this.rand);
      out.line(JSON.stringify({ ...template, ...patch, parentUuid: parent, uuid: uuidNow, timestamp: clock(), ...base }));
      parent = uuidNow;
    };
    for (let turn = 0; out.bytes + agentBytes < target || turn === 0; turn++) {
      const spawnAgent = turn > 0 && agentsMade < agents;
      const toolId = `toolu_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      const msgA = `msg_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      const msgB = `msg_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      const usageA = this.claudeUsage(this.claude.text.message.usage, turn);
      emit(this.claude.prompt, { promptId: uuid(this.rand), message: { role: 'user', content: this.prompt() } });
      emit(this.claude.text, { message: { ...this.claude.text.message, id: msgA, content: [{ type: 'text', text: this.text(80) }], usage: usageA }, requestId: `req_${msgA.slice(4)}` });
      const description = spawnAgent ? this.text(40).trim() : '';
      const input = spawnAgent ? { description, prompt: this.text(300), subagent_type: 'general-purpose' } : { command: this.text(60).trim(), description: this.text(20).trim() };
      const toolRecord = { ...this.claude.tool.message, id: msgA, content: [{ type: 'tool_use', id: toolId, name: spawnAgent ? 'Agent' : 'Bash', input }], usage: usageA };
      emit(this.claude.tool, { message: toolRecord, requestId: `req_${msgA.slice(4)}` });
      const output = this.text(this.toolBytes(target - out.bytes - agentBytes));
      if (spawnAgent) agentsMade++;
      if (spawnAgent) agentBytes += this.subagent(projectDir, id, cwd, toolId, description, t, Math.floor(target * 0.1));
      emit(this.claude.result, { message: { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content: output, is_error: false }] }, toolUseResult: { stdout: output, stderr: '', interrupted: false, isImage: false, noOutputExpected: false }, sourceToolAssistantUUID: parent });
      emit(this.claude.end, { message: { ...this.claude.end.message, id: msgB, content: [{ type: 'text', text: this.text(100 + Math.floor(this.rand() * 600)) }], usage: this.claudeUsage(this.claude.end.message.usage, turn) }, requestId: `req_${msgB.slice(4)}` });
    }
    out.close(t);
    this.sizes.push(out.bytes);
    return { id, file: out.file, bytes: out.bytes + agentBytes, subagents: agents, at: t };
  }

  private claudeUsage(template: Json, turn: number): Json {
    return { ...template, input_tokens: 3 + Math.floor(this.rand() * 50), cache_read_input_tokens: 12_000 + turn * 900, cache_creation_input_tokens: Math.floor(this.rand() * 2000), output_tokens: 20 + Math.floor(this.rand() * 800) };
  }

  /** A sub-agent's transcript (side chain) and its sidecar, as 2.1.330 writes them; returns its bytes. */
  private subagent(projectDir: string, sessionId: string, cwd: string, toolUseId: string, description: string, start: number, target: number): number {
    const agentId = uuid(this.rand).replace(/-/g, '').slice(0, 17);
    const dir = path.join(projectDir, sessionId, 'subagents');
    const out = new Out(path.join(dir, `agent-${agentId}.jsonl`));
    let t = start;
    let parent: string | null = null;
    const emit = (template: Json, patch: Json): void => {
      const uuidNow = uuid(this.rand);
      out.line(JSON.stringify({ ...template, ...patch, parentUuid: parent, isSidechain: true, agentId, uuid: uuidNow, timestamp: new Date((t += 700)).toISOString(), cwd, sessionId }));
      parent = uuidNow;
    };
    for (let turn = 0; out.bytes < target || turn === 0; turn++) {
      const msg = `msg_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      const toolId = `toolu_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      if (turn === 0) emit(this.claude.prompt, { promptId: uuid(this.rand), message: { role: 'user', content: description || this.prompt() } });
      const usage = this.claudeUsage(this.claude.tool.message.usage, turn);
      emit(this.claude.tool, { message: { ...this.claude.tool.message, id: msg, content: [{ type: 'tool_use', id: toolId, name: 'Read', input: { file_path: `${cwd}/src/${this.text(12).trim().replace(/\W/g, '_')}.ts` } }], usage }, requestId: `req_${msg.slice(4)}` });
      const output = this.text(this.toolBytes(target - out.bytes));
      emit(this.claude.result, { message: { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content: output, is_error: false }] }, toolUseResult: { stdout: output, stderr: '', interrupted: false, isImage: false, noOutputExpected: false }, sourceToolAssistantUUID: parent });
    }
    const endMsg = `msg_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
    emit(this.claude.end, { message: { ...this.claude.end.message, id: endMsg, content: [{ type: 'text', text: this.text(300) }], usage: this.claudeUsage(this.claude.end.message.usage, 0) }, requestId: `req_${endMsg.slice(4)}` });
    out.close(t);
    writeFileSync(path.join(dir, `agent-${agentId}.meta.json`), JSON.stringify({ agentType: 'general-purpose', description, toolUseId, model: 'claude-opus-5-5', finished: true }));
    return out.bytes;
  }

  private codexRollout(home: string, start: number, target: number): { id: string; file: string; bytes: number; at: number } {
    const id = uuid(this.rand);
    const fixtureId = '01a1fea5-8c7b-7943-a9b1-1514d8f61ca9';
    const startIso = new Date(start).toISOString();
    const day = startIso.slice(0, 10).split('-');
    const out = new Out(path.join(home, 'sessions', ...day, `rollout-${startIso.slice(0, 19).replace(/:/g, '-')}-${id}.jsonl`));
    const cwd = `/home/user/work/project-${Math.floor(this.rand() * 40)}`;
    for (const line of this.codexHead) out.line(line.replaceAll(fixtureId, id).replaceAll('/home/user/rt-codex/fx/proj', cwd).replace(/"timestamp":"[^"]+"/, `"timestamp":"${startIso}"`));
    let t = start;
    let ordinal = this.codexHead.length;
    const total = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
    const goal = target + out.bytes;
    for (let turn = 0; out.bytes < goal || turn === 0; turn++) {
      const turnId = uuid(this.rand);
      const prompt = this.prompt();
      const reply = this.text(100 + Math.floor(this.rand() * 600));
      const last = { input_tokens: 13_000 + turn * 400, cached_input_tokens: 10_000 + turn * 300, cache_write_input_tokens: 0, output_tokens: 20 + Math.floor(this.rand() * 800), reasoning_output_tokens: 16, total_tokens: 0 };
      last.total_tokens = last.input_tokens + last.output_tokens;
      for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += last[k];
      const callId = `call_${uuid(this.rand).replace(/-/g, '').slice(0, 24)}`;
      const output = this.text(this.toolBytes(goal - out.bytes));
      for (const template of [...this.codexTurn.slice(0, 5), ...this.codexCall, ...this.codexTurn.slice(5)]) {
        const r: Json = { ...template, timestamp: new Date((t += 300)).toISOString(), ordinal: ordinal++, payload: { ...template.payload } };
        const p = r.payload;
        if ('thread_id' in p) p.thread_id = id;
        if ('session_id' in p) p.session_id = id;
        if ('turn_id' in p) p.turn_id = turnId;
        if ('root_turn_id' in p) p.root_turn_id = turnId;
        if (p.type === 'message' && p.role === 'user') p.content = [{ type: 'input_text', text: prompt }];
        else if (p.type === 'message' && p.role === 'assistant') p.content = [{ type: 'output_text', text: reply, annotations: [] }];
        else if (p.type === 'item_completed' && p.item?.type === 'UserMessage') p.item = { ...p.item, content: [{ type: 'text', text: prompt, text_elements: [] }] };
        else if (p.type === 'item_completed' && p.item?.type === 'AgentMessage') p.item = { ...p.item, content: [{ type: 'Text', text: reply }] };
        else if (p.type === 'task_complete') p.last_agent_message = reply;
        else if (p.type === 'function_call') Object.assign(p, { call_id: callId, arguments: JSON.stringify({ cmd: this.text(50).trim(), yield_time_ms: 10000 }) });
        else if (p.type === 'function_call_output') Object.assign(p, { call_id: callId, output: `Chunk ID: 6f7ad5\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n${output}` });
        else if (p.type === 'token_count') p.info = { ...p.info, total_token_usage: { ...total }, last_token_usage: last };
        else if (r.type === 'token_usage_record') Object.assign(p, { usage: last, turn_token_usage: last, thread_token_usage: { ...total } });
        out.line(JSON.stringify(r));
      }
    }
    out.close(t);
    this.sizes.push(out.bytes);
    return { id, file: out.file, bytes: out.bytes, at: t };
  }
}

/**
 * Compresses `count` rollouts as Codex 0.137+ does (`zstd`, the plain file removed), taken
 * evenly among those idle for over 7 days (Codex leaves the others plain).
 */
export function compressIdle(rollouts: Array<{ file: string; bytes: number; at: number }>, count: number, now: number): { compressed: number; compressedBytes: number } {
  const idle = rollouts.filter((r) => now - r.at > 7 * DAY);
  const step = idle.length / Math.max(1, count);
  let compressedBytes = 0;
  let compressed = 0;
  for (let k = 0; k < count && k * step < idle.length; k++) {
    const r = idle[Math.floor(k * step)]!;
    execFileSync('zstd', ['-q', '--rm', r.file]);
    compressed++;
    compressedBytes += r.bytes;
  }
  return { compressed, compressedBytes };
}
