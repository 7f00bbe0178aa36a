import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every one of the 80 cases of the research's adversarial list (shared/research/security.md
 * §6) names at least one test here: a `#N` in the title of an `it` of test/adversarial/
 * (the slow part included). A case dropped from the suite fails this test.
 */
const dir = import.meta.dirname;

function titlesWithCases(): Map<number, string[]> {
  const found = new Map<number, string[]>();
  const files = [...readdirSync(dir).map((f) => path.join(dir, f)), ...readdirSync(path.join(dir, 'slow')).map((f) => path.join(dir, 'slow', f))].filter((f) => f.endsWith('.test.ts'));
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!/\bit(\.each\(.*\))?\(/.test(line)) continue;
      for (const m of line.matchAll(/#(\d+)\b/g)) found.set(Number(m[1]), [...(found.get(Number(m[1])) ?? []), path.basename(file)]);
    }
  }
  return found;
}

describe('the 80 cases of the adversarial list', () => {
  it('each has a test', () => {
    const found = titlesWithCases();
    const missing = Array.from({ length: 80 }, (_, i) => i + 1).filter((n) => !found.has(n));
    expect(missing).toEqual([]);
  });
});
