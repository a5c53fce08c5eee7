#!/usr/bin/env bash
# Instructions per request of one bench server, counted by valgrind's callgrind: unlike req/s or
# CPU time it barely moves when other processes share the machine (about ±3 % between runs here).
# Only the measured requests are counted (instrumentation is switched on after a warm-up).
#
#   bench/tools/instructions.sh <server script> "<server args>" <text> [requests]
#   bench/tools/instructions.sh ours.ts "" message 2000      # SendMessage answered by a Message
#   bench/tools/instructions.sh ours.ts --stack complete     # a task that completes, full stack
#
# <text> picks the agent behaviour as in bench/servers (message | complete | input). Needs valgrind; run
# `npm run build` first for ours.ts. Takes about 40 s per call.
set -euo pipefail
cd "$(dirname "$0")/../.."
script=$1 args=$2 text=$3 n=${4:-2000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file --callgrind-out-file="$out/cg.%p" \
  node --import tsx "bench/servers/$script" $args >"$out/server.out" 2>"$out/valgrind.err" &
pid=$!
for _ in $(seq 1 600); do grep -q READY "$out/server.out" && break; sleep 0.2; done
port=$(awk '/READY/ {print $2}' "$out/server.out")
body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m-instr\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"$text\"}]}}}"
load() {
  npx autocannon -c 10 -a "$1" -m POST -H 'content-type: application/json' -H 'a2a-version: 1.0' \
    -H 'authorization: Bearer bench-pre-verified-token' -H 'x-tenant-id: bench-tenant' -b "$body" "http://127.0.0.1:$port/" >/dev/null 2>&1
}
load 3000
callgrind_control -i on "$pid" >/dev/null 2>&1
load "$n"
callgrind_control -i off "$pid" >/dev/null 2>&1
kill -INT "$pid"
wait "$pid" || true
total=$(cat "$out"/cg.* | awk '/^(summary|totals):/ {s += $2} END {printf "%.0f", s}')
echo "$script $args $text: $((total / n)) instructions/request ($n requests)"
