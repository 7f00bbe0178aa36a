import path from 'node:path';
import { writeFileAtomically } from '../../stores/atomic.js';

/** The project's copy of a runtimea transcript: <project>/.space/sessions/<session_id>.jsonl. */
export function projectTranscriptFile(projectsRoot: string, projectId: string, sessionId: string): string {
  return path.join(projectsRoot, projectId, '.space', 'sessions', `${sessionId}.jsonl`);
}

export function copyTranscript(projectsRoot: string, projectId: string, sessionId: string, jsonl: string): Promise<void> {
  return writeFileAtomically(projectTranscriptFile(projectsRoot, projectId, sessionId), jsonl);
}
