import { describe, expect, it } from 'vitest';
import { rowKey, startState } from '../../service/usage/collect.js';
import { takeBackCopies, type Copier } from '../../service/usage/copies.js';
import { emptyUsage } from '../../service/usage/types.js';

/** A log that counted these model calls (10 input tokens, 1 cent each) on one day and model. */
function log(id: string, keys: string[]): Copier {
  const usage = emptyUsage();
  const state = startState();
  const row = { day: 1, model: 'm', input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, records: 0, unpriced: 0, tools: {} };
  usage.rows.set(rowKey(1, 'm'), row);
  for (const key of keys) {
    state.seen.set(key, { row: rowKey(1, 'm'), usage: { input: 10, output: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.01 });
    row.input += 10;
    row.cost += 0.01;
    row.records += 1;
  }
  usage.firstKey = keys[0];
  return { id, usage, state };
}
const input = (l: Copier): number => l.usage.rows.get(rowKey(1, 'm'))!.input;

describe('copied model calls across logs (usage/copies.ts)', () => {
  it('each counts once, in the oldest log that has it; again changes nothing', () => {
    // Newest first: a fork of the fork, the fork, the original.
    const original = log('original', ['a', 'b', 'c']);
    const fork = log('fork', ['a', 'b', 'f1']);
    const forkOfFork = log('fork-of-fork', ['a', 'b', 'f1', 'g1']);
    expect(takeBackCopies([forkOfFork, fork, original]).sort()).toEqual(['fork', 'fork-of-fork']);
    expect([input(forkOfFork), input(fork), input(original)]).toEqual([10, 10, 30]);
    expect(forkOfFork.usage.rows.get(rowKey(1, 'm'))!.records).toBe(1);
    expect([...forkOfFork.state.copies!].sort()).toEqual(['a', 'b', 'f1']);
    expect(takeBackCopies([forkOfFork, fork, original])).toEqual([]);
    expect([input(forkOfFork), input(fork), input(original)]).toEqual([10, 10, 30]);
  });

  it('a log found later but born before the rest takes the pairs over; each still counts once', () => {
    const original = log('original', ['a', 'b']);
    const fork = log('fork', ['a', 'b', 'f1']);
    takeBackCopies([fork, original]);
    const older = log('older', ['a', 'b', 'o1']);
    expect(takeBackCopies([fork, original, older])).toEqual(['original']);
    expect([input(fork), input(original), input(older)]).toEqual([10, 0, 30]);
    expect(takeBackCopies([fork, original, older])).toEqual([]);
  });
});
