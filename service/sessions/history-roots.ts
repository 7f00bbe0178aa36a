import path from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { HistoryKeeper } from './history-keep.js';
import type { SessionRoots } from './layout.js';
import type { SessionIndex } from './session-index.js';

/**
 * Where the user's terminal history is read (docs/history.md): Claude Code's `projects/` in
 * its config folder (CLAUDE_CONFIG_DIR, else ~/.claude) and Codex's `sessions/` and
 * `archived_sessions/` in the Codex home the runtimes use (SPACE_CODEX_HOME, CODEX_HOME,
 * ~/.codex), and the service's own copies of them. None when SPACE_HISTORY is off.
 */
export function historyRoots(config: Pick<Config, 'history' | 'paths'>): Pick<SessionRoots, 'cliaHome' | 'clibHome' | 'clibArchive' | 'cliaKept' | 'clibKept'> {
  if (!config.history) return {};
  return {
    cliaHome: path.join(config.paths.claudeConfigDir, 'projects'),
    clibHome: path.join(config.paths.codexHome, 'sessions'),
    clibArchive: path.join(config.paths.codexHome, 'archived_sessions'),
    ...keptRoots(config.paths.historyKept),
  };
}

/** The service's own copies of terminal history, one folder a program (history-keep.ts writes them). */
export function keptRoots(dir: string): { cliaKept: string; clibKept: string } {
  return { cliaKept: path.join(dir, 'clia'), clibKept: path.join(dir, 'clib') };
}

/** The keeper of terminal history copies, started (only while history reading is on: history-switch.ts). */
export function startHistoryKeeper(ctx: { config: Pick<Config, 'paths' | 'historyKeepBytes'>; sessions: SessionIndex; log: Logger }): HistoryKeeper {
  const keeper = new HistoryKeeper(ctx.sessions, keptRoots(ctx.config.paths.historyKept), ctx.config.historyKeepBytes, ctx.log);
  keeper.start();
  return keeper;
}
