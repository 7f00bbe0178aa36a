import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding package.json, templates/ and config/. Found by walking up
 * from this module, because it runs both from service/ (tsx) and dist/service/ (built).
 */
export function findAppRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'templates'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no app root above ${from}`);
    dir = up;
  }
}
