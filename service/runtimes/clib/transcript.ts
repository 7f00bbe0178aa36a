import type { Logger } from '../../log.js';
import type { CliSessionStore } from '../cli-session-store.js';
import { LineAppender } from '../line-appender.js';
import type { TranscriptLine } from '../../transcripts/clib-events.js';

/**
 * Writes the clib transcript, ~/clib-space/<agent_id>/sessions/<session_id>.jsonl (its records:
 * transcripts/clib-events.ts), every line stamped with an ISO 8601 `timestamp`, appended in
 * arrival order without holding the turn up.
 */
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
