import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { label, ROUTES } from './routes.js';

/**
 * The route table is the spec's: every `| METHOD | /path |` row of its endpoint tables
 * (lists expanded, drivea mirrored as driveb as the spec says) is in routes.ts, and every
 * row of routes.ts is either in the spec or marked as the service's own addition.
 */
const spec = readFileSync(path.resolve(import.meta.dirname, '../fixtures/adversarial/spec.txt'), 'utf8');

function specRoutes(): Set<string> {
  const out = new Set<string>();
  for (const match of spec.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| ([^|]+)\|/gm)) {
    const method = match[1]!;
    let previous = '';
    for (const raw of match[2]!.split(',').map((p) => p.trim())) {
      // "/a/b/disconnect, /reconnect": a bare last segment is relative to the previous path.
      const full = raw.split('/').length === 2 && previous ? previous.replace(/\/[^/]+$/, raw) : raw;
      previous = full;
      out.add(`${method} ${full}`);
      if (full.includes('/drivea/')) out.add(`${method} ${full.replace('/drivea/', '/driveb/')}`);
    }
  }
  return out;
}

describe('the adversarial route table', () => {
  it('holds every route of the spec', () => {
    const table = new Set(ROUTES.map(label));
    const missing = [...specRoutes()].filter((r) => !table.has(r));
    expect(missing).toEqual([]);
    expect(specRoutes().size).toBeGreaterThan(90);
  });

  it('marks every route the spec does not name as an addition', () => {
    const inSpec = specRoutes();
    const unmarked = ROUTES.filter((r) => !r.extra && !inSpec.has(label(r))).map(label);
    expect(unmarked).toEqual([]);
  });

  it('has no duplicate rows', () => {
    const labels = ROUTES.map(label);
    expect(labels.length).toBe(new Set(labels).size);
  });
});
