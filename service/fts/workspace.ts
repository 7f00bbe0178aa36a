import { stat } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';
import { SAFE_ID } from '../ids.js';

/**
 * `{ws}`: `all` (every session; undefined here), or a project id, i.e. the name of a folder
 * under the projects root, whose sessions are those with that `agent_id`. Anything else is
 * 404 with a detail that says what is accepted.
 */
export async function resolveWorkspace(projectsRoot: string, ws: string): Promise<string | undefined> {
  if (ws === 'all') return undefined;
  const exists = SAFE_ID.test(ws) && ws !== '.' && ws !== '..' && (await stat(path.join(projectsRoot, ws)).then((s) => s.isDirectory(), () => false));
  if (!exists) throw new HttpError(404, `Workspace not found: ${JSON.stringify(ws)} is neither "all" nor a project under ${projectsRoot}`);
  return ws;
}
