import { HttpError } from '../errors.js';
import { isAgentName } from '../ids.js';
import type { SessionIndex } from '../sessions/session-index.js';
import { JsonFile } from '../stores/json-file.js';
import { usd } from '../usage/aggregate.js';
import type { UsageStore } from '../usage/store.js';
import { periodOf, type Period } from './periods.js';
import type { BudgetSpec } from './spec.js';
import { Spend } from './spend.js';

interface StoredBudget extends BudgetSpec {
  id: string;
  updated_at: string;
}

/** The budgets file: the budgets, and the thresholds already announced in each one's current period. */
interface BudgetsDoc {
  budgets: Record<string, StoredBudget>;
  crossed: Record<string, { period: string; fractions: number[] }>;
}

/** A budget as `GET /api/budgets` answers it. */
export interface BudgetView extends StoredBudget {
  period_start: string;
  resets_at: string;
  spent_usd: number;
  /** The period's spend at the current rate (spent so far over the time gone, at least an hour, times the whole period). */
  projected_usd: number;
  /** List prices applied to the logged tokens, as `/api/usage`: an estimate, not the vendor's bill. */
  basis: 'list_price_estimate';
  state: 'ok' | 'warning' | 'exceeded';
}

export type PublishBudget = (event: 'budget-threshold', data: Record<string, unknown>) => void;

const HOUR_MS = 3_600_000;

/**
 * Budgets over the usage figures (docs/limits.md): stored atomically in one file, each one's
 * spend read from the usage store as `/api/usage` reads it. A threshold is announced once per
 * budget, threshold and period (`budget-threshold` on the event channel), when a turn ends or
 * the budgets are read. `hold_new_turns` refuses new prompts in scope past the limit (402);
 * a turn already running is never cut.
 */
export class Budgets {
  private readonly file: JsonFile<BudgetsDoc>;
  /** The file as last read or written: this service is its one writer. */
  private doc: BudgetsDoc | undefined;
  /** The spend of the last evaluation and from which UTC time it holds; dropped when a log changes. */
  private spend: { sinceMs: number; spend: Spend } | undefined;
  /** One evaluation at a time: thresholds are written once. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    file: string,
    private readonly deps: { usage: UsageStore; sessions: SessionIndex },
    private readonly publish: PublishBudget,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new JsonFile<BudgetsDoc>(file, () => ({ budgets: {}, crossed: {} }), { mode: 0o600 });
    // The index reports every changed log (the service's turns before their `done`, and
    // programs run outside it through the watchers): until one changes, the spend stands.
    deps.sessions.onLogChange(() => (this.spend = undefined));
  }

  /** Every budget with its spend; announces thresholds newly crossed. */
  list(): Promise<BudgetView[]> {
    return this.serial(() => this.evaluate());
  }

  async put(id: string, spec: BudgetSpec): Promise<BudgetView> {
    await this.serial(() =>
      this.file.update((doc) => {
        const budgets = { ...doc.budgets, [id]: { id, ...spec, updated_at: new Date(this.now()).toISOString() } };
        this.doc = { budgets, crossed: doc.crossed ?? {} };
        return { next: this.doc, result: undefined };
      }),
    );
    return (await this.list()).find((b) => b.id === id)!;
  }

  /** False when there was no such budget. */
  delete(id: string): Promise<boolean> {
    return this.serial(() =>
      this.file.update((doc) => {
        if (!doc.budgets[id]) return { next: doc, result: false };
        const { [id]: _gone, ...budgets } = doc.budgets;
        const { [id]: _crossed, ...crossed } = doc.crossed ?? {};
        this.doc = { budgets, crossed };
        return { next: this.doc, result: true };
      }),
    );
  }

  /** 402 for a new turn in the scope of a `hold_new_turns` budget past its limit. */
  async refuse(turn: { agentName: string; agentId: string | null }): Promise<HttpError | undefined> {
    const doc = await this.read();
    const holding = Object.values(doc.budgets).filter((b) => b.action === 'hold_new_turns' && inScope(b.scope, turn));
    if (holding.length === 0) return undefined;
    for (const b of await this.list()) {
      if (!holding.some((h) => h.id === b.id) || b.spent_usd < b.limit_usd) continue;
      return new HttpError(402, `Budget "${b.id}" has reached its limit ($${b.spent_usd.toFixed(2)} of $${b.limit_usd.toFixed(2)} this ${b.period}); new turns are held until ${b.resets_at}`);
    }
    return undefined;
  }

  private async evaluate(): Promise<BudgetView[]> {
    const doc = await this.read();
    const budgets = Object.values(doc.budgets).sort((a, b) => a.id.localeCompare(b.id));
    if (budgets.length === 0) return [];
    const now = this.now();
    const periods = new Map(budgets.map((b) => [b.id, periodOf(b.period, now)]));
    const sinceMs = Math.min(...[...periods.values()].map((p) => p.startMs));
    if (!this.spend || this.spend.sinceMs > sinceMs) this.spend = { sinceMs, spend: await Spend.read(this.deps.usage, this.deps.sessions, sinceMs) };
    const spend = this.spend.spend;
    const views = budgets.map((b) => viewOf(b, periods.get(b.id)!, spend.spent(b.scope, periods.get(b.id)!), now));
    const crossings = views.flatMap((v) => newCrossings(v, periods.get(v.id)!, doc.crossed?.[v.id]));
    if (crossings.length > 0) await this.record(crossings);
    return views;
  }

  /** Writes the crossings, then announces them (a crash in between announces them again, never loses one). */
  private async record(crossings: Array<{ view: BudgetView; period: Period; fraction: number }>): Promise<void> {
    await this.file.update((doc) => {
      const crossed = { ...(doc.crossed ?? {}) };
      for (const { view, period, fraction } of crossings) {
        const known = crossed[view.id]?.period === period.key ? crossed[view.id]!.fractions : [];
        crossed[view.id] = { period: period.key, fractions: [...new Set([...known, fraction])].sort((a, b) => a - b) };
      }
      this.doc = { ...doc, crossed };
      return { next: this.doc, result: undefined };
    });
    for (const { view, fraction } of crossings) {
      this.publish('budget-threshold', { budget_id: view.id, fraction, spent_usd: view.spent_usd, limit_usd: view.limit_usd, period: view.period, resets_at: view.resets_at });
    }
  }

  private async read(): Promise<BudgetsDoc> {
    return (this.doc ??= await this.file.read());
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function inScope(scope: string, turn: { agentName: string; agentId: string | null }): boolean {
  return scope === 'all' || (isAgentName(scope) ? turn.agentName === scope : turn.agentId === scope);
}

function viewOf(b: StoredBudget, period: Period, spent: number, now: number): BudgetView {
  const elapsed = Math.max(now - period.startMs, HOUR_MS);
  const projected = usd((spent / elapsed) * (period.endMs - period.startMs));
  const warnAt = Math.min(...b.warn_at);
  return {
    ...b,
    period_start: new Date(period.startMs).toISOString(),
    resets_at: new Date(period.endMs).toISOString(),
    spent_usd: spent,
    projected_usd: Math.max(projected, spent),
    basis: 'list_price_estimate',
    state: spent >= b.limit_usd ? 'exceeded' : spent >= warnAt * b.limit_usd ? 'warning' : 'ok',
  };
}

function newCrossings(view: BudgetView, period: Period, crossed: BudgetsDoc['crossed'][string] | undefined): Array<{ view: BudgetView; period: Period; fraction: number }> {
  const known = crossed?.period === period.key ? crossed.fractions : [];
  return view.warn_at.filter((f) => view.spent_usd >= f * view.limit_usd && !known.includes(f)).map((fraction) => ({ view, period, fraction }));
}
