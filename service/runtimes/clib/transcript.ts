import type { TranscriptLine } from '../../transcripts/clib-events.js';
import type { LineAppender } from '../line-appender.js';

/**
 * Writes the clib transcript, ~/clib-space/<agent_id>/sessions/<session_id>.jsonl (its records:
 * transcripts/clib-events.ts), every line stamped with an ISO 8601 `timestamp`, appended in
 * arrival order without holding the turn up (the turn's appender, turn-books.ts).
 */
export class TranscriptWriter {
  constructor(private readonly appender: LineAppender) {}

  write(line: TranscriptLine): void {
    this.appender.add(JSON.stringify({ ...line, timestamp: new Date().toISOString() }));
  }

  flush(): Promise<void> {
    return this.appender.flush();
  }
}
