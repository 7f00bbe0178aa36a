import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliaLines, clibLines, random, runtimeaLines, turns } from '../../bench/corpus.js';
import { FORMATS } from '../../service/transcripts/formats.js';
import { countLine, lineEntries } from '../../service/sessions/line-entries.js';
import type { LogFormat } from '../../service/sessions/types.js';
import { FIXTURES } from './fixtures.js';

/**
 * Counting peeks at bytes instead of parsing (a 500 MB log is counted in about a tenth of
 * the time). A peek may decline, but when it answers it must agree with the normalizer on
 * every well-formed line, or pages and totals would drift apart.
 */
function recorded(format: LogFormat): string[] {
  const dirs: Record<LogFormat, string[]> = { runtimea: ['runtimea-file', 'runtimea-sqlite/transcripts'], clia: ['clia', 'clia-native'], clib: ['clib'], 'clib-rollout': ['clib-rollout'], 'clia-agent': ['clia', 'clia-native'] };
  return dirs[format].flatMap((d) =>
    readdirSync(path.join(FIXTURES, d))
      .filter((f) => f.endsWith('.jsonl') && !f.includes('trajectory'))
      .flatMap((f) => readFileSync(path.join(FIXTURES, d, f), 'utf8').split('\n').filter(Boolean)),
  );
}

function generated(format: LogFormat): string[] {
  const rand = random(3);
  const shapes = turns(rand, 40);
  if (format === 'runtimea') return runtimeaLines('abcdef01-0000-4000-a000-000000000000', shapes, 0, rand);
  if (format === 'clib-rollout' || format === 'clia-agent') return [];
  return format === 'clia' ? cliaLines('s', shapes, 0, rand) : clibLines(shapes, 0, rand);
}

const oddLines: Record<LogFormat, string[]> = {
  runtimea: [
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":""}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"1","name":"n","arguments":{"type":"toolCall"}},{"type":"toolCall","id":"2","name":"m","arguments":{}}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom"}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":""},{"type":"text","text":""},{"type":"toolCall","id":"1","name":"n","arguments":{"a":"]}\\\"["}}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":["",{"type":"toolCall","id":"1","name":"n","arguments":[1,{"x":[]}]}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":["said",{"type":"toolCall","id":"1","name":"n","arguments":{}}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"image","data":"x"},{"type":"toolCall","id":"1","name":"n","arguments":{}}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":{}}],"errorMessage":"failed"}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"toolCall","id":"1","name":"n","arguments":{}},{"type":"toolCall","id":"2","name":"m","arguments":{"type":"toolCall"}}]}}',
    '{"type":"message","id":"u","message":{"role":"user","content":"has \\"message\\":{\\"role\\":\\"assistant\\" inside"}}',
    '{"type":"message","id":"c","message":{"role":"custom","customType":"other"}}',
    '{"type":"compaction","firstKeptEntryId":"x"}',
    '{"id":"x","type":"message","message":{"role":"user","content":"key order differs"}}',
    // The content walked first: a tool call's type outside the content, a content that is not compact JSON.
    '{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"details":{"type":"toolCall"}}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content": [{"type":"text","text":"spaced"}]}}',
    '{"type":"message","id":"a","message":{"role":"assistant","content": [{"type":"toolCall","id":"1","name":"n","arguments":{}}]}}',
    // Escaped quotes about where the byte loop for a string's end hands over to the native search.
    ...[29, 30, 31, 32, 33].map((n) => `{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"${'y'.repeat(n)}\\"q\\" more"},{"type":"toolCall","id":"1","name":"n","arguments":{"${'k'.repeat(n)}":"v"}}]}}`),
    // The message key far into the line (past the byte loop of quick.ts's indexNear).
    `{"type":"message","id":"${'x'.repeat(600)}","message":{"role":"user","content":"far"}}`,
    `{"type":"message","id":"${'x'.repeat(600)}","messages":{"role":"user","content":"no message key"}}`,
  ],
  clia: [
    // Claude Code's own records: the type after other keys, told by walking them.
    '{"parentUuid":null,"isSidechain":false,"cwd":"/w","type":"user","message":{"role":"user","content":"plain"},"uuid":"u"}',
    '{"parentUuid":"a","isSidechain":true,"type":"user","message":{"role":"user","content":"a sub-agent\'s, in the parent file"}}',
    '{"parentUuid":"a","isSidechain":false,"type":"user","isMeta":true,"message":{"role":"user","content":"meta"}}',
    '{"parentUuid":"a","type":"user","isMeta":false,"isReplay":false,"isCompactSummary":false,"parent_tool_use_id":null,"message":{"role":"user","content":"flags off"}}',
    '{"type":"user","parent_tool_use_id":"toolu_1","message":{"role":"user","content":"sub-agent traffic"}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out \\"quoted\\" {\\"type\\":\\"text\\"}"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"x"}]}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"text","text":""},{"type":"tool_result","tool_use_id":"t1","content":"o"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"text","text":"said"},{"type":"tool_result","tool_use_id":"t1","content":"o"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":["",{"type":"tool_result","tool_use_id":"t1","content":"o"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":["s",{"type":"tool_result","tool_use_id":"t1","content":"o"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"image","source":{}},{"type":"tool_result","tool_use_id":"t1","content":"o"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"type":"text","text":7},{"type":"tool_result"}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[{"text":"x"},null,3,[],{"type":"tool_result"},{"type":5}]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user","content":[]}}',
    '{"parentUuid":"a","type":"user","message":{"role":"user"}}',
    '{"parentUuid":"a","type":"user","message":"not an object"}',
    '{"parentUuid":"a","type":"user"}',
    '{"parentUuid":"a","type":"assistant","message":{"id":"m","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"r"},{"type":"tool_use","id":"t","name":"Bash","input":{"type":"text"}}],"usage":{"input_tokens":1}},"requestId":"r"}',
    '{"parentUuid":"a","type":"assistant","message":{"content":"a string reply"}}',
    '{"parentUuid":"a","type":"assistant","message":{"content":""}}',
    '{"parentUuid":"a","type":"assistant","message":{"content":{"type":"text"}}}',
    '{"parentUuid":"a","type":"assistant","message":{"content":["s",{"type":"text","text":""}]}}',
    '{"parentUuid":"a","type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"hidden"}]}}',
    '{"parentUuid":"a","type":"progress","data":{"type":"user","message":{"content":"nested"}}}',
    '{"parentUuid":"a","type":"attachment","attachment":{"type":"text"}}',
    '{"parentUuid":"a","type":7,"message":{"content":"typed by a number"}}',
    '{"parentUuid":"a","message":{"content":"no type"}}',
    // What JSON.parse keeps: the last of a repeated key; an escape or a space in the way: parsed.
    '{"type":"assistant","type":"user","message":{"content":"repeated"}}',
    '{"type":"user","message":{"content":[{"type":"text","text":"a"}]},"message":{"content":[{"type":"tool_result"}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result"}],"content":"last content wins"}}',
    '{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"message":7}',
    '{"message":{"content":[{"type":"tool_use","id":"t","name":"n","input":{}},{"type":"image"},"x"]},"type":"assistant"}',
    '{"message":{"content":[{"type":"tool_use","id":"t","name":"n","input":{}},{"type":"tool_result","content":[{"type":"text","text":"in a result"}]}]},"type":"user"}',
    '{"parentUuid":"a","type":"user","message":{"content":[{"type":"text","text":"t","type":"tool_result"}]}}',
    '{"parentUuid":"a","type":"us\\u0065r","message":{"content":"escaped type"}}',
    '{"parentUuid":"a","type":"user","message":{"content":[{"type":"tool_\\u0072esult"}]}}',
    '{"parentUuid":"a", "type":"user","message":{"content":"spaced"}}',
    '{"parentUuid":"a","type":"user","isMeta":true ,"message":{"content":"spaced flag"}}',
    '{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid":"a","uuid":"b","compact_metadata":{"trigger":"auto","pre_tokens":150000}}',
    '{"type":"system","subtype":"compact_boundary","session_id":"stream-json, not on disk"}',
    '{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued..."}}',
    '{"type":"user","message":{"role":"user","content":"hi"},"isReplay":true}', '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"t"}]}}', '{"subtype":"success","type":"result","usage":{}}'],
  clib: [
    '{"type":"item.completed","item":{"id":"item_9","type":"todo_list","items":[]}}',
    '{"type":"item.completed","item":{"type":"agent_message","id":"item_1","text":"order differs"}}',
    '{"timestamp":"2026-01-01T00:00:00Z","type":"user.message","text":"stamped first"}',
    '{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"status":"completed"}}',
  ],
  'clia-agent': [
    '{"parentUuid":null,"isSidechain":true,"agentId":"a1","type":"user","message":{"role":"user","content":"Sub-task"}}',
    '{"isSidechain":true,"type":"system","subtype":"init"}',
    '{"parentUuid":"a","isSidechain":true,"agentId":"a1","type":"assistant","message":{"content":[{"type":"text","text":"r"},{"type":"tool_use","id":"t","name":"Read","input":{}}]}}',
    '{"parentUuid":"a","isSidechain":true,"agentId":"a1","type":"user","isMeta":true,"message":{"content":"meta still hidden"}}',
  ],
  'clib-rollout': [
    '{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"not the record"}}',
    '{"type":"response_item","timestamp":"2026-01-01T00:00:00Z","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"order differs"}]}}',
    '{"payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"payload first"}]},"type":"response_item"}',
    '{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x"}]}}',
    // Told by the payload's type and role, read by bytes.
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","status":"completed","id":"m","role":"assistant","content":[]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"x"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"content":[{"type":"output_text","text":"x"}],"role":"assistant","type":"message"}}',
    '{"timestamp":"t","type":"response_item","payload":{"id":{"type":"x","role":"user"},"type":"reasoning","summary":[]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c","output":"x"}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"web_search_call","action":{"type":"search"}}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":"x"}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"mess\\u0061ge","role":"assistant"}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assis\\u0074ant","content":[]}}',
    '{"timestamp":"t","type":"response_item","payload":{"role":"assistant","type":"message","content":[]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message"}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":7}}',
    // A user message: its own words counted by bytes; what may be injected context, parsed.
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the build"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":" <environment_context>"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"\\n<skill>x"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":""},{"type":"input_text","text":"<turn_aborted>"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_image","image_url":"x"},{"type":"input_text","text":"<user_shell_command>"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"\u3000<environment_context>"}]}}',
    '{"timestamp":"t","type":"response_item","payload":{"type":"message","content":[{"type":"input_text","text":"late role"}],"role":"user"}}',
    '{"timestamp":"t","type":"response_item","payload":{}}',
    '{"timestamp":"t","type":"response_item","payload":"x"}',
  ],
};

describe('peeks agree with the normalizer', () => {
  for (const format of ['runtimea', 'clia', 'clia-agent', 'clib', 'clib-rollout'] as const) {
    it(`${format}: every recorded, generated and odd line`, () => {
      let answered = 0;
      const lines = [...recorded(format), ...generated(format), ...oddLines[format]];
      for (const line of lines) {
        const normalized = FORMATS[format].normalize(JSON.parse(line), { position: 0, fallbackTime: '' }).filter((e) => e.kind === 'message').length;
        const peeked = FORMATS[format].peek(Buffer.from(line));
        if (peeked) {
          answered++;
          expect(peeked.length, line.slice(0, 200)).toBe(normalized);
        }
        expect(countLine(format, Buffer.from(line), true), line.slice(0, 200)).toBe(normalized);
      }
      // The peek has to be worth having: it answers for most lines.
      expect(answered / lines.length).toBeGreaterThan(0.5);
      if (format === 'clia') {
        // Claude Code's own records, prompts and replies included, are counted without a parse.
        const own = recorded(format).filter((l) => l.startsWith('{"parentUuid"') && /"type":"(user|assistant)"/.test(l));
        expect(own.length).toBeGreaterThan(50);
        expect(own.filter((l) => FORMATS.clia.peek(Buffer.from(l)) !== undefined).length / own.length).toBeGreaterThan(0.95);
      }
    });
  }
});

describe('a damaged line whole in shape', () => {
  it("Claude Code's: counted as the unreadable messages its page shows", () => {
    const damaged = [
      '{"parentUuid":"a","type":"user","message":{"role":"user","content":"hi"},"junk":tru}',
      '{"parentUuid":"a","type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"tool_use","input":{}}]},"x":nul}',
    ];
    for (const line of damaged) {
      expect(() => JSON.parse(line)).toThrow();
      const shown = lineEntries('clia', Buffer.from(line), true, { position: 0, fallbackTime: '' }).filter((e) => e.kind === 'message');
      expect(shown.length, line).toBeGreaterThan(0);
      expect(shown.every((e) => e.kind === 'message' && e.message.text.startsWith('[unreadable record:'))).toBe(true);
      expect(countLine('clia', Buffer.from(line), true), line).toBe(shown.length);
    }
  });
});

describe("a rollout line usage's narrowing leaves unparsed yields nothing usage counts", () => {
  it('every recorded and odd rollout line it refuses holds no prompt, reply, tool call or token count', () => {
    const narrow = FORMATS['clib-rollout'].narrow!.usage!;
    let refused = 0;
    for (const line of [...recorded('clib-rollout'), ...oddLines['clib-rollout']]) {
      if (narrow(Buffer.from(line))) continue;
      refused++;
      const entries = FORMATS['clib-rollout'].normalize(JSON.parse(line), { position: 0, fallbackTime: '', memo: {} });
      const counted = entries.filter((e) => e.kind === 'usage' || e.message.role === 'user' || e.message.role === 'assistant' || e.message.tool_call);
      expect(counted, line.slice(0, 200)).toEqual([]);
    }
    // Tool output, reasoning and instructions are refused.
    expect(refused).toBeGreaterThan(5);
  });
});
