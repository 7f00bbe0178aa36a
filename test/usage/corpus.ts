import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeCliSessions } from '../sessions/fixtures.js';
import { at, cliaTurn, clibTurn, nativeRecords, runtimeaTranscript, writeRuntimeaStore } from './seed.js';

/**
 * The usage tests' corpus: one session per log kind, with every figure the tests expect
 * worked out by hand below (today is day 0; times UTC).
 *
 * runtimea R1 (OpenClaw file store, log order = time order):
 *   t3  D-40 08:00:00 -> 08:00:03  mystery-model-x  in 100 out 10, no cost        unpriced   3000 ms
 *   t4  D-3  09:00:00 -> 09:00:02  claude-fable-5-2 in 100 out 10, no cost        unpriced   2000 ms
 *   t1  D-2  10:00:00 -> 10:00:02  gpt-6.1-sol  tool exec  in 1000 out 20 cr 3000   $0.0125
 *                     -> 10:00:04  gpt-6.1-sol            in 200 out 100 cr 4000   $0.0035    4000 ms
 *   t2  D0   00:10:00 -> 00:10:01.5 claude-opus-5-5 in 10 out 1000 cr 20000 cw 5000, logged cost 0
 *                        = not stated: 10*4e-6 + 1000*2e-5 + 20000*2e-7 + 5000*5e-6 = $0.04904  1500 ms
 * clia C1 (the service's store; recorded stdout, each turn's own model_usage_since_last_result):
 *   D-1 09:00  01-new-text         in 4 out 14 cw 12145           $0.061021    1300 ms
 *   D-1 09:05  03-resume-tool-bash in 13 out 24 cr 24408 cw 117   $0.0059986   1360 ms  tool Bash
 *   D0  00:20  02-resume-text      in 5 out 16 cr 12145 cw 39     $0.002964    1000 ms
 *              (its cumulative modelUsage says $0.063985: must not be used)
 * clib B1 (the service's store; usage per turn; input includes cached, so input = 14106 - 5696):
 *   D-1 11:00  new-text      gpt-5.5  in 13481 out 27          13481*5e-6 + 27*3e-5 = $0.068215   750 ms
 *   D0  00:30  shell-gpt-5.5 gpt-5.5  in 8410 cr 5696 out 91   0.04205 + 0.002848 + 0.00273 = $0.047628  1050 ms  tool command_execution
 * clia legacy N1 (Claude Code's on-disk records; message A written twice, once per block):
 *   D-1 12:00:00  A (req_A) claude-haiku-4-5 in 3 out 50 cr 1000 cw 200, blocks text @02.000, tool Read @02.100
 *                 = 3e-6 + 2.5e-4 + 1e-4 + 2.5e-4 = $0.000603
 *                 B (req_B) in 5 out 10 cr 1200 @03.000 = 5e-6 + 5e-5 + 1.2e-4 = $0.000175        3000 ms
 */
export const IDS = {
  R1: '11111111-1111-4111-8111-111111111111',
  C1: '22222222-2222-4222-8222-222222222222',
  B1: '33333333-3333-4333-8333-333333333333',
  N1: '44444444-4444-4444-8444-444444444444',
} as const;

export async function writeUsageCorpus(home: string): Promise<void> {
  writeRuntimeaStore(home, [
    {
      id: IDS.R1,
      updatedAt: at(0, '00:10:01.500').getTime(),
      lines: runtimeaTranscript(IDS.R1, [
        { prompt: 'old question', sent: at(-40, '08:00:00.000'), calls: [{ at: at(-40, '08:00:03.000'), model: 'mystery-model-x', usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 } }] },
        { prompt: 'fable question', sent: at(-3, '09:00:00.000'), calls: [{ at: at(-3, '09:00:02.000'), model: 'claude-fable-5-2', usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 } }] },
        {
          prompt: 'list the files',
          sent: at(-2, '10:00:00.000'),
          calls: [
            { at: at(-2, '10:00:02.000'), model: 'gpt-6.1-sol', usage: { input: 1000, output: 20, cacheRead: 3000, cacheWrite: 0 }, cost: 0.0125, tools: ['exec'] },
            { at: at(-2, '10:00:04.000'), model: 'gpt-6.1-sol', usage: { input: 200, output: 100, cacheRead: 4000, cacheWrite: 0 }, cost: 0.0035 },
          ],
        },
        { prompt: 'second question', sent: at(0, '00:10:00.000'), calls: [{ at: at(0, '00:10:01.500'), model: 'claude-opus-5-5', usage: { input: 10, output: 1000, cacheRead: 20000, cacheWrite: 5000 }, cost: 0 }] },
      ]),
    },
  ]);

  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    {
      agentId: 'proj',
      sessionId: IDS.C1,
      title: 'clia session',
      updatedAt: at(0, '00:20:01.000').getTime(),
      lines: [
        ...cliaTurn(IDS.C1, 'hello', at(-1, '09:00:00.000'), '01-new-text', 1300),
        ...cliaTurn(IDS.C1, 'run a command', at(-1, '09:05:00.000'), '03-resume-tool-bash', 1000),
        ...cliaTurn(IDS.C1, 'again', at(0, '00:20:00.000'), '02-resume-text', 1000),
      ],
    },
  ]);

  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    {
      agentId: 'proj',
      sessionId: IDS.B1,
      title: 'clib session',
      updatedAt: at(0, '00:30:01.050').getTime(),
      lines: [...clibTurn('say hello', at(-1, '11:00:00.000'), 'new-text', 'gpt-5.5'), ...clibTurn('run ls', at(0, '00:30:00.000'), 'shell-gpt-5.5', 'gpt-5.5')],
    },
  ]);

  const legacy = path.join(home, 'clia-space', 'proj', '.sessions');
  mkdirSync(legacy, { recursive: true });
  const usageA = { input_tokens: 3, output_tokens: 50, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 };
  const usageB = { input_tokens: 5, output_tokens: 10, cache_read_input_tokens: 1200, cache_creation_input_tokens: 0 };
  writeFileSync(
    path.join(legacy, `${IDS.N1}.json`),
    JSON.stringify({
      sessionId: IDS.N1,
      title: 'native session',
      updatedAt: at(-1, '12:00:03.000').getTime(),
      messages: nativeRecords(IDS.N1, 'read a file', at(-1, '12:00:00.000'), [
        { id: 'msg_A', requestId: 'req_A', model: 'claude-haiku-4-5', usage: usageA, blocks: [{ at: at(-1, '12:00:02.000'), text: 'Reading it.' }, { at: at(-1, '12:00:02.100'), tool: 'Read' }] },
        { id: 'msg_B', requestId: 'req_B', model: 'claude-haiku-4-5', usage: usageB, blocks: [{ at: at(-1, '12:00:03.000'), text: 'It says ok.' }] },
      ]),
    }),
  );
}
