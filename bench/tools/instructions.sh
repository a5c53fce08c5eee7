#!/usr/bin/env bash
# Instructions per request of one bench server, counted by valgrind's callgrind: unlike req/s or
# CPU time it barely moves when other processes share the machine (about ±3 % between runs here).
# Only the measured requests are counted (instrumentation is switched on after a warm-up).
#
#   bench/tools/instructions.sh <server script> "<server args>" <text> [requests] [REST path]
#   bench/tools/instructions.sh ours.ts "" message 2000      # SendMessage answered by a Message
#   bench/tools/instructions.sh ours.ts --stack complete     # a task that completes, full stack
#   bench/tools/instructions.sh ours.ts "" message 2000 /message:send               # the same over HTTP+JSON
#   bench/tools/instructions.sh official-sdk.ts "" complete 2000 /rest/message:send  # the SDK's REST handler
#
# <text> picks the agent behaviour as in bench/servers (message | complete | input), or get-task:
# JSON-RPC GetTask, every request on the one task a `complete` SendMessage made first, or two-turn:
# pairs of a parked task and its follow-up (bench/tools/two-turn-pairs.ts), counted per pair. Without a REST
# path: JSON-RPC SendMessage posted to /; with one: the HTTP+JSON SendMessageRequest `{"message": ...}`
# posted to that path as application/a2a+json. Needs valgrind; run `npm run build` first for ours.ts.
# INSTR_NODE_FLAGS adds node flags to the server, e.g. --single-threaded: V8 then compiles and
# collects on the main thread, so a loaded machine shifts the count less. Takes about 40 s per call. CALLGRIND_KEEP=<dir> keeps the callgrind output there (for
# `callgrind_annotate --inclusive=yes <dir>/cg.<pid>`: where the instructions go, by function).
set -euo pipefail
cd "$(dirname "$0")/../.."
script=$1 args=$2 text=$3 n=${4:-2000} rest=${5:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file --callgrind-out-file="$out/cg.%p" \
  node ${INSTR_NODE_FLAGS:-} --import tsx "bench/servers/$script" $args >"$out/server.out" 2>"$out/valgrind.err" &
pid=$!
for _ in $(seq 1 600); do grep -q READY "$out/server.out" && break; sleep 0.2; done
port=$(awk '/READY/ {print $2}' "$out/server.out")
message="{\"messageId\":\"m-instr\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"$text\"}]}"
if [ "$text" = get-task ]; then
  created=$(curl -s -X POST -H 'content-type: application/json' -H 'a2a-version: 1.0' -H 'authorization: Bearer bench-pre-verified-token' \
    -H 'x-tenant-id: bench-tenant' -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":${message/get-task/complete}}}" "http://127.0.0.1:$port/")
  task=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).result.task.id)' "$created")
  body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"$task\"}}" type=application/json path=/ binding=JSON-RPC
elif [ -n "$rest" ]; then
  body="{\"message\":$message}" type=application/a2a+json path=$rest binding=REST
else
  body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":$message}}" type=application/json path=/ binding=JSON-RPC
fi
# The bench's own check: one answer before and one after the load must be the expected result (not an error).
check() {
  sample=$(curl -s -X POST -H "content-type: $type" -H 'a2a-version: 1.0' -H 'authorization: Bearer bench-pre-verified-token' \
    -H 'x-tenant-id: bench-tenant' -d "$body" "http://127.0.0.1:$port$path")
  case $sample in
    *'"error"'* | '') echo "not the expected answer from $path: ${sample:0:300}" >&2; kill -INT "$pid"; exit 1 ;;
  esac
}
if [ "$text" = two-turn ]; then
  pairs() { npx tsx bench/tools/two-turn-pairs.ts "$port" "$1" || { kill -INT "$pid"; exit 1; }; }
  pairs 1500
  callgrind_control -i on "$pid" >/dev/null 2>&1
  pairs "$n"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  kill -INT "$pid"
  wait "$pid" || true
  if [ -n "${CALLGRIND_KEEP:-}" ]; then mkdir -p "$CALLGRIND_KEEP" && cp "$out"/cg.* "$CALLGRIND_KEEP"/; fi
  total=$(cat "$out"/cg.* | awk '/^(summary|totals):/ {s += $2} END {printf "%.0f", s}')
  echo "$script $args two-turn (JSON-RPC): $((total / n)) instructions/pair ($n pairs)"
  exit 0
fi
check
load() {
  npx autocannon -c 10 -a "$1" -m POST -H "content-type: $type" -H 'a2a-version: 1.0' \
    -H 'authorization: Bearer bench-pre-verified-token' -H 'x-tenant-id: bench-tenant' -b "$body" "http://127.0.0.1:$port$path" >/dev/null 2>&1
}
load 3000
callgrind_control -i on "$pid" >/dev/null 2>&1
load "$n"
callgrind_control -i off "$pid" >/dev/null 2>&1
check
kill -INT "$pid"
wait "$pid" || true
if [ -n "${CALLGRIND_KEEP:-}" ]; then mkdir -p "$CALLGRIND_KEEP" && cp "$out"/cg.* "$CALLGRIND_KEEP"/; fi
total=$(cat "$out"/cg.* | awk '/^(summary|totals):/ {s += $2} END {printf "%.0f", s}')
echo "$script $args $text ($binding${rest:+ $rest}): $((total / n)) instructions/request ($n requests)"
