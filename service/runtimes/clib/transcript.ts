import type { Logger } from '../../log.js';
import type { CliSessionStore } from '../cli-session-store.js';
import { LineAppender } from '../line-appender.js';
import type { ThreadEvent } from './thread-events.js';

/**
 * The clib transcript, ~/clib-space/<agent_id>/sessions/<session_id>.jsonl (format fixed by
 * the lead): each turn opens with `{"type":"user.message","text",...}`, then codex's
 * ThreadEvents in exec's shape, every line with an ISO 8601 `timestamp`, appended in arrival
 * order without holding the turn up.
 */
export type TranscriptLine = ThreadEvent | { type: 'user.message'; text: string; attachments?: Array<{ name: string; path: string; mime: string }> };

export class TranscriptWriter {
  private readonly appender: LineAppender;

  constructor(store: CliSessionStore, agentId: string, sessionId: string, log: Logger) {
    this.appender = new LineAppender(
      (lines) => store.append(agentId, sessionId, lines),
      (err) => log.error({ err: String(err), sessionId }, 'clib: a transcript write failed'),
    );
  }

  write(line: TranscriptLine): void {
    this.appender.add(JSON.stringify({ ...line, timestamp: new Date().toISOString() }));
  }

  flush(): Promise<void> {
    return this.appender.flush();
  }
}
