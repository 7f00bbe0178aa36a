import path from 'node:path';
import type { Config } from '../config.js';
import type { SessionRoots } from './layout.js';

/**
 * Where the user's terminal history is read (docs/history.md): Claude Code's `projects/` in
 * its config folder (CLAUDE_CONFIG_DIR, else ~/.claude) and Codex's `sessions/` and
 * `archived_sessions/` in the Codex home the runtimes use (SPACE_CODEX_HOME, CODEX_HOME,
 * ~/.codex). None when SPACE_HISTORY is off.
 */
export function historyRoots(config: Pick<Config, 'history' | 'paths'>): Pick<SessionRoots, 'cliaHome' | 'clibHome' | 'clibArchive'> {
  if (!config.history) return {};
  return {
    cliaHome: path.join(config.paths.claudeConfigDir, 'projects'),
    clibHome: path.join(config.paths.codexHome, 'sessions'),
    clibArchive: path.join(config.paths.codexHome, 'archived_sessions'),
  };
}
