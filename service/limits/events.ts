import type { LimitsListener } from './store.js';

/** The event channel's publish (events/ sits above this floor). */
export type PublishLimits = (event: 'limits-changed' | 'limits-warning', data: Record<string, unknown>) => void;

/**
 * `limits-changed {runtime, entry}` whenever a runtime's entry changes, and `limits-warning
 * {runtime, window, state}` once per window and period past 80 % or at the program's own
 * warning (`window` null when the program warned without naming one).
 */
export function limitsToEvents(publish: PublishLimits): LimitsListener {
  return {
    changed: (entry) => publish('limits-changed', { runtime: entry.runtime, entry: { ...entry } }),
    warning: (runtime, window, entry) => publish('limits-warning', { runtime, window: window ? { ...window } : null, state: entry.state }),
  };
}
