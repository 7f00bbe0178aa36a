import { parentPort } from 'node:worker_threads';
import type { SessionRoots } from './layout.js';
import { checkSnapshot } from './snapshot-check.js';

/** The restart's bulk check, beside the snapshot's decode (snapshot-check.ts): a snapshot file and roots in, the check out. */
parentPort?.once('message', (m: { file: string; roots: SessionRoots }) => {
  checkSnapshot(m.file, m.roots).then(
    (check) => parentPort!.postMessage(check ?? null),
    () => parentPort!.postMessage(null),
  );
});
