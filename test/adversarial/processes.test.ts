import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { descendants, expectDetail, startAdversary, type TestService } from './harness.js';

/**
 * No process outlives its reason to run: the programs behind the sign-in flows (claude
 * setup-token on a pty, codex device login, gh device login) after a step timeout, a flow
 * left waiting past its lifetime, a cancel, and a shutdown mid-flow. Each check is on the
 * program's whole process group and on every descendant of the service's process. (Chat
 * turns: chat.test.ts and runtimes.test.ts; the kill -9 of the service: crash.test.ts.)
 */
const BIN = path.resolve(import.meta.dirname, '../fakes/bin');
const CLAUDE_SETUP = path.join(BIN, 'claude');
const CODEX = path.join(BIN, 'codex');
const GH = path.join(BIN, 'gh-pending.sh');
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
  expect(descendants()).toEqual([]);
});

const pidOf = async (s: TestService, file: string): Promise<number> => Number(await readFile(path.join(s.home, file), 'utf8'));

async function start(env: Record<string, string>, control?: [string, unknown]): Promise<TestService> {
  svc = await startAdversary({ env: { SPACE_CLIA_BIN: CLAUDE_SETUP, SPACE_CLIB_BIN: CODEX, SPACE_CODEHOST_CLI_BIN: GH, ...env } });
  if (control) await writeFile(path.join(svc.home, control[0]), JSON.stringify(control[1]));
  return svc;
}

describe('after a timeout', () => {
  it('claude setup-token that never shows its link: 504 within the step timeout, its group gone', async () => {
    const s = await start({ SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '800' }, ['.fake-claude.json', { scenario: 'silent' }]);
    const started = Date.now();
    const res = await s.post('/clia/setup-token', {});
    expect(res.status).toBe(504);
    expectDetail(res);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(livePidsInGroup(await pidOf(s, '.fake-claude.pid'))).toEqual([]);
  });

  it('a setup-token, a codex device login and a gh device login nobody finishes: stopped when their lifetime ends', async () => {
    // Each program is seen alive just after its own start: on a slow machine the three starts
    // together can outlast a lifetime of 1 s, so the lifetime is 3 s and each is checked at once.
    const s = await start({ SPACE_BOOTSTRAP_SESSION_TTL_MS: '3000', SPACE_CODEHOST_DEVICE_TTL_MS: '3000' }, ['.fake-claude.json', { scenario: 'ok' }]);
    const started = async (file: string): Promise<number> => {
      const group = await pidOf(s, file);
      expect(livePidsInGroup(group).length).toBeGreaterThan(0);
      return group;
    };
    expect((await s.post('/clia/setup-token', {})).status).toBe(200);
    const groups = [await started('.fake-claude.pid')];
    expect((await s.post('/clib/setup')).status).toBe(200);
    groups.push(await started('.fake-codex.pid'));
    const gh = await s.post('/api/connectors/codehost/cli/start');
    expect(gh.status, gh.text).toBe(200);
    groups.push(await started('.gh-pending.pid'));
    for (const g of groups) await expect.poll(() => livePidsInGroup(g), { timeout: 10_000 }).toEqual([]);
    expect((await s.get('/clib/setup/status')).json().status).toBe('expired');
    expect((await s.post('/api/connectors/codehost/cli/poll', { session_id: gh.json().session_id })).json().status).toBe('expired');
    await expect.poll(() => s.service.ctx.supervisor.size, { timeout: 5000 }).toBe(0);
  });
});

describe('after a cancel', () => {
  it('codex and gh device logins cancelled: {ok:true} and their groups gone', async () => {
    const s = await start({});
    expect((await s.post('/clib/setup')).status).toBe(200);
    const gh = await s.post('/api/connectors/codehost/cli/start');
    const groups = [await pidOf(s, '.fake-codex.pid'), await pidOf(s, '.gh-pending.pid')];
    expect((await s.post('/clib/setup/cancel')).status).toBe(200);
    expect((await s.post('/api/connectors/codehost/cli/cancel', { session_id: gh.json().session_id })).json()).toMatchObject({ ok: true });
    for (const g of groups) await expect.poll(() => livePidsInGroup(g), { timeout: 8000 }).toEqual([]);
  });

  it('a second setup-token start replaces the first and stops its terminal', async () => {
    const s = await start({}, ['.fake-claude.json', { scenario: 'ok' }]);
    expect((await s.post('/clia/setup-token', {})).status).toBe(200);
    const first = await pidOf(s, '.fake-claude.pid');
    expect((await s.post('/clia/setup-token', {})).status).toBe(200);
    await expect.poll(() => livePidsInGroup(first), { timeout: 8000 }).toEqual([]);
  });
});

describe('at shutdown', () => {
  it('every pending flow program is stopped with the service', async () => {
    const s = await start({}, ['.fake-claude.json', { scenario: 'ok' }]);
    expect((await s.post('/clia/setup-token', {})).status).toBe(200);
    expect((await s.post('/clib/setup')).status).toBe(200);
    expect((await s.post('/api/connectors/codehost/cli/start')).status).toBe(200);
    const groups = [await pidOf(s, '.fake-claude.pid'), await pidOf(s, '.fake-codex.pid'), await pidOf(s, '.gh-pending.pid')];
    await s.service.close();
    for (const g of groups) expect(livePidsInGroup(g)).toEqual([]);
    expect(descendants()).toEqual([]);
  });
});
