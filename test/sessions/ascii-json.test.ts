import { describe, expect, it } from 'vitest';
import { asciiJson, asciiJsonPieces } from '../../service/sessions/ascii-json.js';

const DOCS: unknown[] = [
  {},
  { skipped: undefined, kept: 1 },
  { a: { b: { c: ['é', null, { d: 'x' }] } }, e: [], f: {} },
  { title: 'Café ☕ 日本語 🚀 "quoted" \\ back\nslash', lone: '\ud800' },
  [1, { x: 'ü' }],
  'ü',
  5,
  null,
];

describe('JSON in ASCII only', () => {
  it('is the same JSON, every character past ASCII escaped, whole or in pieces', () => {
    for (const doc of DOCS) {
      const whole = asciiJson(JSON.stringify(doc));
      expect([...whole].every((c) => c.charCodeAt(0) < 0x80)).toBe(true);
      expect(JSON.parse(whole)).toEqual(JSON.parse(JSON.stringify(doc)));
      for (const depth of [0, 1, 2, 3]) expect(asciiJsonPieces(doc, depth).join('')).toBe(whole);
    }
  });

  it('opens objects only as deep as asked: a big column is one piece', () => {
    const pieces = asciiJsonPieces({ part: 'x', records: { id: ['a', 'b'], title: ['é', null] } }, 2);
    expect(pieces).toContain('["\\u00e9",null]');
    expect(pieces).toContain('["a","b"]');
  });
});
