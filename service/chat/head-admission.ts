import type { Request } from 'express';
import type { HttpError } from '../errors.js';
import type { HeadCheck } from '../http/head-checks.js';

/** What the admission reads of the engine. */
interface Admission {
  /** The cap's 429 while every place is taken, else undefined. */
  atCap(): HttpError | undefined;
  /** The sessions a follow-up could be queued for now, with how many places each has left. */
  queuePlaces(): ReadonlyMap<string, number>;
}

/**
 * At the turn cap a prompt is refused from its head, before its body is read (issue 22: the
 * bodies of prompts that cannot run must cost next to nothing). A queued follow-up does not run
 * beside its session's turn and does not count against the cap, but only its body names its
 * session. So while a queue has room the body is read after all, at most as many at once as
 * the queues have places, and its raw bytes must contain the id of a busy session before they
 * are decoded and parsed; any other body is the cap's 429, unparsed (it would get that 429 from
 * the engine anyway). Past those places the head's 429 stands.
 */
export function promptHeadCheck(engine: Admission, isPrompt: (req: Request) => boolean): HeadCheck {
  let reading = 0;
  return (req) => {
    if (!isPrompt(req)) return undefined;
    const full = engine.atCap();
    if (!full) return undefined;
    const places = [...engine.queuePlaces().values()].reduce((a, b) => a + b, 0);
    if (reading >= places || !req.res) return full;
    reading++;
    req.res.once('close', () => reading--);
    return {
      gate: (body) => {
        const refusal = engine.atCap();
        if (!refusal) return undefined;
        // A full queue's session too: the engine then answers with that queue's own 429.
        for (const sessionId of engine.queuePlaces().keys()) if (body.includes(sessionId)) return undefined;
        return refusal;
      },
    };
  };
}
