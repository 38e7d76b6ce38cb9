#!/usr/bin/env bash
# A private PostgreSQL server on loopback for the tests: `source .ci/postgres.sh start` exports
# KLUE_VIZ_TEST_PG; `.ci/postgres.sh stop DIR` stops it. Uses Debian's packages, installing them if missing.
set -euo pipefail
action=${1:-start}
if [ "$action" = stop ]; then
  dir=$2
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  su postgres -c "$bin/pg_ctl -D $dir/data -m fast -w stop" >/dev/null 2>&1 || true
  rm -rf "$dir"
  return 0 2>/dev/null || exit 0
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
KLUE_VIZ_PG_DIR=$(mktemp -d /tmp/klue-viz-pg.XXXXXX)
chown postgres "$KLUE_VIZ_PG_DIR"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
su postgres -c "$bin/initdb -D $KLUE_VIZ_PG_DIR/data -A trust -U postgres" >/dev/null
su postgres -c "$bin/pg_ctl -D $KLUE_VIZ_PG_DIR/data -l $KLUE_VIZ_PG_DIR/log -w -o \"-p $port -k $KLUE_VIZ_PG_DIR -c listen_addresses=127.0.0.1\" start" >/dev/null
su postgres -c "$bin/psql -h 127.0.0.1 -p $port -U postgres -qc 'CREATE DATABASE klue_viz_test'"
export KLUE_VIZ_PG_DIR
export KLUE_VIZ_TEST_PG="postgresql://postgres@127.0.0.1:$port/klue_viz_test"
