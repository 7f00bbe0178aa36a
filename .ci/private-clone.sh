#!/usr/bin/env bash
# A fresh clone in a folder only its owner may enter (mktemp -d makes it 0700), under a name with
# a space, installed with npm ci and tested with the README's command: the test files that
# depend on who runs them (they drop root's power so that file modes apply, or switch users).
# They once failed there: the service they start could not read a checkout inside a private
# folder (issue 36). Run by .ci/run as whatever user CI runs as (root on most runners). It tests
# the committed HEAD (a clone), as a new user would get it.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
private="$(mktemp -d)"
trap 'rm -rf "$private"' EXIT
chmod 700 "$private"
clone="$private/a clone"
git clone --quiet --no-hardlinks "$src" "$clone"
cd "$clone"
mapfile -t files < <(grep -rlE 'modesApply|setpriv' test --include='*.test.ts' | sort)
if [ "${#files[@]}" -eq 0 ]; then echo "private-clone: no test depends on the user: the selection is broken" >&2; exit 1; fi
echo "private-clone: $(id -un) in $clone (parent mode $(stat -c %a "$private")): ${files[*]}"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm test -- "${files[@]}" 2>&1 | tee "$private/out.txt"
last="$(grep -v '^[[:space:]]*$' "$private/out.txt" | tail -n 1)"
if ! [[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed,\ 0\ skipped$ ]]; then
  echo "private-clone: expected 0 failed and 0 skipped, got: $last" >&2
  exit 1
fi
