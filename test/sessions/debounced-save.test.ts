import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../service/log.js';
import { DebouncedSave } from '../../service/sessions/debounced-save.js';

/** The service's saved state files: written a delay after a change, and never after close (the folder may be gone by then). */
let dir: string;
const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
afterEach(() => rm(dir, { recursive: true, force: true }));

it('writes what is waiting at close, then nothing for a change after it', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'space-debounced-'));
  const file = path.join(dir, 'state', 'counts.json');
  let body = 'one\n';
  const saver = new DebouncedSave(file, 20, () => body, log, 'test state');
  saver.schedule();
  await saver.close();
  expect(await readFile(file, 'utf8')).toBe('one\n');
  // A count that ends as the service stops, after the folder was removed.
  await rm(path.join(dir, 'state'), { recursive: true });
  body = 'two\n';
  saver.schedule();
  await pause(1000); // past the delay and the pacing after a save (20 times its time)
  await expect(stat(path.join(dir, 'state'))).rejects.toMatchObject({ code: 'ENOENT' });
});
