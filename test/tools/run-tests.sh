#!/bin/sh
# The README's test command: install the Debian packages the suite needs when missing
# (test/tools/packages.sh; where it cannot, it prints the command to run and stops), install
# the pinned real agent programs into their cache (this needs the npm registry), then run the
# whole suite inside a fresh network namespace where only loopback exists, so neither the
# tests nor the real CLIs they drive can reach anything else. As root: `unshare -n`. As another
# user: a user namespace where that user is root just long enough to bring loopback up, then a
# nested one where the tests run as that same user again (same uid and gid, no capabilities).
# Where no namespace can be made (no unshare, user namespaces disabled), the suite runs as is
# and the real-program lanes refuse to start the real CLIs (they are reported as skipped,
# never passed).
set -eu
cd "$(dirname "$0")/../.."
sh test/tools/packages.sh
node test/tools/programs.mjs
if [ "${SPACE_TEST_NO_NETNS:-}" != 1 ]; then
  if unshare -n true 2>/dev/null; then
    exec unshare -n sh -c 'ip link set lo up && SPACE_TEST_NETNS=1 exec npx vitest run "$@"' sh "$@"
  fi
  uid=$(id -u) gid=$(id -g)
  inner='ip link set lo up && uid=$1 gid=$2 && shift 2 && SPACE_TEST_NETNS=1 exec unshare --user --map-user="$uid" --map-group="$gid" "$@"'
  if unshare -rn sh -c "$inner" sh "$uid" "$gid" true 2>/dev/null; then
    exec unshare -rn sh -c "$inner" sh "$uid" "$gid" npx vitest run "$@"
  fi
fi
echo "run-tests: no network namespace; real-program lanes will be skipped" >&2
exec npx vitest run "$@"
