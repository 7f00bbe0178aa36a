import { createHash, type Hash } from 'node:crypto';
import { MessageChannel, parentPort } from 'node:worker_threads';
import type { HashReply, HashRequest } from './sha256-thread.js';

/**
 * The hashing thread of uploads (sha256-thread.ts starts it): one running sha256 per job,
 * fed with memory moved here (transferred, not copied), answered in message order.
 */
const jobs = new Map<number, Hash>();

/**
 * Frees moved memory at once. This thread allocates too little to collect garbage often,
 * so memory left to its collector would pile up by tens of megabytes per upload; moving it
 * into a port whose other end is closed drops it right away, with no collection.
 */
const drain = new MessageChannel();
drain.port2.close();
const free = (memory: ArrayBuffer[]): void => drain.port1.postMessage(null, memory);

parentPort!.on('message', (request: HashRequest) => {
  const reply = (message: HashReply): void => parentPort!.postMessage(message);
  let hash = jobs.get(request.job);
  if (!hash) jobs.set(request.job, (hash = createHash('sha256')));
  switch (request.kind) {
    case 'update':
      for (const [memory, offset, length] of request.pieces) hash.update(new Uint8Array(memory, offset, length));
      free([...new Set(request.pieces.map(([memory]) => memory))]);
      return reply({ job: request.job, kind: 'updated' });
    case 'digest':
      jobs.delete(request.job);
      return reply({ job: request.job, kind: 'digest', hex: hash.digest('hex') });
    case 'drop':
      jobs.delete(request.job);
  }
});
