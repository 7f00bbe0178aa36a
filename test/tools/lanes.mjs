// The real-program lanes: every test file that starts one of the drifting programs (a
// `realProgram('claude' | 'codex' | 'openclaw')` call), wherever it lives and whatever its
// name. `npm run test:latest` runs exactly these against the newest published versions.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const STARTS_A_PROGRAM = /\brealProgram\(\s*['"](claude|codex|openclaw)['"]\s*\)/;

/** Paths relative to `root` of the lanes under `root`/test, sorted. */
export function laneFiles(root) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return walk(full);
      return e.name.endsWith('.test.ts') && STARTS_A_PROGRAM.test(readFileSync(full, 'utf8')) ? [path.relative(root, full)] : [];
    });
  return walk(path.join(root, 'test')).sort();
}
