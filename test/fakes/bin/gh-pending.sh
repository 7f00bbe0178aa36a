#!/bin/sh
# A gh double for process tests: `gh auth login --help` answers at once; `gh auth login ...`
# prints a one-time code and the device URL like the real gh, then waits for ever (the user
# never approves), with a `sleep` child in its process group. Its pid goes to $HOME/.gh-pending.pid.
case "$*" in
  *--help*) echo "  --insecure-storage   Save authentication credentials in plain text"; exit 0 ;;
esac
echo $$ > "$HOME/.gh-pending.pid"
echo "! First copy your one-time code: ABCD-1234" >&2
echo "Open this URL to continue in your web browser: https://github.com/login/device" >&2
sleep 300 &
wait
