/** list-directory of a folder of 10,000 entries (9,000 files, 900 directories, 100 symlinks) on a real service process. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startChildService } from '../test/helpers/child-service.js';
import { median, percentile, row } from './lib.js';

const ROUNDS = 30;

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-list-'));
const dir = path.join(home, 'big');
await mkdir(dir);
for (let i = 0; i < 9000; i++) await writeFile(path.join(dir, `File-${String(i).padStart(5, '0')}.txt`), '');
for (let i = 0; i < 900; i++) await mkdir(path.join(dir, `dir-${i}`));
for (let i = 0; i < 100; i++) await symlink(path.join(dir, `dir-${i}`), path.join(dir, `link-${i}`));

const service = await startChildService({ home });
try {
  const times: number[] = [];
  let bytes = 0;
  for (let round = 0; round < ROUNDS + 3; round++) {
    const started = process.hrtime.bigint();
    const res = await service.post('/api/files/list-directory', { path: dir });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
    const body = res.json();
    if (body.dirs.length + body.files.length !== 10_000) throw new Error('wrong entry count');
    bytes = res.body.length;
    if (round >= 3) times.push(ms); // the first rounds warm the JIT and the dentry cache
  }
  row('entries', '10,000 (9,000 files, 900 dirs, 100 symlinks)');
  row('response size', `${(bytes / 1024).toFixed(0)} KB`);
  row(`latency median / p95 (${ROUNDS} requests)`, `${median(times).toFixed(1)} ms / ${percentile(times, 95).toFixed(1)} ms`);
} finally {
  await service.stop();
  await rm(home, { recursive: true, force: true });
}
