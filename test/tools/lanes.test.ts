import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { laneFiles } from './lanes.mjs';

/**
 * Which files `npm run test:latest` runs against the newest programs: every test file that
 * starts a real claude, codex or openclaw, not only the ones named real-*.
 */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the real-program lanes of test:latest', () => {
  it('are the test files that start a drifting program, whatever their name or folder', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'space-lanes-'));
    dirs.push(root);
    // The calls are built from the names so that this file is no lane itself.
    const call = (name: string, q = "'", pad = '') => `realProgram(${pad}${q}${name}${q}${pad})`;
    const files: Record<string, string> = {
      'test/a/real-thing.test.ts': `const claude = ${call('claude')};`,
      'test/a/attachments.test.ts': `const codex = ${call('codex', '"')};`,
      'test/b/deep/gateway.test.ts': `const openclaw = ${call('openclaw', "'", ' ')};`,
      'test/b/usage.test.ts': `const ccusage = ${call('ccusage')};`,
      'test/b/plain.test.ts': "it('x', () => {});",
      'test/helpers/programs.ts': call('codex'),
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeFileSync(path.join(root, rel), text);
    }
    expect(laneFiles(root)).toEqual(['test/a/attachments.test.ts', 'test/a/real-thing.test.ts', 'test/b/deep/gateway.test.ts']);
  });

  it('in this repository include the lanes not named real-* (attachments, follow-ups, events), and not this file', () => {
    const lanes = laneFiles(repo);
    expect(lanes).not.toContain('test/tools/lanes.test.ts');
    expect(lanes).toEqual(expect.arrayContaining([
      'test/chat/attachments.test.ts',
      'test/chat/follow-ups.test.ts',
      'test/chat/runtimea-attachments.test.ts',
      'test/events/events.test.ts',
      'test/runtimes/clib/real-codex.test.ts',
      'test/runtimes/runtimea/real-openclaw.test.ts',
      'test/chat/real-claude.test.ts',
    ]));
  });
});
