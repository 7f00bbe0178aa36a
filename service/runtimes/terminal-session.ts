/**
 * A session of the user's terminal history (docs/history.md) that a prompt resumes: its turns'
 * bookkeeping goes to the service's store under this agent id (no project), and the program
 * runs in the session's own directory, writing into its own history file.
 */
export const TERMINAL_AGENT_ID = 'terminal';

export interface TerminalResume {
  /** The directory the program runs in: the session's last recorded one (or the one PATCH set). */
  directory: string;
}
