import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../bench/corpus.js';
import { LogReader } from '../../service/sessions/logs.js';
import { readFileLogSync } from '../../service/sessions/pipeline.js';
import type { LogFormat } from '../../service/sessions/types.js';
import { Pricer, startState, UsageCollector } from '../../service/usage/collect.js';
import { PriceDocument, priceTable } from '../../service/usage/pricing.js';
import { linesFor } from '../../service/sessions/markers.js';
import { emptyUsage } from '../../service/usage/types.js';
import { cliaTranscript, clibTranscript, FIXTURES } from '../sessions/fixtures.js';
import { nativeRecords } from './seed.js';

/**
 * The pipeline leaves unparsed the lines without a byte marker the usage consumer needs
 * (Format.needs); every log here (every recorded fixture, Claude Code's own records, damaged
 * lines, generated corpora) must give the same usage, messages, tools, response times and
 * turns both ways.
 */
let dir: string;
const logs: Array<{ file: string; format: LogFormat }> = [];
const pricer = new Pricer(priceTable(PriceDocument.parse(JSON.parse(await readFile(path.join(import.meta.dirname, '..', '..', 'config', 'usage', 'prices.json'), 'utf8')))));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'space-usage-select-'));
  const add = async (name: string, format: LogFormat, lines: string[]): Promise<void> => {
    const file = path.join(dir, `${name}.jsonl`);
    await writeFile(file, `${lines.join('\n')}\n`);
    logs.push({ file, format });
  };
  const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
  const clia = (await readdir(path.join(FIXTURES, 'clia'))).filter((n) => n.endsWith('.stdout.jsonl')).map((n) => n.replace('.stdout.jsonl', ''));
  await add('clia-all', 'clia', cliaTranscript('s', clia.map((run, i) => ({ prompt: `p${i}`, run, at: day(i + 1) }))));
  const clib = (await readdir(path.join(FIXTURES, 'clib'))).filter((n) => n.endsWith('.stdout.jsonl')).map((n) => n.replace('.stdout.jsonl', ''));
  await add('clib-all', 'clib', clibTranscript(clib.map((run, i) => ({ prompt: `p${i}`, run, at: day(i + 1) }))));
  for (const name of (await readdir(path.join(FIXTURES, 'runtimea-file'))).filter((n) => /^[0-9a-f-]+\.jsonl$/.test(n))) {
    await add(`runtimea-${name}`, 'runtimea', (await readFile(path.join(FIXTURES, 'runtimea-file', name), 'utf8')).split('\n').filter(Boolean));
  }
  for (const name of await readdir(path.join(FIXTURES, 'runtimea-sqlite', 'transcripts'))) {
    await add(`sqlite-${name}`, 'runtimea', (await readFile(path.join(FIXTURES, 'runtimea-sqlite', 'transcripts', name), 'utf8')).split('\n').filter(Boolean));
  }
  // Damaged: a cut line, a line that is not JSON, a prompt with escapes, other key orders.
  const [first, ...rest] = cliaTranscript('d', [{ prompt: 'say "hi"\n\\o/', run: '03-resume-tool-bash', at: day(20) }]);
  await add('clia-damaged', 'clia', [first!, '{"type":"system","subtype":"init","cwd":"/x"', 'not json at all', '{"timestamp":"2026-11-20T09:00:00.000Z","type":"result","usage":{}}', ...rest]);
  await add('runtimea-reordered', 'runtimea', ['{"id":"x1","type":"message","message":{"content":"hello","role":"user","timestamp":1795000000000},"timestamp":"2026-11-20T10:00:00.000Z"}', '{"type":"message","id":"x2","message":{"role":"toolResult","toolCallId":"c","content":[]},"timestamp":"2026-11-20T10:00:01.000Z"}', '{"type":"message","id":"x3","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"model":"gpt-5.5","usage":{"input":5,"output":5,"cacheRead":0,"cacheWrite":0},"timestamp":1795000001000},"timestamp":"2026-11-20T10:00:02.000Z"}', '{"type":"message","id":"x4","message":{"role":"toolResult"']);
  // Every recorded run (test/fixtures/clia/runs, clib/exec) as the store would hold it, and
  // Claude Code's own on-disk logs of the recorded runs, verbatim.
  const recorded = path.join(import.meta.dirname, '..', 'fixtures');
  const runs = (await readdir(path.join(recorded, 'clia', 'runs'))).filter((n) => n.endsWith('.stdout.jsonl'));
  for (const [i, name] of runs.entries()) {
    await add(`clia-run-${name}`, 'clia', [JSON.stringify({ type: 'user', message: { role: 'user', content: `p${i}` }, session_id: 's', timestamp: day(i % 28 + 1).toISOString() }), ...(await readFile(path.join(recorded, 'clia', 'runs', name), 'utf8')).split('\n').filter(Boolean)]);
  }
  const execs = (await readdir(path.join(recorded, 'clib', 'exec'))).filter((n) => n.endsWith('.stdout.jsonl'));
  for (const [i, name] of execs.entries()) {
    await add(`clib-exec-${name}`, 'clib', [JSON.stringify({ type: 'user.message', text: `p${i}`, timestamp: day(i % 28 + 1).toISOString() }), ...(await readFile(path.join(recorded, 'clib', 'exec', name), 'utf8')).split('\n').filter(Boolean)]);
  }
  for (const name of await readdir(path.join(FIXTURES, 'clia-native'))) {
    await add(`clia-native-${name}`, 'clia', (await readFile(path.join(FIXTURES, 'clia-native', name), 'utf8')).split('\n').filter(Boolean));
  }
  // Claude Code's own on-disk records: one per block, growing output, tool calls and results.
  const usage = (output: number) => ({ input_tokens: 3, output_tokens: output, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 });
  await add(
    'clia-native',
    'clia',
    nativeRecords('n', 'read it', day(3), [
      { id: 'm1', requestId: 'r1', model: 'claude-haiku-4-5', usage: usage(5), blocks: [{ at: day(3), text: 'Reading' }, { at: day(3), tool: 'Read' }] },
      { id: 'm1', requestId: 'r1', model: 'claude-haiku-4-5', usage: usage(40), blocks: [{ at: day(3), text: 'Done' }] },
      { id: 'm2', requestId: 'r2', model: 'claude-haiku-4-5', usage: usage(9), blocks: [{ at: day(4), tool: 'Bash' }] },
    ]).map((r) => JSON.stringify(r)),
  );
  // Generated corpora: a few long sessions and many short ones, with another seed.
  for (const [name, options] of [
    ['corpus', { sessions: 30, maxTurns: 8 }],
    ['corpus-long', { sessions: 6, maxTurns: 120, seed: 11 }],
  ] as const) {
    const home = path.join(dir, name);
    await mkdir(home);
    await writeCorpus(home, options);
    await walk(home);
  }
});

async function walk(d: string): Promise<void> {
  for (const e of await readdir(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) await walk(p);
    else if (e.name.endsWith('.jsonl')) logs.push({ file: p, format: p.includes('clia-space') ? 'clia' : p.includes('clib-space') ? 'clib' : 'runtimea' });
  }
}

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let parsed = 0;
let skipped = 0;

function scan(file: string, format: LogFormat, skip: boolean) {
  const state = startState();
  const usage = emptyUsage();
  const collector = new UsageCollector(usage, state, pricer, 0);
  const markers = linesFor(format, 'usage');
  const select = (line: Buffer): boolean => {
    const wanted = markers(line);
    if (wanted) parsed++;
    else skipped++;
    return wanted;
  };
  for (const entry of readFileLogSync({ logs: new LogReader() }, { kind: 'file', format, path: file }, state.cursor, skip ? select : undefined)) collector.add(entry);
  return { usage, turn: state.cursor.turn, lastResponseTurn: state.lastResponseTurn, seen: state.seen };
}

describe('lines the usage scan leaves unparsed', () => {
  it('change nothing it counts, on every recorded, generated and damaged log', () => {
    expect(logs.length).toBeGreaterThan(40);
    let records = 0;
    for (const { file, format } of logs) {
      const all = scan(file, format, false);
      expect(scan(file, format, true), file).toEqual(all);
      for (const row of all.usage.rows.values()) records += row.records;
    }
    expect(records).toBeGreaterThan(100);
    // The skip is real: a good share of the lines were never parsed.
    expect(skipped / (parsed + skipped)).toBeGreaterThan(0.2);
  });
});
