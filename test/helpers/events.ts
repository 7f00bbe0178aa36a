import type { RuntimeEvent } from '../../service/runtimes/runtime.js';

/** Every event of a turn, in order; `onEvent` sees each as it comes (to abort mid-turn). */
export async function collect(events: AsyncIterable<RuntimeEvent>, onEvent?: (e: RuntimeEvent) => void): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for await (const event of events) {
    out.push(event);
    onEvent?.(event);
  }
  return out;
}

/** The text of a turn's `text` events, joined. */
export function textOf(events: RuntimeEvent[]): string {
  return events.map((e) => (e.type === 'text' ? e.text : '')).join('');
}
