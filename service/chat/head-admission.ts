import type { Request } from 'express';
import type { HttpError } from '../errors.js';
import type { HeadCheck } from '../http/head-checks.js';

/** What the admission reads of the engine. */
interface Admission {
  /** The cap's 429 while every place is taken, else undefined. */
  atCap(): HttpError | undefined;
  /** How many more follow-ups the busy sessions' queues can take, all together. */
  queuePlaces(): number;
}

/**
 * At the turn cap a prompt is refused from its head, before its body is read (issue 22: bodies
 * of prompts that cannot run must cost nothing). A queued follow-up does not run beside its
 * session's turn and does not count against the cap, so while a busy session's queue has room
 * a prompt's body is read after all: it may be such a follow-up (only the body names its
 * session). At most as many bodies are read at once as the queues have places; past that the
 * head's 429 stands. A prompt read this way that is no follow-up gets the same 429 from the engine.
 */
export function promptHeadCheck(engine: Admission, isPrompt: (req: Request) => boolean): HeadCheck {
  let reading = 0;
  return (req) => {
    if (!isPrompt(req)) return undefined;
    const full = engine.atCap();
    if (!full) return undefined;
    if (reading >= engine.queuePlaces() || !req.res) return full;
    reading++;
    req.res.once('close', () => reading--);
    return undefined;
  };
}
