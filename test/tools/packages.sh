#!/bin/sh
# Makes sure the Debian packages the suite runs for real are installed (the list:
# test/tools/debian-packages.txt). A package counts as installed when its command is on PATH.
# Missing ones are installed with apt-get when this can (root, or sudo without a password);
# otherwise this prints the exact command to run and exits 1, before any test runs: a suite
# that runs without them reports whole files as failed, which says less than one clear line.
# SPACE_TEST_SKIP_PACKAGES=1 skips the check (the files that need a missing program then fail).
set -eu
[ "${SPACE_TEST_SKIP_PACKAGES:-}" = 1 ] && exit 0
list="$(dirname "$0")/debian-packages.txt"

missing=""
while read -r pkg cmd; do
  case "$pkg" in ''|'#'*) continue ;; esac
  command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done < "$list"
missing="${missing# }"
[ -z "$missing" ] && exit 0

install="apt-get install -y -q --no-install-recommends $missing"
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo "
  else
    echo "run-tests: the test suite needs these Debian packages, which are not installed: $missing" >&2
    echo "run-tests: install them, then run the tests again:" >&2
    echo "  sudo apt-get update && sudo $install" >&2
    exit 1
  fi
  echo "run-tests: installing the Debian packages the suite needs: $missing" >&2
  if ${sudo}apt-get update -q >&2 && ${sudo}env DEBIAN_FRONTEND=noninteractive $install >&2; then exit 0; fi
  echo "run-tests: apt-get could not install them; install them, then run the tests again:" >&2
  echo "  ${sudo}apt-get update && ${sudo}$install" >&2
  exit 1
fi
echo "run-tests: the test suite needs these programs, which are not on PATH (Debian package names): $missing" >&2
echo "run-tests: install them with your system's package manager, then run the tests again" >&2
exit 1
