/**
 * Drive connectors on a real service process with the real rclone: listing the remotes of
 * a config file holding 50 of them (one `rclone config dump` per request), and a whole
 * Google Drive OAuth flow (start -> awaiting_oauth -> code handed over -> completed) against
 * the fake OAuth server on loopback. Uses rclone's port 53682.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getOnce } from '../service/connectors/drives/listener.js';
import { startFakeOAuth } from '../test/fakes/oauth-server.js';
import { startChildService } from '../test/helpers/child-service.js';
import { median, percentile, row } from './lib.js';

const ROUNDS = 20;
const FLOWS = 5;

const home = await mkdtemp(path.join(os.tmpdir(), 'space-bench-drives-'));
const conf = path.join(home, '.config', 'rclone', 'rclone.conf');
await mkdir(path.dirname(conf), { recursive: true });
const token = JSON.stringify({ access_token: 'x', token_type: 'Bearer', refresh_token: 'y', expiry: '2030-01-01T00:00:00Z' });
await writeFile(conf, Array.from({ length: 50 }, (_, i) => `[r${i}]\ntype = ${i % 2 ? 'onedrive' : 'drive'}\ntoken = ${token}\n`).join('\n'), { mode: 0o600 });

const fake = await startFakeOAuth();
const service = await startChildService({ home, env: { RCLONE_DRIVE_AUTH_URL: `${fake.url}/auth`, RCLONE_DRIVE_TOKEN_URL: `${fake.url}/token` } });
const elapsed = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;
try {
  const list: number[] = [];
  for (let round = 0; round < ROUNDS + 2; round++) {
    const started = process.hrtime.bigint();
    const res = await service.request('GET', '/api/connectors/drivea/remotes');
    if (res.status !== 200 || res.json().remotes.length !== 25) throw new Error(`list failed: ${res.status} ${res.text}`);
    if (round >= 2) list.push(elapsed(started));
  }
  row(`list 25 of 50 remotes, median / p95 (${ROUNDS})`, `${median(list).toFixed(1)} ms / ${percentile(list, 95).toFixed(1)} ms`);

  const toLink: number[] = [];
  const toDone: number[] = [];
  for (let i = 0; i < FLOWS; i++) {
    const started = process.hrtime.bigint();
    const id = (await service.post('/api/connectors/drivea/remotes', { name: `flow${i}` })).json().session_id as string;
    let session: { status: string; auth_url: string };
    do session = (await service.request('GET', `/api/connectors/drivea/sessions/${id}`)).json();
    while (session.status === 'pending');
    toLink.push(elapsed(started));
    const { location } = await getOnce(session.auth_url, 5000); // the provider: 302 back to rclone
    await getOnce(location!, 5000).catch(() => undefined); // rclone may hang up after taking the code
    do session = (await service.request('GET', `/api/connectors/drivea/sessions/${id}`)).json();
    while (session.status === 'awaiting_oauth');
    if (session.status !== 'completed') throw new Error(`flow ended ${session.status}`);
    toDone.push(elapsed(started));
  }
  row(`OAuth flow: start -> auth_url, median (${FLOWS})`, `${median(toLink).toFixed(0)} ms`);
  row(`OAuth flow: start -> completed, median (${FLOWS})`, `${median(toDone).toFixed(0)} ms`);
} finally {
  await service.stop();
  await fake.close();
  await rm(home, { recursive: true, force: true });
}
