import path from 'node:path';
import { writeFileAtomically } from '../../stores/atomic.js';

/**
 * What a turn takes from the gateway's transcript (records of research runtimea §5): the LLM
 * that answered and the run's cost, both of which the SSE stream leaves out. The run's
 * assistant records are those tagged with its run id (`__openclaw.runId`, OpenClaw >= 2026.9)
 * or, without tags (2026.7.1), those after the last user record.
 */
export interface RunDetails {
  model?: string;
  costUsd?: number;
  /** Whether an assistant record of the run is there yet. */
  answered: boolean;
}

export function runDetails(jsonl: string, runId?: string): RunDetails {
  const messages = jsonl
    .split('\n')
    .map(parseLine)
    .filter((r): r is { type: string; message: any } => r?.type === 'message' && !!r.message);
  const tagged = runId ? messages.filter((r) => r.message.__openclaw?.runId === runId) : [];
  let run = tagged;
  if (!run.length) {
    const lastUser = messages.map((r) => r.message.role).lastIndexOf('user');
    run = messages.slice(lastUser + 1);
  }
  const assistant = run.filter((r) => r.message.role === 'assistant');
  if (!assistant.length) return { answered: false };
  const costs = assistant.map((r) => r.message.usage?.cost?.total).filter((c): c is number => typeof c === 'number');
  const model = assistant.at(-1)!.message.model;
  return {
    answered: true,
    ...(typeof model === 'string' ? { model } : {}),
    ...(costs.length ? { costUsd: costs.reduce((a, b) => a + b, 0) } : {}),
  };
}

/**
 * The id of the user record of a prompt the service sent at `sentAt` (epoch ms) with `text`:
 * the first user record whose send time (`message.timestamp`, stamped by the gateway when it
 * took the request) is not before it and whose text is that text. The gateway keeps an image
 * only as an `image` block; what was attached is the service's own record (sent-attachments.ts).
 */
export function userRecordId(jsonl: string, sentAt: number, text: string): string | undefined {
  for (const line of jsonl.split('\n')) {
    const r = parseLine(line);
    const m = r?.type === 'message' ? r.message : undefined;
    if (m?.role !== 'user' || typeof r.id !== 'string' || typeof m.timestamp !== 'number' || m.timestamp < sentAt) continue;
    if (textOf(m.content) === text) return r.id;
  }
  return undefined;
}

/** A user message's text as sent: the string, or its text blocks joined. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
}

/** The project's copy of a runtimea transcript: <project>/.space/sessions/<session_id>.jsonl. */
export function projectTranscriptFile(projectsRoot: string, projectId: string, sessionId: string): string {
  return path.join(projectsRoot, projectId, '.space', 'sessions', `${sessionId}.jsonl`);
}

export function copyTranscript(projectsRoot: string, projectId: string, sessionId: string, jsonl: string): Promise<void> {
  return writeFileAtomically(projectTranscriptFile(projectsRoot, projectId, sessionId), jsonl);
}

function parseLine(line: string): any {
  if (!line.trim()) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
