import { existsSync, rmSync } from 'node:fs';
import { startChildService } from '../test/helpers/child-service.js';
import { writeCorpus } from './corpus.js';
import { ok, rssOf } from './lib.js';
const home = '/tmp/st/home';
if (!existsSync(home)) await writeCorpus(home, { sessions: 10_000 });
rmSync(home + '/.space-state', { recursive: true, force: true });
for (let run = 0; run < Number(process.argv[2] ?? 2); run++) {
  const t0 = performance.now();
  const svc = await startChildService({ home, env: { SPACE_LOG_LEVEL: 'debug' }, entry: 'dist/service/cli.js' });
  const tListen = performance.now() - t0;
  let body: any;
  for (;;) {
    body = await ok(svc, '/api/sessions');
    if (body.total === 10_000 && body.sessions.every((s: any) => s.title)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const tFirst = performance.now() - t0;
  console.log(`run ${run}: listening ${tListen.toFixed(0)} ms, first complete page ${tFirst.toFixed(0)} ms, rss ${(rssOf(svc.pid) / 1048576).toFixed(0)} MB`);
  await new Promise((r) => setTimeout(r, Number(process.argv[3] ?? 3000)));
  console.log(svc.output().split('\n').filter((l) => /built|listening|ready|fts|opened|counts/.test(l)).map((l) => l.slice(0, 220)).join('\n'));
  await svc.stop();
}
