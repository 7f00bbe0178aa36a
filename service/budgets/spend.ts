import { isAgentName } from '../ids.js';
import type { SessionIndex } from '../sessions/session-index.js';
import type { SessionView } from '../sessions/merge.js';
import { usd } from '../usage/aggregate.js';
import { dayOfMs } from '../usage/days.js';
import type { UsageStore } from '../usage/store.js';
import type { Period } from './periods.js';

/** Cost by UTC day of one runtime and agent_id: the rows `/api/usage` sums, grouped once per pass. */
interface Group {
  agentName: string;
  agentId: string;
  byDay: Map<number, number>;
}

/**
 * What every budget of one pass reads: the usage store's per-session rows (the same figures
 * as `/api/usage`, never counted again), grouped by runtime and agent_id from `sinceDay` on.
 */
export class Spend {
  private constructor(private readonly groups: readonly Group[]) {}

  /** The last grouping, reused while the usage store answers with the same object (nothing changed). */
  private static last: { answer: object; views: readonly SessionView[]; sinceDay: number; spend: Spend } | undefined;

  static async read(usage: UsageStore, index: SessionIndex, sinceMs: number): Promise<Spend> {
    const sinceDay = dayOfMs(sinceMs);
    const answer = await usage.sessions(sinceDay);
    const views = await index.list();
    const last = Spend.last;
    if (last && last.answer === answer && last.views === views && last.sinceDay === sinceDay) return last.spend;
    const spend = Spend.group(answer.sessions, agentIdsOf(views), sinceDay);
    Spend.last = { answer, views, sinceDay, spend };
    return spend;
  }

  private static group(sessions: Awaited<ReturnType<UsageStore['sessions']>>['sessions'], agentIds: Map<string, string>, sinceDay: number): Spend {
    const groups = new Map<string, Group>();
    for (const s of sessions) {
      const agentId = agentIds.get(s.sessionId) ?? '';
      const key = `${s.agentName}\0${agentId}`;
      let group = groups.get(key);
      for (const row of s.usage.rows.values()) {
        if (row.day < sinceDay || row.cost === 0) continue;
        if (!group) groups.set(key, (group = { agentName: s.agentName, agentId, byDay: new Map() }));
        group.byDay.set(row.day, (group.byDay.get(row.day) ?? 0) + row.cost);
      }
    }
    return new Spend([...groups.values()]);
  }

  /** USD spent in `period` by what `scope` covers: all, a runtime name, else an agent_id. */
  spent(scope: string, period: Period): number {
    const first = dayOfMs(period.startMs);
    const last = dayOfMs(period.endMs - 1);
    let total = 0;
    for (const g of this.groups) {
      if (scope !== 'all' && (isAgentName(scope) ? g.agentName !== scope : g.agentId !== scope)) continue;
      for (const [day, cost] of g.byDay) if (day >= first && day <= last) total += cost;
    }
    return usd(total);
  }
}

const cache = new WeakMap<readonly SessionView[], Map<string, string>>();

/** session id -> agent_id, once per listing the index hands out. */
function agentIdsOf(views: readonly SessionView[]): Map<string, string> {
  let map = cache.get(views);
  if (!map) cache.set(views, (map = new Map(views.map((v) => [v.id, v.agentId]))));
  return map;
}
