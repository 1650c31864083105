#!/usr/bin/env bash
# Prefix-cache-aware routing benchmark: the same multi-turn workload, at the same session rate, through one
# `vrender serve` in front of 4 engine-sims, once per routing policy:
#   least-outstanding   the engine with the fewest outstanding requests
#   prefix              the engine holding the longest prefix of the prompt's KV blocks, weighed against load,
#                       fed by the engines' KV events (ZMQ) and by predictions
#   prefix (no events)  the same with predictions only (--routing prefix without --kv-events-endpoint)
# and prints, for each, TTFT p50/p99, prefill tokens computed, the engines' prefix-cache hit rate against the
# ideal (every turn after a session's first finds its previous turn's prompt) and the load spread (max/mean
# requests per engine), read from the engines' /metrics, and the CPU per request of vrender serve and of the
# 4 engine-sims together (from /proc/PID/stat over the run).
#
# The engine model: every sim has a prefix cache of CACHE_BLOCKS blocks of 16 tokens, runs prefills one at a
# time (--serial-prefill) and takes PREFILL_US per prompt token it does not hold plus FIRST_MS, then TOKEN_MS
# per output token; so a turn whose history is cached pays for its new tokens only.
#
# With IMAGE_SIZE=WxH the conversations are image conversations: each session's first message starts with a
# picture of its own, all of that size (so every picture renders to the same run of placeholder tokens), which
# every later turn sends again; the model is the Qwen2.5-VL fixture of ../shared/multimodal. There is no shared
# system prompt (SYSTEM_LEN 0: the template's own is under one block), so a session can find cached blocks only
# where it was before; the run then also checks that sessions never shared an image's blocks (engine hits at
# most the ideal, which counts a session's own earlier turns only) and that the same picture across turns hits
# (prefix routing within 5 % of the ideal). POLICIES may add prefix-shared-image, a control where every
# session sends the same picture, whose hits beyond the ideal show the check can see shared blocks.
#
# Starts 4 engine-sims and one `vrender serve` per policy, on loopback; always stops every process it started
# (by pid). Needs `make build` and `make models` first.
#
# Environment: BIN (bin/vrender), MODEL (.cache/models/qwen3), SERVED_NAME (Qwen/Qwen3-8B), SESSIONS (32),
# TURNS (8), FIRST_LEN (1024), TURN_LEN (128), SYSTEM_LEN (256), OUTPUT_LEN (32), THINK (500ms), RATE (8 session
# starts/s), PREFILL_US (100), FIRST_MS (5), TOKEN_MS (10), CACHE_BLOCKS (4096), RESULT_DIR (.cache/bench),
# LOG_DIR (a temporary directory, kept on failure), POLICIES ("least-outstanding prefix prefix-noevents"),
# IMAGE_SIZE (none; with it MODEL defaults to ../shared/multimodal/models/qwen2_5_vl, SERVED_NAME to
# Qwen/Qwen2.5-VL-7B-Instruct, SYSTEM_LEN to 0 and FIRST_LEN to 512), ENGINE_MM_CACHE_GB (4 with IMAGE_SIZE: the
# sims' --mm-processor-cache-gb, given to serve as --engine-mm-cache-gb, so a picture an engine holds goes to it
# as a null kwargs item, as vLLM's front end sends it; 0 sends every picture's data each turn).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bin=${BIN:-bin/vrender}
image_size=${IMAGE_SIZE:-}
if [ -n "$image_size" ]; then
  model=${MODEL:-../shared/multimodal/models/qwen2_5_vl}
  served=${SERVED_NAME:-Qwen/Qwen2.5-VL-7B-Instruct}
  system_len=${SYSTEM_LEN:-0}
  first_len=${FIRST_LEN:-512}
  mm_cache_gb=${ENGINE_MM_CACHE_GB:-4}
  kind=images serve_flags=(--engine-mm-cache-gb "$mm_cache_gb") image_flags=(--multi-turn-image-size "$image_size")
else
  model=${MODEL:-.cache/models/qwen3}
  served=${SERVED_NAME:-Qwen/Qwen3-8B}
  system_len=${SYSTEM_LEN:-256}
  first_len=${FIRST_LEN:-1024}
  mm_cache_gb=${ENGINE_MM_CACHE_GB:-4}
  kind=text serve_flags=(--reasoning-parser qwen3) image_flags=()
fi
sessions=${SESSIONS:-32}
turns=${TURNS:-8}
turn_len=${TURN_LEN:-128}
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
if [ -n "$image_size" ] && [ -z "${MODEL:-}" ] && [ ! -d "$model" ]; then
  # The image model is a fixture of ../shared, beside the repository (as for the tests: absent, skip loudly;
  # under CI=true, fail).
  echo "bench-prefix: SKIPPED the image conversations: $model not found (../shared/multimodal)" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi
[ -f "$model/tokenizer.json" ] || { echo "bench-prefix: $model/tokenizer.json not found; run make models" >&2; exit 1; }
[ -z "$image_size" ] || [ -f "$model/preprocessor_config.json" ] ||
  { echo "bench-prefix: IMAGE_SIZE needs an image model; $model has no preprocessor_config.json" >&2; exit 1; }

keep_logs=${LOG_DIR:+yes}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vrender-bench-prefix.XXXXXX")}
mkdir -p "$log_dir" "$result_dir"
pids=()

tag=bench-prefix
result_tag=bench-prefix${image_size:+-images}
# shellcheck source=scripts/proc.sh
. "$repo/scripts/proc.sh"

# cpu_ticks PID...: user+system CPU of the processes so far, in USER_HZ ticks (fields 14 and 15 of
# /proc/PID/stat, counted after the command name's last ')').
cpu_ticks() {
  local pid total=0 rest
  for pid in "$@"; do
    rest=$(sed 's/.*) //' "/proc/$pid/stat")
    total=$(( total + $(awk '{print $12 + $13}' <<<"$rest") ))
  done
  echo "$total"
}

trap cleanup_on_exit EXIT
trap 'exit 130' INT TERM

# start_sims: 4 engine-sims with prefix caches publishing KV events; sets sim_urls, metric_urls, event_flags.
start_sims() {
  local i port ev rp
  sim_urls=() metric_urls="" event_flags=() sim_pids=()
  for i in 1 2 3 4; do
    port=$(free_port) ev=$(free_port) rp=$(free_port)
    "$bin" engine-sim --model "$model" --served-model-name "$served" --host 127.0.0.1 --port "$port" \
      --num-gpu-blocks-override "$cache_blocks" --block-size 16 --serial-prefill --mm-processor-cache-gb "$mm_cache_gb" \
      --first-token-latency "${first_ms}ms" --prefill-token-latency "${prefill_us}us" --token-latency "${token_ms}ms" \
      --kv-events-config "{\"enable_kv_cache_events\":true,\"publisher\":\"zmq\",\"endpoint\":\"tcp://127.0.0.1:$ev\",\"replay_endpoint\":\"tcp://127.0.0.1:$rp\"}" \
      >"$log_dir/sim-$i.log" 2>&1 &
    pids+=($!) sim_pids+=($!)
    wait_health "engine-sim $i" "http://127.0.0.1:$port" "$!" "$log_dir/sim-$i.log"
    sim_urls+=("http://127.0.0.1:$port")
    metric_urls+="${metric_urls:+,}http://127.0.0.1:$port/metrics"
    event_flags+=(--kv-events-endpoint "http://127.0.0.1:$port=tcp://127.0.0.1:$ev,tcp://127.0.0.1:$rp")
  done
}

# run_policy NAME: fresh sims (empty caches), serve with the policy, then the benchmark.
run_policy() {
  local name=$1 port url args=() dataset_flags=("${image_flags[@]}")
  start_sims
  for u in "${sim_urls[@]}"; do args+=(--engine "$u"); done
  case $name in
    least-outstanding) args+=(--routing least-outstanding) ;;
    prefix) args+=(--routing prefix "${event_flags[@]}") ;;
    prefix-noevents) args+=(--routing prefix) ;;
    prefix-shared-image)
      [ -n "$image_size" ] || { echo "bench-prefix: prefix-shared-image needs IMAGE_SIZE" >&2; exit 1; }
      args+=(--routing prefix "${event_flags[@]}") dataset_flags+=(--multi-turn-shared-image) ;;
    *) echo "bench-prefix: unknown policy $name" >&2; exit 1 ;;
  esac
  port=$(free_port)
  url="http://127.0.0.1:$port"
  "$bin" serve "$model" --served-model-name "$served" "${args[@]}" --host 127.0.0.1 --port "$port" \
    "${serve_flags[@]}" >"$log_dir/serve-$name.log" 2>&1 &
  pids+=($!)
  serve_pid=$!
  wait_health "vrender serve ($name)" "$url" "$!" "$log_dir/serve-$name.log"
  local serve_cpu0 sims_cpu0
  serve_cpu0=$(cpu_ticks "$serve_pid") sims_cpu0=$(cpu_ticks "${sim_pids[@]}")
  echo "== $name: $sessions sessions x $turns turns ($first_len-token first message${image_size:+ after a $image_size picture}," \
    "$turn_len per turn, $output_len-token answers, think $think), $rate session starts/s"
  "$bin" bench serve --base-url "$url" --endpoint /v1/chat/completions --model "$served" --tokenizer "$model" \
    --dataset-name multi-turn --multi-turn-sessions "$sessions" --multi-turn-turns "$turns" \
    --multi-turn-first-len "$first_len" --multi-turn-turn-len "$turn_len" --multi-turn-system-len "$system_len" \
    --multi-turn-think-time "$think" "${dataset_flags[@]}" --random-output-len "$output_len" --request-rate "$rate" --seed 0 \
    --engine-metrics-url "$metric_urls" --kv-block-size 16 --ready-check-timeout-sec 0 \
    --percentile-metrics ttft,tpot,e2el --metric-percentiles 50,99 \
    --save-result --result-dir "$result_dir" --result-filename "$result_tag-$name.json" --disable-tqdm \
    | tee "$log_dir/bench-$name.txt"
  # CPU per request of vrender serve and of the 4 engine-sims together, over the run (USER_HZ ticks: 10 ms).
  echo "{\"serve_cpu_s\": $(( $(cpu_ticks "$serve_pid") - serve_cpu0 ))e-2," \
    "\"sims_cpu_s\": $(( $(cpu_ticks "${sim_pids[@]}") - sims_cpu0 ))e-2, \"requests\": $((sessions * turns))}" \
    >"$result_dir/$result_tag-$name.cpu.json"
  curl -fsS "$url/metrics" | grep '^vrender_routing' >"$log_dir/routing-$name.txt" || true
  stop_pids
}

for p in $policies; do run_policy "$p"; done

python3 - "$result_dir" "$result_tag" "$kind" $policies <<'EOF2'
import json, sys, os
d, tag, kind = sys.argv[1:4]
rows = [(p, json.load(open(os.path.join(d, f"{tag}-{p}.json")))) for p in sys.argv[4:]]
base = dict(rows).get("least-outstanding")
print()
print(f"== multi-turn prefix routing, 4 engines ({kind} conversations; same workload, same session rate)")
print(f"{'routing':<20}{'TTFT p50 ms':>12}{'TTFT p99 ms':>12}{'prefill tok':>12}{'hit rate':>10}{'of ideal':>10}{'load max/mean':>15}{'p50 vs LO':>11}"
      f"{'serve CPU ms/req':>18}{'sims CPU ms/req':>17}")
for name, r in rows:
    speed = base["median_ttft_ms"] / r["median_ttft_ms"] if base and r["median_ttft_ms"] else float("nan")
    cpu = json.load(open(os.path.join(d, f"{tag}-{name}.cpu.json")))
    print(f"{name:<20}{r['median_ttft_ms']:>12.1f}{r['p99_ttft_ms']:>12.1f}{r['prefill_tokens_computed']:>12.0f}"
          f"{r['prefix_hit_rate']:>10.3f}{r['prefix_hit_rate_of_ideal']:>10.3f}{r['engine_load_max_mean']:>15.2f}{speed:>10.1f}x"
          f"{1000 * cpu['serve_cpu_s'] / cpu['requests']:>18.1f}{1000 * cpu['sims_cpu_s'] / cpu['requests']:>17.1f}")
if kind != "images":
    sys.exit(0)
# Image checks. A session's hits can come only from its own earlier turns (no shared text block precedes the
# picture), so hits beyond the ideal are blocks shared across sessions; the control shares one picture.
failed = False
print()
for name, r in rows:
    cached, ideal = r["prefix_cached_tokens"], round(r["prefix_ideal_hit_rate"] * r["prefix_prompt_tokens"])
    if name == "prefix-shared-image":
        ok = cached > ideal
        print(f"{name}: {cached:.0f} cached tokens, ideal {ideal:.0f}: the control "
              + ("shares blocks across sessions, as it must (the check sees sharing)" if ok else "shows no sharing: the check is blind"))
    else:
        ok = cached <= ideal
        print(f"{name}: {cached:.0f} cached tokens <= ideal {ideal:.0f} (no blocks shared across sessions' different pictures): "
              + ("ok" if ok else "FAILED"))
        if name == "prefix":
            hit = cached >= 0.95 * ideal
            print(f"{name}: the same picture across turns hits: {cached / ideal:.3f} of the ideal (>= 0.95): "
                  + ("ok" if hit else "FAILED"))
            ok = ok and hit
    failed = failed or not ok
sys.exit(1 if failed else 0)
EOF2
