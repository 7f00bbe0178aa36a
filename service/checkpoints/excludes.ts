import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * What a checkpoint leaves out beyond the project's own .gitignore files (which git reads in
 * the work tree by itself): the user's `.git/info/exclude`, the service's own bookkeeping
 * in the project (`.space/`), nested repositories (never copied: reported as not covered)
 * and files over the size bound (listed as skipped). Written to the store's info/exclude
 * before each `add`, as anchored literal paths.
 */
export const SERVICE_FOLDER = '.space';

export async function excludeLines(workTree: string, nested: readonly string[], tooLarge: readonly string[]): Promise<string> {
  const user = await readFile(path.join(workTree, '.git', 'info', 'exclude'), 'utf8').catch(() => '');
  return [user, `/${SERVICE_FOLDER}/`, ...nested.map((p) => `/${literal(p)}/`), ...tooLarge.map((p) => `/${literal(p)}`), ''].join('\n');
}

/** A path as a gitignore pattern that matches only itself. */
function literal(p: string): string {
  return p.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/^ | $/g, (c) => `\\${c}`);
}
