#!/usr/bin/env bash
# Prefix-cache-aware routing benchmark: the same multi-turn workload, at the same session rate, through one
# `vrender serve` in front of 4 engine-sims, once per routing policy:
#   least-outstanding   the engine with the fewest outstanding requests
#   prefix              the engine holding the longest prefix of the prompt's KV blocks, weighed against load,
#                       fed by the engines' KV events (ZMQ) and by predictions
#   prefix (no events)  the same with predictions only (--routing prefix without --kv-events-endpoint)
# and prints, for each, TTFT p50/p99, prefill tokens computed, the engines' prefix-cache hit rate against the
# ideal (every turn after a session's first finds its previous turn's prompt) and the load spread (max/mean
# requests per engine), read from the engines' /metrics.
#
# The engine model: every sim has a prefix cache of CACHE_BLOCKS blocks of 16 tokens, runs prefills one at a
# time (--serial-prefill) and takes PREFILL_US per prompt token it does not hold plus FIRST_MS, then TOKEN_MS
# per output token; so a turn whose history is cached pays for its new tokens only.
#
# Starts 4 engine-sims and one `vrender serve` per policy, on loopback; always stops every process it started
# (by pid). Needs `make build` and `make models` first.
#
# Environment: BIN (bin/vrender), MODEL (.cache/models/qwen3), SERVED_NAME (Qwen/Qwen3-8B), SESSIONS (32),
# TURNS (8), FIRST_LEN (1024), TURN_LEN (128), SYSTEM_LEN (256), OUTPUT_LEN (32), THINK (500ms), RATE (8 session
# starts/s), PREFILL_US (100), FIRST_MS (5), TOKEN_MS (10), CACHE_BLOCKS (4096), RESULT_DIR (.cache/bench),
# LOG_DIR (a temporary directory, kept on failure), POLICIES ("least-outstanding prefix prefix-noevents").
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bin=${BIN:-bin/vrender}
model=${MODEL:-.cache/models/qwen3}
served=${SERVED_NAME:-Qwen/Qwen3-8B}
sessions=${SESSIONS:-32}
turns=${TURNS:-8}
first_len=${FIRST_LEN:-1024}
turn_len=${TURN_LEN:-128}
system_len=${SYSTEM_LEN:-256}
output_len=${OUTPUT_LEN:-32}
think=${THINK:-500ms}
rate=${RATE:-8}
prefill_us=${PREFILL_US:-100}
first_ms=${FIRST_MS:-5}
token_ms=${TOKEN_MS:-10}
cache_blocks=${CACHE_BLOCKS:-4096}
result_dir=${RESULT_DIR:-.cache/bench}
policies=${POLICIES:-least-outstanding prefix prefix-noevents}

[ -x "$bin" ] || { echo "bench-prefix: $bin not found; run make build" >&2; exit 1; }
[ -f "$model/tokenizer.json" ] || { echo "bench-prefix: $model/tokenizer.json not found; run make models" >&2; exit 1; }

keep_logs=${LOG_DIR:+yes}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vrender-bench-prefix.XXXXXX")}
mkdir -p "$log_dir" "$result_dir"
pids=()

tag=bench-prefix
# shellcheck source=scripts/proc.sh
. "$repo/scripts/proc.sh"

trap cleanup_on_exit EXIT
trap 'exit 130' INT TERM

# start_sims: 4 engine-sims with prefix caches publishing KV events; sets sim_urls, metric_urls, event_flags.
start_sims() {
  local i port ev rp
  sim_urls=() metric_urls="" event_flags=()
  for i in 1 2 3 4; do
    port=$(free_port) ev=$(free_port) rp=$(free_port)
    "$bin" engine-sim --model "$model" --served-model-name "$served" --host 127.0.0.1 --port "$port" \
      --num-gpu-blocks-override "$cache_blocks" --block-size 16 --serial-prefill \
      --first-token-latency "${first_ms}ms" --prefill-token-latency "${prefill_us}us" --token-latency "${token_ms}ms" \
      --kv-events-config "{\"enable_kv_cache_events\":true,\"publisher\":\"zmq\",\"endpoint\":\"tcp://127.0.0.1:$ev\",\"replay_endpoint\":\"tcp://127.0.0.1:$rp\"}" \
      >"$log_dir/sim-$i.log" 2>&1 &
    pids+=($!)
    wait_health "engine-sim $i" "http://127.0.0.1:$port" "$!" "$log_dir/sim-$i.log"
    sim_urls+=("http://127.0.0.1:$port")
    metric_urls+="${metric_urls:+,}http://127.0.0.1:$port/metrics"
    event_flags+=(--kv-events-endpoint "http://127.0.0.1:$port=tcp://127.0.0.1:$ev,tcp://127.0.0.1:$rp")
  done
}

# run_policy NAME: fresh sims (empty caches), serve with the policy, then the benchmark.
run_policy() {
  local name=$1 port url args=()
  start_sims
  for u in "${sim_urls[@]}"; do args+=(--engine "$u"); done
  case $name in
    least-outstanding) args+=(--routing least-outstanding) ;;
    prefix) args+=(--routing prefix "${event_flags[@]}") ;;
    prefix-noevents) args+=(--routing prefix) ;;
  esac
  port=$(free_port)
  url="http://127.0.0.1:$port"
  "$bin" serve "$model" --served-model-name "$served" "${args[@]}" --host 127.0.0.1 --port "$port" \
    --reasoning-parser qwen3 >"$log_dir/serve-$name.log" 2>&1 &
  pids+=($!)
  wait_health "vrender serve ($name)" "$url" "$!" "$log_dir/serve-$name.log"
  echo "== $name: $sessions sessions x $turns turns ($first_len-token first message, $turn_len per turn," \
    "$output_len-token answers, think $think), $rate session starts/s"
  "$bin" bench serve --base-url "$url" --endpoint /v1/chat/completions --model "$served" --tokenizer "$model" \
    --dataset-name multi-turn --multi-turn-sessions "$sessions" --multi-turn-turns "$turns" \
    --multi-turn-first-len "$first_len" --multi-turn-turn-len "$turn_len" --multi-turn-system-len "$system_len" \
    --multi-turn-think-time "$think" --random-output-len "$output_len" --request-rate "$rate" --seed 0 \
    --engine-metrics-url "$metric_urls" --kv-block-size 16 --ready-check-timeout-sec 0 \
    --percentile-metrics ttft,tpot,e2el --metric-percentiles 50,99 \
    --save-result --result-dir "$result_dir" --result-filename "bench-prefix-$name.json" --disable-tqdm \
    | tee "$log_dir/bench-$name.txt"
  curl -fsS "$url/metrics" | grep '^vrender_routing' >"$log_dir/routing-$name.txt" || true
  stop_pids
}

for p in $policies; do run_policy "$p"; done

python3 - "$result_dir" $policies <<'EOF2'
import json, sys, os
d = sys.argv[1]
rows = [(p, json.load(open(os.path.join(d, f"bench-prefix-{p}.json")))) for p in sys.argv[2:]]
base = dict(rows).get("least-outstanding")
print()
print("== multi-turn prefix routing, 4 engines (same workload, same session rate)")
print(f"{'routing':<20}{'TTFT p50 ms':>12}{'TTFT p99 ms':>12}{'prefill tok':>12}{'hit rate':>10}{'of ideal':>10}{'load max/mean':>15}{'p50 vs LO':>11}")
for name, r in rows:
    speed = base["median_ttft_ms"] / r["median_ttft_ms"] if base and r["median_ttft_ms"] else float("nan")
    print(f"{name:<20}{r['median_ttft_ms']:>12.1f}{r['p99_ttft_ms']:>12.1f}{r['prefill_tokens_computed']:>12.0f}"
          f"{r['prefix_hit_rate']:>10.3f}{r['prefix_hit_rate_of_ideal']:>10.3f}{r['engine_load_max_mean']:>15.2f}{speed:>10.1f}x")
EOF2
