#!/usr/bin/env bash
# Install and start what the test suite needs beyond Python packages:
# Debian chromium (browser tests) and PostgreSQL 15 (store tests against a real server).
# Writes .cache/test-env.sh with the variables the tests read.
set -euo pipefail
mkdir -p .cache
ENV_FILE=.cache/test-env.sh
: > "$ENV_FILE"

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium chromium-driver)
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "test-services: missing ${need_apt[*]}; install them (sudo apt-get install ${need_apt[*]})" >&2
  fi
fi

if command -v pg_lsclusters >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  cluster=$(pg_lsclusters -h | awk 'NR==1 {print $1" "$2}')
  if [ -n "$cluster" ]; then
    pg_ctlcluster $cluster start 2>/dev/null || true
    for _ in $(seq 1 30); do
      su postgres -c "psql -qtAc 'select 1'" >/dev/null 2>&1 && break
      sleep 0.5
    done
    su postgres -c "psql -qtAc \"select 1 from pg_roles where rolname='docket'\"" | grep -q 1 ||
      su postgres -c "psql -qc \"create role docket login password 'docket' createdb\""
    su postgres -c "psql -qtAc \"select 1 from pg_database where datname='docket_test'\"" | grep -q 1 ||
      su postgres -c "createdb -O docket docket_test"
    echo "export DOCKET_TEST_POSTGRES_URL='postgresql+psycopg://docket:docket@127.0.0.1:5432/docket_test'" >> "$ENV_FILE"
  fi
fi
echo "test-services: ready ($(cat "$ENV_FILE" | wc -l) variables)"
