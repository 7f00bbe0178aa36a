import { elementsEnd, falseAt, looksWhole, nullAt, objectValues, SKIP, skipValue, spanAt, spanIs, topType, trueAt, walkObject, type Span } from './quick.js';
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
const [TYPE, MESSAGE, CONTENT, TEXT_KEY] = ['type', 'message', 'content', 'text'].map((k) => Buffer.from(k)) as [Buffer, Buffer, Buffer, Buffer];
/** The flags that hide a record (normalizeClia's `skipped`), the sub-agent's side chain last. */
const FLAGS = ['isCompactSummary', 'isReplay', 'isMeta', 'parent_tool_use_id', 'isSidechain'].map((k) => Buffer.from(k));
const PARENT_TOOL_USE = 3;
const SIDECHAIN = 4;
const BLOCK_KEYS = [TYPE, TEXT_KEY];
const [USER, ASSISTANT, SYSTEM, TEXT, TOOL_USE, TOOL_RESULT, IMAGE] = ['user', 'assistant', 'system', 'text', 'tool_use', 'tool_result', 'image'].map((k) => Buffer.from(k)) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
const QUOTE = 0x22;

/**
 * What `message.content` holds, for either type (the type may come after the message): its
 * kind; for a user record, its tool results and whether its text (textOf) is not empty; for an
 * assistant record, its shown blocks' roles in order.
 */
interface Content {
  kind: 'none' | 'string' | 'array';
  results: number;
  text: boolean;
  replies: Role[];
}

function peekRecord(line: Buffer, sidechainShown: boolean): Role[] | undefined {
  if (!looksWhole(line)) return undefined;
  // Stream-json lines state their type first: those that hold no message are told at once.
  const first = topType(line);
  if (first !== undefined && first !== 'user' && first !== 'assistant') return first === 'system' ? system(line) : [];
  // One walk over the record's keys (the last of a repeated key wins, as with JSON.parse).
  let type: Span | false | undefined = false;
  let content: Content | undefined = none();
  const flags = FLAGS.map(() => -1);
  const end = walkObject(line, 0, (key, value) => {
    if (spanIs(line, key, TYPE)) type = stringValue(line, value);
    else if (spanIs(line, key, MESSAGE)) return messageAt(line, value, (c) => (content = c));
    else for (let k = 0; k < FLAGS.length; k++) if (spanIs(line, key, FLAGS[k]!)) flags[k] = value;
    return SKIP;
  });
  if (end === -1 || type === undefined || content === undefined) return undefined;
  const user = type !== false && spanIs(line, type, USER);
  const assistant = type !== false && spanIs(line, type, ASSISTANT);
  if (!user && !assistant) return type !== false && spanIs(line, type, SYSTEM) ? system(line) : [];
  const skipped = hidden(line, sidechainShown ? flags.slice(0, SIDECHAIN) : flags);
  if (skipped !== false) return skipped ? [] : undefined;
  return user ? userRoles(content) : assistantRoles(content);
}

function none(): Content {
  return { kind: 'none', results: 0, text: false, replies: [] };
}

/** A compaction marker (one message, with rules of its own): parsed; any other system record holds none. */
function system(line: Buffer): Role[] | undefined {
  return line.includes(COMPACT_BOUNDARY) ? undefined : [];
}

/** Whether one of the flags at `at` hides the record; undefined when unsure. */
function hidden(line: Buffer, at: readonly number[]): boolean | undefined {
  const set = at.map((i, k) => (k === PARENT_TOOL_USE ? notNull(line, i) : isTrue(line, i)));
  return set.includes(true) ? true : set.includes(undefined) ? undefined : false;
}

/** Whether the value at `i` (-1: absent) is `true`; undefined for a literal not quite `true`, `false` or `null`. */
function isTrue(line: Buffer, i: number): boolean | undefined {
  if (i === -1) return false;
  if (trueAt(line, i)) return true;
  const literal = line[i] === 0x74 || line[i] === 0x66 || line[i] === 0x6e;
  return literal && !falseAt(line, i) && !nullAt(line, i) ? undefined : false;
}

/** Whether the value at `i` is present and not null (sub-agent traffic); undefined for a literal not quite `null`. */
function notNull(line: Buffer, i: number): boolean | undefined {
  if (i === -1 || nullAt(line, i)) return false;
  return line[i] === 0x6e ? undefined : true;
}

/**
 * The string value at `i`: its span; false when not a string (JSON.parse's value then equals
 * no type); undefined when it holds an escape.
 */
function stringValue(line: Buffer, i: number): Span | false | undefined {
  return line[i] === QUOTE ? spanAt(line, i + 1) : false;
}

/**
 * The message value at `i`: its content told to `found` (none when it is no object); answers
 * the index past the value, SKIP for the walk to skip it, or -1 when unsure.
 */
function messageAt(line: Buffer, i: number, found: (content: Content | undefined) => void): number {
  if (line[i] !== 0x7b) {
    found(none());
    return SKIP;
  }
  let content: Content | undefined = none();
  const end = walkObject(line, i, (key, value) => {
    if (!spanIs(line, key, CONTENT)) return SKIP;
    content = none();
    if (line[value] === QUOTE) content.kind = 'string';
    return line[value] === 0x5b ? elements(line, value, content) : SKIP;
  });
  found(end === -1 ? undefined : content);
  return end;
}

/** Summarizes the content array at `i` into `content`; answers the index past it, or -1 when unsure. */
function elements(line: Buffer, i: number, content: Content): number {
  content.kind = 'array';
  return elementsEnd(line, i, (j) => element(line, j, content));
}

/** One element: a non-empty string or image is text; a text block is text (when not empty) and a reply; a tool_use a tool call. */
function element(line: Buffer, i: number, content: Content): number {
  if (line[i] === QUOTE) {
    if (line[i + 1] !== QUOTE) content.text = true;
    return skipValue(line, i);
  }
  if (line[i] !== 0x7b) return skipValue(line, i);
  const block = objectValues(line, i, BLOCK_KEYS);
  if (!block) return -1;
  const type = block.at[0] === -1 ? false : stringValue(line, block.at[0]!);
  if (type === undefined) return -1;
  if (type === false) return block.end;
  const text = block.at[1]!;
  if (spanIs(line, type, TOOL_RESULT)) content.results++;
  else if (spanIs(line, type, IMAGE)) content.text = true;
  else if (spanIs(line, type, TOOL_USE)) content.replies.push('tool');
  else if (spanIs(line, type, TEXT)) {
    content.replies.push('assistant');
    if (text !== -1 && line[text] === QUOTE && line[text + 1] !== QUOTE) content.text = true;
  }
  return block.end;
}

/** A user record: its text as one message (always, without results), then one per tool result. */
function userRoles(content: Content): Role[] {
  if (content.kind !== 'array' || content.results === 0) return ['user'];
  return [...(content.text ? (['user'] as const) : []), ...Array<Role>(content.results).fill('tool')];
}

/** An assistant record: a string content is one reply; else one message per text or tool_use block, in order. */
function assistantRoles(content: Content): Role[] {
  if (content.kind === 'string') return ['assistant'];
  return content.kind === 'array' ? content.replies : [];
}
