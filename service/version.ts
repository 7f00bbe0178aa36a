import { readFileSync } from 'node:fs';
import path from 'node:path';

let cached: { name: string; version: string } | undefined;

/** Name and version from package.json, read once. */
export function packageInfo(appRoot: string): { name: string; version: string } {
  cached ??= (() => {
    const pkg = JSON.parse(readFileSync(path.join(appRoot, 'package.json'), 'utf8')) as { name: string; version: string };
    return { name: pkg.name, version: pkg.version };
  })();
  return cached;
}
