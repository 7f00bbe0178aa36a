/**
 * `npm run bench`: runs every bench/*.bench.ts in turn, each in its own process so one
 * bench's memory and open handles cannot skew the next, and prints their figures.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
const benches = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts'))
  .sort();
const only = process.argv.slice(2);
let failed = 0;
for (const name of benches) {
  if (only.length > 0 && !only.some((o) => name.includes(o))) continue;
  console.log(`\n== ${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, name)], { stdio: 'inherit', cwd: path.dirname(dir) });
  if (result.status !== 0) {
    failed++;
    console.log(`!! ${name} exited with ${result.status ?? result.signal}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
