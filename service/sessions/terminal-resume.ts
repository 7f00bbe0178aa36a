import { stat } from 'node:fs/promises';
import { HttpError } from '../errors.js';
import type { AgentName } from '../runtimes/runtime.js';
import { TERMINAL_AGENT_ID, type TerminalResume } from '../runtimes/terminal-session.js';
import { originOf } from './fold.js';
import { lastDirectory } from './last-directory.js';
import type { SessionView } from './merge.js';
import type { SessionIndex } from './session-index.js';
import { openElsewhere } from './terminal-open.js';

/** What a prompt to a terminal session runs with: its program, and where. */
export interface TerminalTurn {
  agentName: AgentName;
  terminal: TerminalResume;
}

/**
 * A prompt whose session_id is a session of the user's terminal history (docs/history.md):
 * it resumes on its own program, in the session's last recorded directory (or the one a PATCH
 * set), unless the session is open in a terminal right now (409, pointing at fork) or its
 * directory is gone (409, pointing at PATCH). Undefined for any other session.
 */
export class TerminalSessions {
  constructor(
    private readonly index: SessionIndex,
    private readonly claudeConfigDir: string,
    /** Whether history reading is on now (the config API's switch): off, nothing is resumed. */
    private readonly enabled: () => boolean = () => true,
  ) {}

  async resume(sessionId: string): Promise<TerminalTurn | undefined> {
    if (!this.enabled()) return undefined;
    const view = await this.index.get(sessionId);
    if (!view || originOf(view.records[0]!) !== 'terminal') return undefined;
    const open = await openElsewhere(view, this.claudeConfigDir);
    if (open) {
      throw new HttpError(
        409,
        `Session ${sessionId} is open in a terminal right now (${open.program}, process ${open.pid}); resuming it here would write a second branch into the same history. Close it there first, or fork it (POST /api/sessions/${sessionId}/fork) to carry on in the app.`,
      );
    }
    const directory = patched(view) ?? (view.log ? await lastDirectory(view.log).catch(() => undefined) : undefined) ?? view.directory;
    if (!directory || !(await isDirectory(directory))) {
      throw new HttpError(409, `The working directory of session ${sessionId} (${directory || 'none recorded'}) no longer exists; point the session elsewhere with PATCH /api/sessions/${sessionId} {"directory": ...}, then send the prompt again.`);
    }
    return { agentName: view.agentName, terminal: { directory } };
  }
}

/** The directory a PATCH gave the session (its entry in the service's store under the terminal agent id). */
function patched(view: SessionView): string | undefined {
  return view.records.find((r) => r.agentId === TERMINAL_AGENT_ID && (r.source === 'clia' || r.source === 'clib') && r.directory)?.directory;
}

async function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then((s) => s.isDirectory(), () => false);
}
