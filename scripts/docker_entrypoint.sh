#!/bin/sh
# Entrypoint of the SafeClaw image: build REDIS_URL from this service's own password file
# (a compose secret), so no password is ever in the compose file, an env file, or the image.
# With REDIS_SENTINELS (host:port,host:port,...; compose.sentinel.env) it names the primary that
# Sentinel calls REDIS_MASTER_NAME (default safeclaw), followed through a failover.
set -eu
if [ -n "${REDIS_PASSWORD_FILE:-}" ]; then
  if [ ! -r "$REDIS_PASSWORD_FILE" ]; then
    echo "safeclaw: $REDIS_PASSWORD_FILE is missing: run ./safeclaw compose-init on the host first" >&2
    exit 1
  fi
  login="${REDIS_USER:?REDIS_USER must name the Redis user}:$(cat "$REDIS_PASSWORD_FILE")"
  if [ -n "${REDIS_SENTINELS:-}" ]; then
    REDIS_URL="redis+sentinel://${login}@${REDIS_SENTINELS}/${REDIS_MASTER_NAME:-safeclaw}/0"
  else
    REDIS_URL="redis://${login}@${REDIS_HOST:-redis}:${REDIS_PORT:-6379}/0"
  fi
  export REDIS_URL
fi
exec "$@"
