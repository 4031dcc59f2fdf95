#!/usr/bin/env bash
# Installs the system programs SafeClaw's tests and stack use, where they are missing:
# redis-server (the broker), chromium + chromedriver (browser vision), docker-compose (tests).
# Debian/Ubuntu (apt).
set -euo pipefail

source "$(dirname "$0")/system_programs.sh"
missing_system_packages
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "Please install: ${need[*]} (this script knows only apt-get)." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "Please install as root: apt-get install ${need[*]}" >&2; exit 1
  fi
fi
echo "safeclaw: step 1 of 3: installing the system packages ${need[*]} (apt-get; a minute or two)" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
