#!/usr/bin/env bash
# Serving benchmark: vrender in front of the simulated engine, both separate processes on loopback, the engine
# answering with zero latency, so what is measured is vrender's own cost. Starts
#   bin/vrender engine-sim  (the tokens-only engine)
#   bin/vrender serve       (render -> generate -> derender, qwen3 reasoning + hermes tool parsers)
# waits for both /health, runs `vrender bench serve` with --server-pid of the serve process (CPU time from /proc)
# and its /metrics (the latency vrender adds per token), prints vLLM's report plus
#   output tokens/s per server CPU core   (target >= 50,000)
#   added latency per token, p99           (target <= 1 ms)
# and always stops both processes. Needs `make build` and `make models` first (`make bench` does both).
#
# Environment: BIN (bin/vrender), MODEL (.cache/models/qwen3), SERVED_NAME (Qwen/Qwen3-8B), ENGINE_PORT and
# SERVE_PORT (free ports by default), NUM_PROMPTS (5000), CONCURRENCY (500), INPUT_LEN (256), OUTPUT_LEN (256),
# RESULT_DIR (.cache/bench), BENCH_ARGS (extra `vrender bench serve` flags), LOG_DIR (a temporary directory).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bin=${BIN:-bin/vrender}
model=${MODEL:-.cache/models/qwen3}
served=${SERVED_NAME:-Qwen/Qwen3-8B}
num_prompts=${NUM_PROMPTS:-5000}
concurrency=${CONCURRENCY:-500}
input_len=${INPUT_LEN:-256}
output_len=${OUTPUT_LEN:-256}
result_dir=${RESULT_DIR:-.cache/bench}

[ -x "$bin" ] || { echo "bench-serve: $bin not found; run make build" >&2; exit 1; }
[ -f "$model/tokenizer.json" ] || { echo "bench-serve: $model/tokenizer.json not found; run make models" >&2; exit 1; }

tag=bench-serve
# shellcheck source=scripts/proc.sh
. "$repo/scripts/proc.sh"
engine_port=${ENGINE_PORT:-$(free_port)}
serve_port=${SERVE_PORT:-$(free_port)}
while [ "$serve_port" = "$engine_port" ]; do serve_port=$(free_port); done

# A temporary log directory is removed after a successful run and kept (its path printed) after a failure.
keep_logs=${LOG_DIR:+yes}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vrender-bench-serve.XXXXXX")}
mkdir -p "$log_dir" "$result_dir"
engine_pid=""
serve_pid=""

# stop ends the two processes this script started (by pid), waiting for each, then tidies the logs.
stop() {
  local status=$? pid
  for pid in $serve_pid $engine_pid; do stop_pid "$pid"; done
  if [ "$status" -ne 0 ]; then
    echo "bench-serve: failed (status $status); server logs kept in $log_dir" >&2
  elif [ -z "$keep_logs" ]; then
    rm -rf "$log_dir"
  fi
}
trap stop EXIT
trap 'exit 130' INT TERM


echo "== engine-sim on 127.0.0.1:$engine_port (zero latency)"
"$bin" engine-sim --model "$model" --served-model-name "$served" --host 127.0.0.1 --port "$engine_port" \
  --first-token-latency 0 --token-latency 0 >"$log_dir/engine-sim.log" 2>&1 &
engine_pid=$!
wait_health engine-sim "http://127.0.0.1:$engine_port" "$engine_pid" "$log_dir/engine-sim.log"

echo "== vrender serve on 127.0.0.1:$serve_port -> engine http://127.0.0.1:$engine_port"
"$bin" serve "$model" --served-model-name "$served" --engine "http://127.0.0.1:$engine_port" \
  --reasoning-parser qwen3 --tool-call-parser hermes --enable-auto-tool-choice \
  --host 127.0.0.1 --port "$serve_port" >"$log_dir/serve.log" 2>&1 &
serve_pid=$!
wait_health "vrender serve" "http://127.0.0.1:$serve_port" "$serve_pid" "$log_dir/serve.log"

echo "== vrender bench serve: $num_prompts prompts, $concurrency concurrent streams, $input_len in / $output_len out tokens"
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
"$bin" bench serve \
  --base-url "http://127.0.0.1:$serve_port" --endpoint /v1/chat/completions \
  --model "$served" --tokenizer "$model" \
  --dataset-name random --random-input-len "$input_len" --random-output-len "$output_len" \
  --num-prompts "$num_prompts" --max-concurrency "$concurrency" --request-rate inf --ignore-eos --seed 0 \
  --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 \
  --server-pid "$serve_pid" --metrics-url "http://127.0.0.1:$serve_port/metrics" \
  --save-result --result-dir "$result_dir" --result-filename bench-serve-qwen3.json --disable-tqdm \
  ${BENCH_ARGS:-}
echo "== result JSON: $result_dir/bench-serve-qwen3.json"
