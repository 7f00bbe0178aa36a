import type { IpcMainInvokeEvent } from 'electron';
import { originOf } from './external-links.js';

/** Only the app's own top-level frame may call: not another origin, not an iframe. */
export function assertAppFrame(event: Pick<IpcMainInvokeEvent, 'senderFrame'>, appOrigin: string): void {
  const frame = event.senderFrame;
  if (originOf(frame?.url ?? '') !== appOrigin || frame?.parent) throw new Error('IPC refused: not the app frame');
}

/**
 * A failure as the renderer should see it: the service's `detail` text only, never a stack
 * or the properties of the original error.
 */
export async function bridgeError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new Error(err instanceof Error ? err.message : String(err));
  }
}
