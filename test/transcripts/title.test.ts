import { describe, expect, it } from 'vitest';
import { TITLE_MAX_CHARS, titleFromPrompt, titleSource } from '../../service/transcripts/title.js';

/** The rule as written once (the whole prompt flattened, then cut): the bounded walk must agree with it. */
function byTheRule(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= TITLE_MAX_CHARS ? flat : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}

/** A small seeded generator, so a failure names a case that comes again. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

const PIECES = ['a', 'Z', '7', ' ', '  ', '\n', '\t', '\r\n', '\u00a0', '\u3000', '\u2028', '\ufeff', 'é', '漢', '😀', '👩‍💻', '\ud800', '\udc00', '…'];

const cases: string[] = [
  '',
  '   ',
  'hello',
  '  hello   world  ',
  '\n\n\tfix the\r\n\r\nbuild\u3000please\u2029',
  'x'.repeat(TITLE_MAX_CHARS),
  'x'.repeat(TITLE_MAX_CHARS + 1),
  `${'x'.repeat(TITLE_MAX_CHARS - 1)} y`,
  `${'x'.repeat(TITLE_MAX_CHARS - 1)}😀`,
  `${'x'.repeat(TITLE_MAX_CHARS - 1)}😀😀`,
  `${'😀'.repeat(TITLE_MAX_CHARS + 5)}`,
  `${' '.repeat(100_000)}after a long run of spaces`,
  `${'word '.repeat(50_000)}`,
  `\ud800${'a'.repeat(300)}`,
];
const next = random(42);
for (let i = 0; i < 500; i++) {
  const length = Math.floor(next() * 400);
  let text = '';
  for (let j = 0; j < length; j++) text += PIECES[Math.floor(next() * PIECES.length)];
  cases.push(text);
}

describe('titles from prompts', () => {
  it('agree with the rule (flattened whitespace, trimmed, cut with an ellipsis) on every case', () => {
    for (const prompt of cases) expect(titleFromPrompt(prompt), JSON.stringify(prompt.slice(0, 80))).toBe(byTheRule(prompt));
  });

  it('what is kept of a prompt makes the same title, and is short however long the prompt', () => {
    for (const prompt of cases) {
      const kept = titleSource(prompt);
      expect(titleFromPrompt(kept)).toBe(titleFromPrompt(prompt));
      expect(prompt.startsWith(kept)).toBe(true);
    }
    expect(titleSource(`${'x'.repeat(1_000_000)}`).length).toBe(TITLE_MAX_CHARS + 1);
    expect(titleSource(`${'word\n\n'.repeat(100_000)}`).length).toBeLessThan(TITLE_MAX_CHARS * 2);
  });
});
