import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The closing line of test/summary-reporter.ts, read from a real vitest run over a throwaway
 * project in a temp folder: files that pass, fail, fail to load, or throw in a hook.
 */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const reporter = path.join(repo, 'test/summary-reporter.ts');
let project: string;

const files: Record<string, string> = {
  'passes.test.ts': `import { it, expect } from 'vitest';
it('a', () => expect(1).toBe(1));
it('b', () => expect(2).toBe(2));`,
  'fails.test.ts': `import { it, expect } from 'vitest';
it('ok', () => expect(1).toBe(1));
it('not ok', () => expect(1).toBe(2));`,
  'before-all.test.ts': `import { beforeAll, it, expect } from 'vitest';
beforeAll(() => { throw new Error('rclone is not installed'); });
it('one', () => expect(1).toBe(1));
it('two', () => expect(1).toBe(1));`,
  'load.test.ts': `throw new Error('does not load');`,
  'hooks.test.ts': `import { afterAll, beforeAll, describe, it, expect } from 'vitest';
describe('inner before', () => {
  beforeAll(() => { throw new Error('inner'); });
  it('x', () => expect(1).toBe(1));
});
describe('inner after', () => {
  afterAll(() => { throw new Error('after'); });
  it('y', () => expect(1).toBe(1));
});`,
};

beforeAll(() => {
  project = mkdtempSync(path.join(os.tmpdir(), 'space-reporter-'));
  symlinkSync(realpathSync(path.join(repo, 'node_modules')), path.join(project, 'node_modules'));
  writeFileSync(path.join(project, 'package.json'), '{"type": "module"}\n');
  writeFileSync(
    path.join(project, 'vitest.config.mjs'),
    `export default { test: { include: ['*.test.ts'], reporters: ['default', ${JSON.stringify(reporter)}] } };\n`,
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(project, name), text);
});

afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

/** Runs vitest on the named files; its exit status and the reporter's closing line. */
function run(...names: string[]): { status: number | null; closing: string } {
  const { status, lines } = runLines(...names);
  return { status, closing: lines[lines.length - 1]! };
}

/** Runs vitest on the named files; its exit status and every line it printed. */
function runLines(...names: string[]): { status: number | null; lines: string[] } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS'));
  const vitest = path.join(project, 'node_modules/vitest/vitest.mjs');
  const r = spawnSync(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', ...names], {
    cwd: project,
    env: { ...env, NO_COLOR: '1', CI: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, lines: r.stdout.trimEnd().split('\n') };
}

describe('the summary line', () => {
  it('counts passing tests, exit 0', () => {
    expect(run('passes.test.ts')).toEqual({ status: 0, closing: '2 passed, 0 failed, 0 skipped' });
  });

  it('counts a failed test', () => {
    expect(run('passes.test.ts', 'fails.test.ts')).toEqual({ status: 1, closing: '3 passed, 1 failed, 0 skipped' });
  });

  it('counts a file that throws in beforeAll as failed; its tests are skipped', () => {
    expect(run('passes.test.ts', 'before-all.test.ts')).toEqual({ status: 1, closing: '2 passed, 1 failed, 2 skipped' });
  });

  it('counts a file that does not load as failed', () => {
    expect(run('passes.test.ts', 'load.test.ts')).toEqual({ status: 1, closing: '2 passed, 1 failed, 0 skipped' });
  });

  it('counts each suite whose hook throws', () => {
    expect(run('hooks.test.ts')).toEqual({ status: 1, closing: '1 passed, 2 failed, 1 skipped' });
  });

  it('names the slowest files and the wall time just before the closing line', () => {
    const { lines } = runLines('passes.test.ts', 'fails.test.ts');
    const at = lines.indexOf('slowest files:');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 3).map((l) => l.replace(/^ +[\d.]+ s {2}/, '')).sort()).toEqual(['fails.test.ts', 'passes.test.ts']);
    expect(lines.at(-2)).toMatch(/^wall time \d+\.\d s$/);
    expect(lines.at(-1)).toBe('3 passed, 1 failed, 0 skipped');
  });

  it('never says 0 failed for a failed run, even one with no test files', () => {
    const r = run('no-such-file.test.ts');
    expect(r.status).toBe(1);
    expect(r.closing).toBe('0 passed, 1 failed, 0 skipped');
  });
});
