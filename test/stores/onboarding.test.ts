import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../helpers/service.js';

let home: string;
let stateFile: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-onboarding-'));
  stateFile = path.join(home, '.space-state', 'state.json');
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('onboarding state', () => {
  it('first read records first_run_at; complete is idempotent; the state survives a restart', async () => {
    const first = await startService({ home });
    let firstRunAt: string;
    try {
      const initial = await first.get('/api/onboarding');
      expect(initial.status).toBe(200);
      const state = initial.json();
      expect(state).toEqual({ onboarding_completed: false, onboarding_step: 'welcome', first_run_at: expect.any(String) });
      firstRunAt = state.first_run_at;
      expect(new Date(firstRunAt).toISOString()).toBe(firstRunAt);
      expect((await first.get('/api/onboarding')).json().first_run_at).toBe(firstRunAt);

      expect((await first.post('/api/onboarding/complete')).json()).toEqual({ ok: true });
      const written = await readFile(stateFile, 'utf8');
      expect((await first.post('/api/onboarding/complete', {})).json()).toEqual({ ok: true });
      expect(await readFile(stateFile, 'utf8')).toBe(written);
      expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
      expect((await stat(path.dirname(stateFile))).mode & 0o777).toBe(0o700);
    } finally {
      await first.close();
    }

    const second = await startService({ home });
    try {
      expect((await second.get('/api/onboarding')).json()).toEqual({ onboarding_completed: true, onboarding_step: 'welcome', first_run_at: firstRunAt });
    } finally {
      await second.close();
    }
  });

  it('keeps fields it does not own, and a stored step', async () => {
    const svc = await startService();
    try {
      const file = path.join(svc.home, '.space-state', 'state.json');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, JSON.stringify({ onboarding_step: 'providers', window: { w: 800 } }));
      expect((await svc.get('/api/onboarding')).json()).toMatchObject({ onboarding_completed: false, onboarding_step: 'providers' });
      await svc.post('/api/onboarding/complete');
      expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ onboarding_completed: true, onboarding_step: 'providers', window: { w: 800 } });
    } finally {
      await svc.close();
    }
  });

  it('a corrupt state file is 500 {detail} and left untouched', async () => {
    const svc = await startService();
    try {
      const file = path.join(svc.home, '.space-state', 'state.json');
      await mkdir(path.dirname(file), { recursive: true });
      for (const content of ['{"onboarding_completed": tru', '[]']) {
        await writeFile(file, content);
        for (const res of [await svc.get('/api/onboarding'), await svc.post('/api/onboarding/complete')]) {
          expect(res.status).toBe(500);
          expect(res.json().detail).toContain('left untouched');
        }
        expect(await readFile(file, 'utf8')).toBe(content);
      }
    } finally {
      await svc.close();
    }
  });
});
