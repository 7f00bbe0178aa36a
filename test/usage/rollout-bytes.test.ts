import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lineEntries } from '../../service/sessions/line-entries.js';
import { LogReader } from '../../service/sessions/logs.js';
import { linesFor, readerFor } from '../../service/sessions/markers.js';
import { readFileLogSync } from '../../service/sessions/pipeline.js';
import { readClibRolloutUsage } from '../../service/transcripts/clib-rollout-usage.js';
import type { LineRead } from '../../service/transcripts/formats.js';
import type { LogEntry } from '../../service/transcripts/types.js';
import { Pricer, startState, UsageCollector } from '../../service/usage/collect.js';
import { PriceDocument, priceTable } from '../../service/usage/pricing.js';
import { emptyUsage } from '../../service/usage/types.js';
import { ODD_ROLLOUTS } from './rollout-shapes.js';

/**
 * Usage reads the lines of Codex rollouts by their bytes (transcripts/clib-rollout-usage.ts)
 * instead of parsing them: on every recorded rollout (test/fixtures, and the shared recordings
 * of the real codex) and odd shapes, line by line it must give what usage takes from the parsed
 * line (role, time, tool name, token counts, the read's memo), and whole logs the same usage.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const SHARED = path.join(ROOT, '..', 'shared', 'fixtures', 'runtimes', 'clib');

function rollouts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /rollout.*\.jsonl$/.test(f))
    .map((f) => path.join(dir, f));
}

const recorded = [...rollouts(path.join(ROOT, 'test', 'fixtures', 'sessions')), ...rollouts(SHARED)];
const recordedLogs = recorded.map((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean));
const logs: string[][] = [...recordedLogs, ...ODD_ROLLOUTS];

const select = linesFor('clib-rollout', 'usage');

/** What usage takes from an entry (pipeline.ts annotate, collect.ts): no text, no tool input or result. */
function taken(entries: LogEntry[]): unknown[] {
  return entries.map((e) => (e.kind === 'usage' ? e : { position: e.position, id: e.message.id, role: e.message.role, timestamp: e.message.timestamp, tool: e.message.tool_call?.name ?? null, sentAt: e.sentAt }));
}

/** Lines where `read` and the parser (behind the markers, as before) disagree; and how many it answered. */
function differences(read: LineRead, of = logs): { differ: string[]; answered: number; lines: number } {
  const differ: string[] = [];
  let answered = 0;
  let lines = 0;
  for (const log of of) {
    const [byBytes, parsed] = [{}, {}];
    let position = 0;
    for (const line of log) {
      const bytes = Buffer.from(line);
      const ctx = (memo: Record<string, unknown>) => ({ position, fallbackTime: '2026-01-02T03:04:05.000Z', memo });
      const known = read(bytes, ctx(byBytes));
      const mine = known ?? (select(bytes) ? lineEntries('clib-rollout', bytes, true, ctx(byBytes)) : []);
      const theirs = select(bytes) ? lineEntries('clib-rollout', bytes, true, ctx(parsed)) : [];
      if (JSON.stringify([taken(mine), byBytes]) !== JSON.stringify([taken(theirs), parsed])) differ.push(line.slice(0, 300));
      if (known) answered++;
      lines++;
      position += bytes.length + 1;
    }
  }
  return { differ, answered, lines };
}

describe('usage reading rollout lines by bytes', () => {
  it('takes from every recorded and odd line what it takes from the parsed line', () => {
    expect(recorded.length).toBeGreaterThanOrEqual(6);
    expect(differences(readClibRolloutUsage).differ).toEqual([]);
    // The reader is worth having: it answers for nearly every line of the recorded rollouts.
    const { answered, lines } = differences(readClibRolloutUsage, recordedLogs);
    expect(answered / lines).toBeGreaterThan(0.99);
  });

  it('is caught when it is off', () => {
    const off = (change: (entries: LogEntry[], line: Buffer, ctx: Parameters<LineRead>[1]) => LogEntry[] | undefined): LineRead => (line, ctx) => {
      const entries = readClibRolloutUsage(line, ctx);
      return entries && change(entries, line, ctx);
    };
    const broken: Record<string, LineRead> = {
      'a message a second late': off((es) => es.map((e) => (e.kind === 'message' ? { ...e, message: { ...e.message, timestamp: new Date(Date.parse(e.message.timestamp) + 1000).toISOString() } } : e))),
      'a tool name lost': off((es) => es.map((e) => (e.kind === 'message' && e.message.tool_call ? { ...e, message: { ...e.message, tool_call: { ...e.message.tool_call, name: '' } } } : e))),
      'an injected prompt counted': off((es, line, ctx) => (es.length === 0 && line.includes('"role":"user"') && line.includes('"type":"response_item"') ? [{ kind: 'message', position: ctx.position, message: { id: `@${ctx.position}`, role: 'user', text: '', tool_call: null, tool_result: null, timestamp: ctx.fallbackTime } }] : es)),
      "a turn's model not noted": (line, ctx) => (line.includes('"type":"turn_context"') ? [] : readClibRolloutUsage(line, ctx)),
      'cached input counted twice': off((es) => es.map((e) => (e.kind === 'usage' ? { ...e, usage: { ...e.usage, usage: { ...e.usage.usage, input: e.usage.usage.input + e.usage.usage.cacheRead } } } : e))),
      // A line missing its last brace read as if whole.
      'a line cut short read': (line, ctx) => readClibRolloutUsage(Buffer.concat([line, Buffer.from('}')]), ctx) ?? readClibRolloutUsage(line, ctx),
    };
    for (const [name, read] of Object.entries(broken)) expect(differences(read).differ.length, name).toBeGreaterThan(0);
  });
});

describe('usage of whole rollouts, read by bytes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'space-rollout-bytes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pricer = new Pricer(priceTable(PriceDocument.parse(JSON.parse(readFileSync(path.join(ROOT, 'config', 'usage', 'prices.json'), 'utf8')))));

  function scan(file: string, bytes: boolean) {
    const state = startState();
    const usage = emptyUsage();
    const collector = new UsageCollector(usage, state, pricer, 0);
    for (const entry of readFileLogSync({ logs: new LogReader() }, { kind: 'file', format: 'clib-rollout', path: file }, state.cursor, select, bytes ? readerFor('clib-rollout', 'usage') : undefined)) collector.add(entry);
    return { usage, cursor: state.cursor, lastResponseTurn: state.lastResponseTurn };
  }

  it('is the same as parsed: tokens per model and day, messages, tools, response times, cursor', () => {
    let records = 0;
    let tools = 0;
    for (const [i, lines] of logs.entries()) {
      const file = path.join(dir, `${i}.jsonl`);
      // The last log ends without a newline: its last line is read by the parser either way.
      writeFileSync(file, i === logs.length - 1 ? lines.join('\n') : `${lines.join('\n')}\n`);
      const parsed = scan(file, false);
      expect(scan(file, true), file).toEqual(parsed);
      for (const row of parsed.usage.rows.values()) [records, tools] = [records + row.records, tools + Object.values(row.tools).reduce((a, b) => a + b, 0)];
    }
    expect(records).toBeGreaterThan(20);
    expect(tools).toBeGreaterThan(5);
  });
});
