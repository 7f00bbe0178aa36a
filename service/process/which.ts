import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** Absolute path of an executable as the OS would find it on PATH, or null. */
export function which(command: string, searchPath = process.env.PATH ?? ''): string | null {
  const candidates = command.includes('/') ? [command] : searchPath.split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // not here; keep looking
    }
  }
  return null;
}
