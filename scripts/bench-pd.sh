#!/usr/bin/env bash
# Prefill/decode disaggregation benchmark: the same Poisson load, at the same request rate, against
#   collocated  vrender serve --engine E1 --engine E2                (two engines doing prefill and decode)
#   P/D         vrender serve --prefill-engine P --decode-engine D   (one producer, one consumer)
# both on two engine-sims, and prints the goodput of each under vLLM's SLOs (TTFT <= 2000 ms, TPOT <= 30 ms).
#
# The engine model (what makes the comparison mean something): every sim runs with --serial-prefill, so a
# prefill (--first-token-latency, PREFILL_MS = 200 ms, a few thousand prompt tokens on one GPU) occupies the
# engine alone and stalls the tokens of every request it is decoding, as a batch-at-a-time engine without
# chunked prefill does; a decode step takes TOKEN_MS = 20 ms. On a collocated engine each arriving request's
# prefill interrupts the others' decoding, so TPOT grows with the load (about TOKEN_MS / (1 - load share of
# prefill)); the P/D consumer never prefills (a transferred prompt's first token costs KV_MS = 20 ms), so its
# TPOT stays at TOKEN_MS while the producer queues prefills one at a time, which costs TTFT instead. At
# RATE = 4 req/s the single producer is 80 % busy (TTFT well under 2 s) while each collocated engine spends
# 40 % of its time in prefills (TPOT around 33 ms, so many requests miss the 30 ms SLO). Two engines either way.
#
# Starts 4 engine-sims and 2 `vrender serve` one configuration at a time, on loopback; always stops every
# process it started (by pid). Needs `make build` and `make models` first.
#
# Environment: BIN (bin/vrender), MODEL (.cache/models/qwen3), SERVED_NAME (Qwen/Qwen3-8B), RATE (4),
# NUM_PROMPTS (160), INPUT_LEN (256), OUTPUT_LEN (64), PREFILL_MS (200), TOKEN_MS (20), KV_MS (20),
# RESULT_DIR (.cache/bench), LOG_DIR (a temporary directory, kept on failure).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bin=${BIN:-bin/vrender}
model=${MODEL:-.cache/models/qwen3}
served=${SERVED_NAME:-Qwen/Qwen3-8B}
rate=${RATE:-4}
num_prompts=${NUM_PROMPTS:-160}
input_len=${INPUT_LEN:-256}
output_len=${OUTPUT_LEN:-64}
prefill_ms=${PREFILL_MS:-200}
token_ms=${TOKEN_MS:-20}
kv_ms=${KV_MS:-20}
result_dir=${RESULT_DIR:-.cache/bench}

[ -x "$bin" ] || { echo "bench-pd: $bin not found; run make build" >&2; exit 1; }
[ -f "$model/tokenizer.json" ] || { echo "bench-pd: $model/tokenizer.json not found; run make models" >&2; exit 1; }


keep_logs=${LOG_DIR:+yes}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vrender-bench-pd.XXXXXX")}
mkdir -p "$log_dir" "$result_dir"
pids=()

tag=bench-pd
# shellcheck source=scripts/proc.sh
. "$repo/scripts/proc.sh"

trap cleanup_on_exit EXIT
trap 'exit 130' INT TERM


# start_sim NAME ROLE: an engine-sim with the shared engine model; sets sim_url.
start_sim() {
  local name=$1 role=$2 port
  port=$(free_port)
  "$bin" engine-sim --model "$model" --served-model-name "$served" --host 127.0.0.1 --port "$port" \
    --kv-role "$role" --serial-prefill --first-token-latency "${prefill_ms}ms" --token-latency "${token_ms}ms" \
    --kv-transfer-latency "${kv_ms}ms" >"$log_dir/$name.log" 2>&1 &
  pids+=($!)
  sim_url="http://127.0.0.1:$port"
  wait_health "$name" "$sim_url" "$!" "$log_dir/$name.log"
}

# run_config NAME SERVE_ARGS...: serve in front of the engines, then the benchmark.
run_config() {
  local name=$1 port url
  shift
  port=$(free_port)
  url="http://127.0.0.1:$port"
  "$bin" serve "$model" --served-model-name "$served" "$@" --host 127.0.0.1 --port "$port" \
    --reasoning-parser qwen3 >"$log_dir/serve-$name.log" 2>&1 &
  pids+=($!)
  wait_health "vrender serve ($name)" "$url" "$!" "$log_dir/serve-$name.log"
  echo "== $name: $num_prompts requests at $rate req/s (Poisson), $input_len in / $output_len out tokens"
  "$bin" bench serve --base-url "$url" --endpoint /v1/chat/completions --model "$served" --tokenizer "$model" \
    --dataset-name random --random-input-len "$input_len" --random-output-len "$output_len" \
    --num-prompts "$num_prompts" --request-rate "$rate" --ignore-eos --seed 0 \
    --goodput ttft:2000 tpot:30 --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 \
    --save-result --result-dir "$result_dir" --result-filename "bench-pd-$name.json" --disable-tqdm
  stop_pids
}

echo "== engine model: prefill ${prefill_ms} ms (serial, stalls decoding), ${token_ms} ms per token, KV transfer ${kv_ms} ms"
start_sim collocated-1 both; e1=$sim_url
start_sim collocated-2 both; e2=$sim_url
run_config collocated --engine "$e1" --engine "$e2"

start_sim producer producer; p=$sim_url
start_sim consumer consumer; d=$sim_url
run_config pd --prefill-engine "$p" --decode-engine "$d"

python3 - "$result_dir/bench-pd-collocated.json" "$result_dir/bench-pd-pd.json" "$rate" <<'EOF'
import json, sys
rows = [("collocated (2 engines)", json.load(open(sys.argv[1]))), ("P/D (1 prefill + 1 decode)", json.load(open(sys.argv[2])))]
print()
print(f"== goodput at {sys.argv[3]} req/s, SLOs TTFT <= 2000 ms and TPOT <= 30 ms")
print(f"{'pool':<28}{'goodput req/s':>14}{'throughput':>12}{'failed':>8}{'TTFT p50/p99 ms':>20}{'TPOT p50/p99 ms':>18}")
for name, r in rows:
    print(f"{name:<28}{r['request_goodput']:>14.2f}{r['request_throughput']:>12.2f}{r['failed']:>8}"
          f"{r['median_ttft_ms']:>10.0f}/{r['p99_ttft_ms']:<9.0f}{r['median_tpot_ms']:>8.1f}/{r['p99_tpot_ms']:<9.1f}")
EOF
