#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, so the
# keychain tests use a real Secret Service. Usage: scripts/with-keyring.sh npm test
set -euo pipefail
exec dbus-run-session -- bash -c '
  eval "$(printf "ferry-ci-keyring" | gnome-keyring-daemon --unlock --components=secrets)"
  export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
  exec "$@"
' with-keyring "$@"
