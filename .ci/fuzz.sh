#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZTIME each (go test -fuzz takes one target at
# a time). A failing input is saved to its package's testdata/fuzz corpus, where plain
# `go test` replays it from then on, and fails the run. go test also fails a run that its
# -fuzztime ends while a worker is still shrinking a new (passing) input, with only
# "context deadline exceeded": that finds nothing, so it is reported and not counted.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-3s}
status=0
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -H '^func Fuzz' |
  sed -E 's#^\./([^:]*)/[^/]*:func (Fuzz[A-Za-z0-9_]*).*#\1:\2#' | sort -u)
for pt in $targets; do
  pkg=./${pt%%:*}; fn=${pt##*:}
  echo "== fuzz $pkg $fn ($FUZZTIME)"
  out=$(mktemp)
  $GO test -run '^$' -fuzz "^$fn\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" 2>&1 | tee "$out" | tail -n 4
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out" && ! grep -q -- '--- FAIL: .*\(panic\|Failing\)' "$out"; then
      echo "fuzz $fn: time ran out while go test was shrinking a passing input; nothing found"
    else
      cat "$out"
      status=1
    fi
  fi
  rm -f "$out"
done
exit $status
