import { afterEach, describe, expect, it } from 'vitest';
import { createElectronHost, type ElectronSurface } from '../../main/host.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The Electron surface the host uses, faked: Electron's binary cannot run here. The fake
 * records calls and lets each test decide when and how the human answers the dialog.
 */
function fakeElectron(options: { updateAvailable?: boolean; downloadFails?: boolean } = {}) {
  const calls: string[] = [];
  const answers: Array<(response: number) => void> = [];
  const dialogs: any[] = [];
  const surface = {
    app: { relaunch: () => void calls.push('relaunch'), quit: () => void calls.push('quit') },
    dialog: {
      showMessageBox: (...args: any[]) => {
        dialogs.push(args.at(-1));
        return new Promise((resolve) => answers.push((response) => resolve({ response, checkboxChecked: false })));
      },
    },
    updater: {
      checkForUpdates: async () => {
        calls.push('check');
        return { isUpdateAvailable: options.updateAvailable ?? true } as any;
      },
      downloadUpdate: async () => {
        calls.push('download');
        if (options.downloadFails) throw new Error('sha512 checksum mismatch');
        return [];
      },
      quitAndInstall: () => void calls.push('quitAndInstall'),
    },
    window: () => undefined,
  } as unknown as ElectronSurface;
  return { surface, calls, dialogs, answer: (response: number) => answers.shift()!(response) };
}

const TOKEN = 'f'.repeat(64);
const auth = { headers: { 'x-space-token': TOKEN } };
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** Lets queued promise callbacks (the dialog's answer and what follows it) run. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe('lifecycle through the Electron host', () => {
  it('restart answers 202 and relaunches only after the human confirms', async () => {
    const fake = fakeElectron();
    svc = await startService({ host: createElectronHost(fake.surface, { token: TOKEN, rendererOrigins: ['app://space'] }) });
    const res = await svc.post('/app/restart', {}, auth);
    expect(res.status).toBe(202);
    expect(res.json()).toEqual({ status: 'awaiting_confirmation', action: 'restart' });
    await until(() => fake.dialogs.length === 1);
    expect(fake.dialogs[0]).toMatchObject({ buttons: ['Cancel', 'Continue'], cancelId: 0, defaultId: 0 });
    expect(fake.calls).toEqual([]);
    fake.answer(1);
    await until(() => fake.calls.length === 2);
    expect(fake.calls).toEqual(['relaunch', 'quit']);
  });

  it('a declined dialog never relaunches', async () => {
    const fake = fakeElectron();
    svc = await startService({ host: createElectronHost(fake.surface, { token: TOKEN, rendererOrigins: ['app://space'] }) });
    expect((await svc.post('/app/restart', {}, auth)).status).toBe(202);
    await until(() => fake.dialogs.length === 1);
    fake.answer(0);
    // A new request is accepted once the first is settled: proof the decline was processed.
    await settle();
    expect((await svc.post('/app/restart', {}, auth)).status).toBe(202);
    await until(() => fake.dialogs.length === 2);
    fake.answer(0);
    await settle();
    expect(fake.calls).toEqual([]);
  });

  it('only one confirmation is pending at a time', async () => {
    const fake = fakeElectron();
    svc = await startService({ host: createElectronHost(fake.surface, { token: TOKEN, rendererOrigins: ['app://space'] }) });
    expect((await svc.post('/app/update', {}, auth)).status).toBe(202);
    const second = await svc.post('/app/restart', {}, auth);
    expect(second.status).toBe(409);
    expect(second.json().detail).toMatch(/already awaiting confirmation/);
    fake.answer(0);
  });

  it('update goes through the auto-updater after confirmation, never git', async () => {
    const { fake } = await confirmedUpdate({});
    await until(() => fake.calls.length === 3);
    expect(fake.calls).toEqual(['check', 'download', 'quitAndInstall']);
  });

  /** POST /app/update, then Continue in the dialog. */
  async function confirmedUpdate(options: Parameters<typeof fakeElectron>[0]) {
    const fake = fakeElectron(options);
    svc = await startService({ host: createElectronHost(fake.surface, { token: TOKEN, rendererOrigins: ['app://space'] }) });
    expect((await svc.post('/app/update', {}, auth)).status).toBe(202);
    await until(() => fake.dialogs.length === 1);
    fake.answer(1);
    return { fake, svc };
  }

  it('a download that fails verification is never installed', async () => {
    const { fake, svc } = await confirmedUpdate({ downloadFails: true });
    await until(() => svc.logs.some((l) => l.includes('lifecycle action failed')));
    expect(fake.calls).toEqual(['check', 'download']);
    expect(svc.logs.join('')).toContain('sha512 checksum mismatch');
  });

  it('update with nothing new does not restart', async () => {
    const { fake } = await confirmedUpdate({ updateAvailable: false });
    await until(() => fake.calls.length === 1);
    await settle();
    expect(fake.calls).toEqual(['check']);
  });

  it('the Electron host requires its launch token and allows its renderer origin', async () => {
    const fake = fakeElectron();
    svc = await startService({ host: createElectronHost(fake.surface, { token: TOKEN, rendererOrigins: ['app://space'] }) });
    expect((await svc.post('/app/restart', {})).status).toBe(401);
    expect(fake.dialogs).toEqual([]);
    const res = await svc.get('/health', { headers: { ...auth.headers, origin: 'app://space' } });
    expect(res.status).toBe(200);
    expect(res.json().host_kind).toBe('electron');
  });
});

describe('lifecycle in headless mode', () => {
  it.each(['/app/restart', '/app/update', '/gateway/restart'])('%s is refused with 501 and a clear detail', async (path) => {
    svc = await startService();
    const res = await svc.post(path, {});
    expect(res.status).toBe(501);
    expect(res.json().detail).toMatch(/needs a person to confirm it/);
  });
});
