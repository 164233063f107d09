#!/usr/bin/env bash
# System packages the tests use (Debian): Chromium for the UI tests, gnome-keyring and
# D-Bus for the keychain tests, zip/unzip as independent ZIP checkers, Apache with mod_dav,
# rclone (serve webdav) and SabreDAV under PHP's built-in server as real WebDAV servers,
# git (its http-backend CGI behind that Apache) as a real git host, rclone and OpenSSH's
# sshd for the rclone remotes (SFTP), util-linux for runuser (the other-user permission
# checks), curl as the benchmark's download client. Runs apt only for what is missing.
set -euo pipefail
packages=(chromium gnome-keyring dbus dbus-x11 libsecret-tools zip unzip apache2 apache2-utils git rclone php-cli php-xml php-sabre-dav openssh-server openssh-client util-linux curl)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "Test system packages present: ${packages[*]}"
