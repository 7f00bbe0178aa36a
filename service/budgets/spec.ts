import { HttpError } from '../errors.js';

/** A budget as the client sets it (`PUT /api/budgets/{id}`, docs/limits.md). */
export interface BudgetSpec {
  /** `all`, a runtime name (`clia_code`, `clib`, `runtimea`), or an agent_id (a project). */
  scope: string;
  period: 'day' | 'week' | 'month';
  limit_usd: number;
  /** Fractions of the limit that warn, ascending. */
  warn_at: number[];
  action: 'notify' | 'hold_new_turns';
}

const PERIODS = ['day', 'week', 'month'] as const;
const ACTIONS = ['notify', 'hold_new_turns'] as const;
export const DEFAULT_WARN_AT = [0.8, 1.0];
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A budget id from the path, else 400. */
export function budgetId(raw: string): string {
  if (!ID.test(raw)) throw new HttpError(400, 'Budget id must be 1-64 letters, digits, ".", "_" or "-"');
  return raw;
}

/** The body of a PUT, checked field by field; 400 `{detail}` naming the bad one. */
export function parseBudget(body: unknown): BudgetSpec {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'Body must be an object with scope, period and limit_usd');
  const b = body as Record<string, unknown>;
  if (typeof b.scope !== 'string' || b.scope.trim() === '' || b.scope.length > 200) throw new HttpError(400, 'scope must be "all", a runtime name or an agent_id');
  if (!PERIODS.includes(b.period as BudgetSpec['period'])) throw new HttpError(400, 'period must be one of day, week, month');
  if (typeof b.limit_usd !== 'number' || !Number.isFinite(b.limit_usd) || b.limit_usd <= 0) throw new HttpError(400, 'limit_usd must be a number above 0');
  const warnAt = b.warn_at === undefined ? DEFAULT_WARN_AT : b.warn_at;
  if (!Array.isArray(warnAt) || warnAt.length === 0 || warnAt.length > 10 || !warnAt.every((f) => typeof f === 'number' && Number.isFinite(f) && f > 0 && f <= 10)) {
    throw new HttpError(400, 'warn_at must be a list of 1 to 10 fractions above 0 (1.0 is the limit)');
  }
  const action = b.action === undefined ? 'notify' : b.action;
  if (!ACTIONS.includes(action as BudgetSpec['action'])) throw new HttpError(400, 'action must be one of notify, hold_new_turns');
  return { scope: b.scope.trim(), period: b.period as BudgetSpec['period'], limit_usd: b.limit_usd, warn_at: [...new Set(warnAt as number[])].sort((x, y) => x - y), action: action as BudgetSpec['action'] };
}
