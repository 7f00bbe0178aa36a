import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeIndexRecords } from '../../service/sessions/records.js';
import { prettyIndex } from '../../service/transcripts/pretty-index.js';
import { INDEX_FIELDS, parseIndexForListing } from '../../service/transcripts/runtimea-store.js';
import { FIXTURES } from '../sessions/fixtures.js';

/**
 * OpenClaw's sessions.json is read for the listing by taking a few fields of each entry from
 * its pretty-printed text (service/transcripts/pretty-index.ts). It must give exactly what a
 * whole `JSON.parse` gives for those fields, and decline any text in another layout.
 */
const recorded = readFileSync(path.join(FIXTURES, 'runtimea-file', 'sessions.json'), 'utf8');

/** What JSON.parse gives, cut to the fields asked for (objects and arrays among them as {} and []). */
function expected(text: string, fields: readonly string[]): Array<[string, unknown]> {
  return Object.entries(JSON.parse(text) as Record<string, unknown>).map(([key, value]) => {
    if (!value || typeof value !== 'object') return [key, value];
    if (Array.isArray(value)) return [key, []];
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      if (!Object.hasOwn(value, field)) continue;
      const v = (value as Record<string, unknown>)[field];
      out[field] = v && typeof v === 'object' ? (Array.isArray(v) ? [] : {}) : v;
    }
    return [key, out];
  });
}

const tricky = {
  'agent:main:openai-user:conv-"quoted"\\': { sessionId: 'a', updatedAt: 1795274273666, title: 'line\n    "sessionId": "forged",', nested: { sessionId: 'deeper', list: [{ sessionId: 'deepest' }] } },
  'key with ": " inside': { sessionId: 'b', updatedAt: 1.5e12, sessionFile: '/x/b.jsonl', directory: '' },
  'ünïcödé ✓': { updatedAt: '2026-11-20T00:00:00Z', sessionId: 'c', title: { not: 'a string' }, directory: ['not', 'a', 'string'] },
  'no id': { updatedAt: 5 },
  'empty object': {},
  'a string': 'agent:main:x',
  'a number': 7,
  'null': null,
  'an array': [{ sessionId: 'in an array' }],
  'an empty array': [],
  __proto__: { sessionId: 'proto', title: 'own key' },
  'last, with a title ending in a comma': { sessionId: 'z', title: 'a,' },
};

describe('the pretty-printed sessions.json, field by field', () => {
  it('gives what JSON.parse gives for the fields asked, on the recorded file and on tricky keys and values', () => {
    for (const text of [recorded, `${JSON.stringify(JSON.parse(JSON.stringify(tricky)), null, 2)}\n`, JSON.stringify(JSON.parse(`{"__proto__": {"sessionId": "p"}}`), null, 2), '{}', '{}\n']) {
      const got = prettyIndex(Buffer.from(text), INDEX_FIELDS);
      expect(got).toBeDefined();
      expect(got).toEqual(expected(text, INDEX_FIELDS));
    }
  });

  it('a field given twice in an entry: the last one, as JSON.parse takes it; names that only start like a field are other fields', () => {
    const text = ['{', '  "k": {', '    "sessionId": "first",', '    "sessionIdX": "x",', '    "titles": "not the title",', '    "updatedAt": 1,', '    "sessionId": "last",', '    "title": "t"', '  }', '}'].join('\n');
    expect(prettyIndex(Buffer.from(text), INDEX_FIELDS)).toEqual(expected(text, INDEX_FIELDS));
    expect(prettyIndex(Buffer.from(text), INDEX_FIELDS)).toEqual([['k', { sessionId: 'last', updatedAt: 1, title: 't' }]]);
  });

  it('the listing reads the same records from it as from the whole document', () => {
    for (const text of [recorded, JSON.stringify(JSON.parse(JSON.stringify(tricky)), null, 2)]) {
      const file = '/home/u/.runtimea/agents/main/sessions/sessions.json';
      expect(storeIndexRecords('runtimea', 'main', file, parseIndexForListing(Buffer.from(text)))).toEqual(storeIndexRecords('runtimea', 'main', file, JSON.parse(text)));
    }
  });

  it('declines every other layout (the listing then parses the whole text)', () => {
    const doc = JSON.parse(recorded);
    const pretty = JSON.stringify(doc, null, 2);
    const others = [
      JSON.stringify(doc),
      JSON.stringify(doc, null, 4),
      JSON.stringify(doc, null, '\t'),
      pretty.replace(/\n/g, '\r\n'),
      pretty.slice(0, pretty.length / 2),
      pretty.slice(0, -1),
      `${pretty} x`,
      pretty.replace('\n  "', '\n   "'),
      pretty.replace(/\n  }/, '\n }'),
      pretty.replace(/"sessionId": "([^"]+)"/, '"sessionId": $1'),
      '[]',
      '',
    ];
    for (const text of others) expect(prettyIndex(Buffer.from(text), INDEX_FIELDS), text.slice(0, 40)).toBeUndefined();
    // Declined text is parsed whole (and what is not JSON still throws, as before).
    expect(parseIndexForListing(Buffer.from(JSON.stringify(doc)))).toEqual(doc);
    expect(() => parseIndexForListing(Buffer.from(pretty.slice(0, 100)))).toThrow();
  });
});
