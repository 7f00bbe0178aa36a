import { eachElement, falseAt, looksWhole, nullAt, objectValues, spanAt, spanIs, topType, trueAt } from './quick.js';
import type { Role } from './types.js';

/**
 * Counting Claude Code's records by bytes (normalizeClia's rule, quick.ts's walk). Its own
 * on-disk records put `type` after a dozen other keys (`parentUuid`, `cwd`, `sessionId`...),
 * and a user or assistant record's messages depend on its flags and its content blocks, so
 * every such line used to be parsed whole to be counted: most of a first start's main-thread
 * time and garbage on a home with months of Claude Code history (a record holds whole tool
 * outputs). Here the record's keys are walked and only what decides the count is looked at:
 * the type, the flags that hide a record, and the type (and emptiness of the text) of each
 * content block. Anything else (an escape in a key or a type, JSON that is not compact, a cut
 * line) answers undefined and the line is parsed.
 */
export function peekClia(line: Buffer): Role[] | undefined {
  return peekRecord(line, false);
}

/** A sub-agent's transcript: its side-chain records are its main chain (normalizeCliaAgent). */
export function peekCliaAgent(line: Buffer): Role[] | undefined {
  return peekRecord(line, true);
}

const COMPACT_BOUNDARY = Buffer.from('"subtype":"compact_boundary"');
const key = (name: string): Buffer => Buffer.from(name);
/** The record's keys looked at, in this order (objectValues keeps the last of a repeated key, as JSON.parse does). */
const RECORD_KEYS = ['type', 'message', 'isCompactSummary', 'isReplay', 'isMeta', 'isSidechain', 'parent_tool_use_id'].map(key);
const [TYPE, MESSAGE, COMPACT_SUMMARY, REPLAY, META, SIDECHAIN, PARENT_TOOL_USE] = [0, 1, 2, 3, 4, 5, 6] as const;
const CONTENT_KEYS = [key('content')];
const BLOCK_KEYS = [key('type'), key('text')];
const [USER, ASSISTANT, SYSTEM, TEXT, TOOL_USE, TOOL_RESULT, IMAGE] = ['user', 'assistant', 'system', 'text', 'tool_use', 'tool_result', 'image'].map(key) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
const QUOTE = 0x22;

function peekRecord(line: Buffer, sidechainShown: boolean): Role[] | undefined {
  if (!looksWhole(line)) return undefined;
  // Stream-json lines state their type first: those that hold no message are told at once.
  const first = topType(line);
  if (first !== undefined && first !== 'user' && first !== 'assistant') return first === 'system' ? system(line) : [];
  const record = objectValues(line, 0, RECORD_KEYS);
  if (!record) return undefined;
  const type = stringValue(line, record.at[TYPE]!);
  if (type === undefined) return undefined;
  const user = type !== false && spanIs(line, type, USER);
  const assistant = type !== false && spanIs(line, type, ASSISTANT);
  if (!user && !assistant) return type !== false && spanIs(line, type, SYSTEM) ? system(line) : [];
  const skipped = hidden(line, record.at, sidechainShown);
  if (skipped !== false) return skipped ? [] : undefined;
  const content = contentOf(line, record.at[MESSAGE]!);
  if (content === undefined) return undefined;
  return user ? userRoles(line, content) : assistantRoles(line, content);
}

/** A compaction marker (one message, with rules of its own): parsed; any other system record holds none. */
function system(line: Buffer): Role[] | undefined {
  return line.includes(COMPACT_BOUNDARY) ? undefined : [];
}

/** normalizeClia's `skipped`: a summary, an echo, a meta prompt or sub-agent traffic; undefined when unsure. */
function hidden(line: Buffer, at: readonly number[], sidechainShown: boolean): boolean | undefined {
  const flags = [COMPACT_SUMMARY, REPLAY, META, ...(sidechainShown ? [] : [SIDECHAIN])].map((k) => isTrue(line, at[k]!));
  if (flags.includes(true)) return true;
  const parent = at[PARENT_TOOL_USE]!;
  // Anything but null hides it; a literal not quite `null` (a space before the comma) is parsed.
  const parentSet = parent === -1 || nullAt(line, parent) ? false : line[parent] === 0x6e ? undefined : true;
  return flags.includes(undefined) || parentSet === undefined ? undefined : parentSet;
}

/** Whether the value at `i` (-1: absent) is `true`; undefined for a literal not quite `true`, `false` or `null`. */
function isTrue(line: Buffer, i: number): boolean | undefined {
  if (i === -1) return false;
  if (trueAt(line, i)) return true;
  const literal = line[i] === 0x74 || line[i] === 0x66 || line[i] === 0x6e;
  return literal && !falseAt(line, i) && !nullAt(line, i) ? undefined : false;
}

/**
 * The string value at `i`: its span; false when absent (-1) or not a string (JSON.parse's value
 * then equals no type); undefined when it holds an escape.
 */
function stringValue(line: Buffer, i: number): ReturnType<typeof spanAt> | false {
  return i !== -1 && line[i] === QUOTE ? spanAt(line, i + 1) : false;
}

/** Where `message.content`'s value starts (-1: no message object or no content); undefined when unsure. */
function contentOf(line: Buffer, message: number): number | undefined {
  if (message === -1 || line[message] !== 0x7b) return -1;
  return objectValues(line, message, CONTENT_KEYS)?.at[0];
}

/** A block of a content array: its type's span (false: none, or not a string) and where its `text` starts. */
function blockAt(line: Buffer, i: number): { type: ReturnType<typeof spanAt> | false; text: number } | undefined {
  if (line[i] !== 0x7b) return { type: false, text: -1 };
  const block = objectValues(line, i, BLOCK_KEYS);
  if (!block) return undefined;
  return { type: stringValue(line, block.at[0]!), text: block.at[1]! };
}

/** A user record: its text as one message (always, without results), then one per tool result. */
function userRoles(line: Buffer, content: number): Role[] | undefined {
  if (content === -1 || line[content] !== 0x5b) return ['user'];
  let results = 0;
  let text = false;
  let unsure = false;
  const walked = eachElement(line, content, (i) => {
    // A non-empty string, a block of text with non-empty text, or an image: textOf is not empty.
    if (line[i] === QUOTE) return void (line[i + 1] !== QUOTE && (text = true));
    const block = blockAt(line, i);
    if (!block || block.type === undefined) return void (unsure = true);
    if (block.type === false) return;
    if (spanIs(line, block.type, TOOL_RESULT)) results++;
    else if (spanIs(line, block.type, IMAGE)) text = true;
    else if (spanIs(line, block.type, TEXT) && block.text !== -1 && line[block.text] === QUOTE && line[block.text + 1] !== QUOTE) text = true;
  });
  if (!walked || unsure) return undefined;
  if (results === 0) return ['user'];
  return [...(text ? (['user'] as const) : []), ...Array<Role>(results).fill('tool')];
}

/** An assistant record: a string content is one reply; else one message per text or tool_use block, in order. */
function assistantRoles(line: Buffer, content: number): Role[] | undefined {
  if (content === -1) return [];
  if (line[content] === QUOTE) return ['assistant'];
  if (line[content] !== 0x5b) return [];
  const roles: Role[] = [];
  let unsure = false;
  const walked = eachElement(line, content, (i) => {
    const block = blockAt(line, i);
    if (!block || block.type === undefined) return void (unsure = true);
    if (block.type === false) return;
    if (spanIs(line, block.type, TEXT)) roles.push('assistant');
    else if (spanIs(line, block.type, TOOL_USE)) roles.push('tool');
  });
  return walked && !unsure ? roles : undefined;
}
