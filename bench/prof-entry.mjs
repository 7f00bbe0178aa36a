/**
 * The service as `npm start` runs it, with V8's CPU profiler on the main thread (bench
 * HISTORY_BENCH_PROF: Node 20 refuses --cpu-prof in NODE_OPTIONS, and the bench's child
 * service takes no node flags): `<SPACE_BENCH_PROF_DIR>/<pid>.cpuprofile` is written at exit.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.SPACE_BENCH_PROF_DIR;
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (err, result) => {
    if (!err && dir) writeFileSync(path.join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
await import('../build/start.mjs');
