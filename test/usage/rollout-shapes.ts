/**
 * Rollout lines of odd shapes, as logs (the read's memo carries a model, running totals and a
 * sub-agent's replay from line to line): other key orders, escapes, unicode, injected context,
 * numbers that are not plain integers, repeated keys, lines cut short or run together.
 */
let ordinal = 0;
const at = (s: number): string => new Date(Date.UTC(2026, 10, 21, 9, 0, s)).toISOString();

/** A line of the shape Codex writes, its payload given as JSON text. */
function line(type: string, payload: string, time = at(ordinal)): string {
  return `{"timestamp":"${time}","ordinal":${ordinal++},"type":"${type}","payload":${payload}}`;
}

const prompt = (text: string): string => line('response_item', `{"type":"message","role":"user","content":[{"type":"input_text","text":${JSON.stringify(text)}}]}`);
const reply = (text: string): string => line('response_item', `{"type":"message","role":"assistant","content":[{"type":"output_text","text":${JSON.stringify(text)}}]}`);
const model = (name: string): string => line('turn_context', `{"cwd":"/w","model":${JSON.stringify(name)},"effort":"high"}`);
const tokens = (input: number, cached: number, output: number): string => `{"input_tokens":${input},"cached_input_tokens":${cached},"output_tokens":${output},"reasoning_output_tokens":0,"total_tokens":${input + output}}`;
const count = (total: string, last = total): string => line('event_msg', `{"type":"token_count","info":{"total_token_usage":${total},"last_token_usage":${last},"model_context_window":258400},"rate_limits":null}`);
const meta = (source: string): string => line('session_meta', `{"id":"s","cwd":"/w","source":${source},"base_instructions":{"text":"be \\"brief\\""}}`);

const injected = [
  prompt('<environment_context>\n  <cwd>/w</cwd>\n</environment_context>'),
  prompt('<user_instructions>x</user_instructions>'),
  prompt('# AGENTS.md instructions for /w\n\nx'),
  prompt('<skill>\n<name>s</name>'),
  prompt('<turn_aborted>'),
  prompt('<user_shell_command>ls'),
  prompt(' <environment_context>'),
  prompt('\n<skill>x'),
  prompt('\u3000<environment_context>'),
  line('response_item', '{"type":"message","role":"user","content":[{"type":"input_text","text":"\\u003cenvironment_context>"}]}'),
  line('response_item', '{"type":"message","role":"user","content":[{"type":"input_text","text":"<env\\u0069ronment_context>"}]}'),
  line('response_item', '{"type":"message","role":"user","content":[{"type":"input_text","text":""},{"type":"input_text","text":"<turn_aborted>"}]}'),
  line('response_item', '{"type":"message","role":"user","content":[{"type":"input_image","image_url":"x"},{"type":"input_text","text":"<user_shell_command>"}]}'),
];

const ownWords = [
  prompt('fix the build'),
  prompt('<b>bold</b> is not context'),
  prompt('<'),
  prompt('<skil'),
  prompt('#hashtag'),
  prompt('# AGENTS.md'),
  prompt('<environment_contex'),
  prompt('héllo'),
  prompt('日本語で'),
  prompt('say "hi"\n\\o/'),
  prompt(''),
  line('response_item', '{"type":"message","role":"user","content":"a string content"}'),
  line('response_item', '{"type":"message","role":"user"}'),
  line('response_item', '{"content":[{"type":"input_text","text":"content first"}],"role":"user","type":"message"}'),
  line('response_item', '{"type":"message","content":[{"type":"input_text","text":"late role"}],"role":"user"}'),
];

const tools = [
  line('response_item', '{"type":"function_call","name":"shell","arguments":"{\\"cmd\\":[\\"ls\\"]}","call_id":"c1"}'),
  line('response_item', '{"name":"apply_patch","call_id":"c2","type":"custom_tool_call","input":"*** Begin"}'),
  line('response_item', '{"type":"function_call","name":"sh\\u0065ll","arguments":"{}","call_id":"c3"}'),
  line('response_item', '{"type":"function_call","name":"outil-été","arguments":"{}","call_id":"c4"}'),
  line('response_item', '{"type":"function_call","arguments":"{}","call_id":"c5"}'),
  line('response_item', '{"type":"function_call","name":null,"arguments":"{}","call_id":"c6"}'),
  line('response_item', '{"type":"local_shell_call","call_id":"c7","action":{"type":"exec","command":["ls"]}}'),
  line('response_item', '{"type":"web_search_call","action":{"type":"search","query":"q"}}'),
  line('response_item', '{"type":"function_call_output","call_id":"c1","output":"ok"}'),
  line('response_item', '{"type":"custom_tool_call_output","call_id":"c2","output":"ok"}'),
  line('response_item', '{"type":"reasoning","summary":[],"encrypted_content":"x"}'),
  line('response_item', '{"id":{"type":"x","role":"user"},"type":"reasoning","summary":[]}'),
  line('response_item', '{"type":"message","role":"developer","content":[{"type":"input_text","text":"x"}]}'),
  line('response_item', '{"type":"mess\\u0061ge","role":"assistant","content":[]}'),
  line('response_item', '{"type":"message","role":"assis\\u0074ant","content":[]}'),
  line('response_item', '{"type":"message","role":7}'),
  line('response_item', '{"type":7}'),
  line('response_item', '{}'),
  line('response_item', '"not an object"'),
  // Repeated keys: JSON.parse keeps the last.
  line('response_item', '{"type":"reasoning","type":"function_call","name":"first","name":"last","arguments":"{}"}'),
  line('response_item', '{"type":"message","role":"assistant","type":"function_call_output","call_id":"c1","output":"x"}'),
];

const counts = [
  model('gpt-5.5'),
  count(tokens(100, 40, 10)),
  count(tokens(100, 40, 10)),
  count(tokens(250, 90, 30), tokens(150, 50, 20)),
  line('event_msg', '{"type":"token_count","info":null,"rate_limits":{"primary":null}}'),
  line('event_msg', `{"type":"token_count","info":{"last_token_usage":${tokens(5, 0, 5)}}}`),
  line('event_msg', `{"info":{"total_token_usage":${tokens(300, 90, 40)}},"type":"token_count"}`),
  model('gpt-é\\u00e9'),
  count(tokens(400, 100, 50)),
  line('turn_context', '{"model":"first","cwd":"/w","model":"gpt-6.1-sol"}'),
  count(tokens(500, 100, 60)),
  line('turn_context', '{"cwd":"/w","collaboration_mode":{"settings":{"model":"nested"}}}'),
  line('turn_context', '{"cwd":"/w","model":null}'),
  model('modèle'),
  count('{"input_tokens":600,"cached_input_tokens":100,"output_tokens":70.0}'),
  count('{"input_tokens":7e2,"cached_input_tokens":100,"output_tokens":80}'),
  count('{"input_tokens":800,"cached_input_tokens":-1,"output_tokens":90}'),
  count('{"input_tokens":900,"cached_input_tokens":"100","output_tokens":null,"cache_write_input_tokens":true}'),
  count('{"input_tokens":1000,"cached_input_tokens":0100,"output_tokens":100}'),
  count('{"input_tokens":12345678901234567890,"cached_input_tokens":0,"output_tokens":100}'),
  count('{"input_tokens":1000,"input_tokens":1100,"output_tokens":110}'),
  // Not JSON: the line does not parse.
  count('{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":nul}'),
  count('{"input_tokens":1300,"cached_input_tokens":tru,"output_tokens":130}'),
  // A compaction restarts the totals.
  count(tokens(50, 0, 5)),
  line('event_msg', '{"type":"task_complete","last_agent_message":"\\"type\\":\\"token_count\\""}'),
  line('event_msg', '{"type":null}'),
  line('world_state', `{"state":{"type":"token_count","info":{"total_token_usage":${tokens(1, 1, 1)}}}}`),
];

const cut = [
  prompt('cut short').slice(0, -2),
  reply('cut after a block').slice(0, -2),
  count(tokens(2000, 0, 200)).slice(0, -1),
  count(tokens(2000, 0, 200)).replace(',"rate_limits":null}}', '}'),
  model('cut').slice(0, -1),
  `${reply('two records')}${reply('on one line')}`,
  `${count(tokens(2100, 0, 210))}x}`,
  line('event_msg', `{"type":"token_count","info":{"total_token_usage":${tokens(2200, 0, 220)}}}x}`),
  `{"timestamp": "${at(5)}","type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}`,
  `{"type":"response_item","timestamp":"${at(6)}","payload":{"type":"message","role":"assistant","content":[]}}`,
  `{"timestamp":"2026-11-21T09:00:0\\u0037.000Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}`,
  line('response_item', '{"type":"message","role":"assistant","content":[]}', 'not a time'),
  line('response_item', '{"type":"message","role":"assistant","content":[]}', '2026-11-21T10:00:00+02:00'),
  // Record keys after the payload (0.169 writes `metadata` there): a repeated one is the one JSON.parse keeps.
  `${reply('with metadata').slice(0, -1)},"metadata":{"history_sequence":9,"role":"user"}}`,
  `${reply('a later time').slice(0, -1)},"timestamp":"${at(50)}"}`,
  `${count(tokens(2300, 0, 230)).slice(0, -1)},"type":"world_state"}`,
  `${model('later payload').slice(0, -1)},"payload":{"model":"other"}}`,
  'not json at all',
  '{"timestamp":"t"}',
];

/** A sub-agent's rollout: its parent's replayed counts set the total only, its own start after thread_settings_applied. */
const subagent = [
  meta('{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":1}}}'),
  meta('"exec"'),
  model('gpt-5.5'),
  prompt('parent prompt, replayed'),
  count(tokens(1000, 0, 100)),
  line('event_msg', '{"type":"thread_settings_applied","thread_id":"c"}'),
  prompt('child prompt'),
  count(tokens(1500, 200, 150)),
];

const interAgent = [
  meta('{"subagent":{"thread_spawn":{"parent_thread_id":"p\\u0031"}}}'),
  count(tokens(1000, 0, 100)),
  line('inter_agent_communication_metadata', '{"trigger_turn":false,"message":"x"}'),
  count(tokens(1100, 0, 110)),
  line('inter_agent_communication', '{"message":"start","trigger_turn":true}'),
  count(tokens(1200, 0, 120)),
];

const notSpawned = [meta('{"subagent":"review"}'), count(tokens(10, 0, 1)), meta('{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}}'), count(tokens(20, 0, 2))];
const emptyParent = [meta('{"subagent":{"thread_spawn":{"parent_thread_id":""}}}'), count(tokens(10, 0, 1))];

export const ODD_ROLLOUTS: string[][] = [
  [meta('"cli"'), model('gpt-5.5'), ...injected, ...ownWords, reply('ok'), ...tools, ...counts, ...cut],
  subagent,
  interAgent,
  notSpawned,
  emptyParent,
  [model('m'), prompt('a prompt'), reply('and its reply'), count(tokens(10, 0, 1)), prompt('the last line unterminated'), count(tokens(20, 0, 2))],
];
