#!/bin/sh
# A light double of the Claude Code CLI for load tests (a shell, not a Node process, so fifty
# turns at once stay cheap): the shape of the recorded stream-json (init, text deltas ten a
# second, the assistant message, a success result), under the session id it was given. The
# deltas come in bursts of ten a second apart: a `sleep` per delta was 500 forks a second for
# fifty turns, which starved the service under test of the slow machine's two cores.
# The prompt "deltas <n>" sets the number of deltas (default 10); it comes as the first
# stream-json user message on stdin, as the service sends it (or, from older callers, after `--`).
sid=00000000-0000-4000-8000-000000000000
n=10
while [ $# -gt 0 ]; do
  case "$1" in
    --session-id|--resume) sid="$2"; shift 2 ;;
    --) shift; case "$*" in *deltas\ *) n=$(echo "$*" | sed 's/.*deltas \([0-9]*\).*/\1/') ;; esac; break ;;
    *) shift ;;
  esac
done
if [ "$n" = 10 ] && IFS= read -r line; then
  case "$line" in *deltas\ *) n=$(echo "$line" | sed 's/.*deltas \([0-9]*\).*/\1/') ;; esac
fi
printf '{"type":"system","subtype":"init","cwd":"%s","session_id":"%s","model":"claude-opus-5-5"}\n' "$PWD" "$sid"
i=0
while [ "$i" -lt "$n" ]; do
  printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"d%s "}},"session_id":"%s","parent_tool_use_id":null}\n' "$i" "$sid"
  i=$((i + 1))
  [ $((i % 10)) -eq 0 ] && [ "$i" -lt "$n" ] && sleep 1
done
printf '{"type":"assistant","message":{"id":"msg_light","role":"assistant","content":[{"type":"text","text":"light answer"}]},"session_id":"%s"}\n' "$sid"
printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":100,"num_turns":1,"result":"light answer","session_id":"%s","total_cost_usd":0}\n' "$sid"
