#!/bin/sh
# Entrypoint of the SafeClaw image: build REDIS_URL from this service's own password file
# (a compose secret), so no password is ever in the compose file, an env file, or the image.
set -eu
if [ -n "${REDIS_PASSWORD_FILE:-}" ]; then
  if [ ! -r "$REDIS_PASSWORD_FILE" ]; then
    echo "safeclaw: $REDIS_PASSWORD_FILE is missing: run ./safeclaw compose-init on the host first" >&2
    exit 1
  fi
  REDIS_URL="redis://${REDIS_USER:?REDIS_USER must name the Redis user}:$(cat "$REDIS_PASSWORD_FILE")@${REDIS_HOST:-redis}:${REDIS_PORT:-6379}/0"
  export REDIS_URL
fi
exec "$@"
