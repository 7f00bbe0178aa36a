import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

/**
 * What a kill -9 leaves behind, laid out before the service starts: its own stale temp
 * files must go, and nothing else (other names, links, folders, newer files).
 */
let home: string;
let svc: TestService;
const stale: string[] = [];
const kept: string[] = [];
const hourAgo = new Date(Date.now() - 3600_000);

async function file(rel: string, old = true): Promise<string> {
  const full = path.join(home, rel);
  await mkdir(path.dirname(full), { recursive: true });
  await writeFile(full, 'partial');
  if (old) await utimes(full, hourAgo, hourAgo);
  return full;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-sweep-'));
  await writeFile(path.join(home, 'outside-target'), 'x');
  await mkdir(path.join(home, '.runtimea'), { recursive: true });
  await writeFile(path.join(home, '.runtimea', 'runtimea.json'), JSON.stringify({ agents: [{ id: 'a1', name: 'A', env_file: path.join(home, 'envs', 'agent.env') }] }));
  stale.push(
    await file('.runtimea/.runtimea.json.0123456789ab.tmp'),
    await file('.runtimea/..env.a1b2c3d4e5f6.tmp'),
    await file('.space-state/.state.json.abcdefabcdef.tmp'),
    await file('uploads/.upload-0123456789abcdef.part'),
    await file('uploads/.report.pdf.00aa11bb22cc.tmp'),
    await file('envs/.agent.env.ffffffffffff.tmp'),
    await file('clia-space/proj1/sessions/.sessions.json.123456abcdef.tmp'),
    await file('clib-space/proj2/sessions/.sessions.json.123456abcdef.tmp'),
    await file('space-projects/p1/.space/sessions/.sessionslist.json.aaaaaaaaaaaa.tmp'),
  );
  kept.push(
    await file('.runtimea/.env'),
    await file('.runtimea/notes.tmp'), // not a name the service makes
    await file('.runtimea/.x.0123456789AB.tmp'), // upper-case hex: not ours
    await file('.runtimea/.x.0123456789a.tmp'), // 11 hex
    await file('uploads/.upload-0123456789abcdef.part.bak'),
    await file('uploads/upload-0123456789abcdef.part'),
    await file('uploads/.upload-0123456789abcde.part'), // 15 hex
    await file('uploads/.fresh.000000000000.tmp', false), // newer than the process: kept
    await file('Documents/.report.0123456789ab.tmp'), // a folder the service does not sweep
  );
  const link = path.join(home, 'uploads', '.upload-fedcba9876543210.part');
  await symlink(path.join(home, 'outside-target'), link);
  kept.push(link, path.join(home, 'outside-target'));
  await mkdir(path.join(home, 'uploads', '.upload-aaaaaaaaaaaaaaaa.part'));
  kept.push(path.join(home, 'uploads', '.upload-aaaaaaaaaaaaaaaa.part'));
  svc = await startService({ home, env: { SPACE_ACTIVE_AGENT: 'a1' } });
});
afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

describe('start-up sweep of stale temp files', () => {
  it('removes the service own temp files older than the process from the folders it writes in', () => {
    expect(stale.filter((f) => existsSync(f)).map((f) => path.relative(home, f))).toEqual([]);
  });

  it('keeps every other name, links, folders, newer files and other folders', () => {
    expect(kept.filter((f) => !existsSync(f)).map((f) => path.relative(home, f))).toEqual([]);
  });

  it('says how many it removed, and the service answers', async () => {
    expect(svc.logs.some((l) => l.includes('"removed":9'))).toBe(true);
    expect((await svc.get('/')).status).toBe(200);
  });
});
