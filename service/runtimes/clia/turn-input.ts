import type { SteerInput } from '../runtime.js';
import { userMessage } from './control.js';
import { userContent, type UserContent } from './user-content.js';

/** Where a steer goes while the turn's stdin is open: the CLI, and the service's transcript. */
export interface TurnInputSink {
  write(line: string): void;
  record(input: SteerInput): void;
}

/**
 * A running clia turn's stdin, for `delivery: "steer"`: a user message written while the turn
 * runs. Claude Code takes it into the running turn at its next tool boundary (the model gets
 * "The user sent a new message while you were working: ..."), or, when it comes after the
 * last one, answers it as one more turn of the same process before it exits; either way
 * before this turn ends (turn.ts then ends it at the process's exit). Open from the CLI's
 * `init` (the session was found) to its first `result` (stdin is then closed).
 */
export class CliaTurnInput {
  private sink: TurnInputSink | undefined;
  /** Steers written to the CLI in this turn. */
  steered = 0;

  open(sink: TurnInputSink): void {
    this.sink = sink;
  }

  close(): void {
    this.sink = undefined;
  }

  get isOpen(): boolean {
    return this.sink !== undefined;
  }

  async steer(input: SteerInput): Promise<boolean> {
    if (!this.sink) return false;
    let content: UserContent;
    try {
      content = await userContent(input.text, input.attachments);
    } catch {
      return false; // an image gone since the chat checked it: queued, where its turn says so
    }
    // The images were read meanwhile: the turn may have ended.
    const sink = this.sink;
    if (!sink) return false;
    sink.write(userMessage(content));
    this.steered++;
    sink.record(input);
    return true;
  }
}
