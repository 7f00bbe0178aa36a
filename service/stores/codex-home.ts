import { chmod, mkdir } from 'node:fs/promises';

/**
 * The Codex home the service gives every codex it starts (config.paths.codexHome: the user's
 * own, `SPACE_CODEX_HOME`, else `CODEX_HOME`, else `~/.codex`), so their login, providers and
 * MCP servers are the ones codex uses inside the app. Codex refuses a CODEX_HOME that does
 * not exist, so a missing one is made here, 0700 like codex's own; an existing folder is the
 * user's and is left as it is.
 */
export async function ensureCodexHome(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) await chmod(dir, 0o700);
}
