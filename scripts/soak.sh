#!/usr/bin/env bash
# Load and soak: `vrender bench serve` holding CONCURRENCY (1,000) streams open for about DURATION (60 s) against
# engine-sim, with the qwen3 reasoning and hermes tool parsers on, in two set-ups (separate processes on loopback):
#   single  one `vrender serve` -> engine-sim
#   lb      haproxy (round-robin, no affinity) -> three `vrender serve` replicas sharing a --state-key -> one engine-sim
# Every serve process is sampled before the run (after a warm-up), every SAMPLE_EVERY seconds during it, right
# after it and again after SETTLE seconds: VmRSS and Threads from /proc/PID/status, go_goroutines from its own
# /metrics. The script fails when any request failed, or when a replica's goroutines after the settle are more
# than GOROUTINE_SLACK above its pre-run baseline (a leak); RSS is reported against the baseline, not judged:
# vrender serve returns freed heap to the OS once idle (checked every 10 s), so RSS settles within the 30 s settle.
#
# Pace: the engine emits a token every TOKEN_LATENCY (default 50 ms, 20 tokens/s per stream, a real decode's
# pace) rather than as fast as it can. At zero latency a 200-token stream ends within milliseconds, so 1,000
# "concurrent" streams are never open together and the run measures throughput (scripts/bench-serve.sh does
# that); at a decode's pace every stream stays open about OUTPUT_LEN x TOKEN_LATENCY (10 s), so 1,000 are in
# flight for the whole run: connections, goroutines and parser state held at once, which is what a soak is for.
# `vrender bench serve` has no duration flag, so NUM_PROMPTS is sized to fill DURATION at that pace.
#
# Environment: BIN (bin/vrender), MODEL (.cache/models/qwen3), MODES ("single lb"), CONCURRENCY (1000),
# DURATION (60), TOKEN_LATENCY (50ms), INPUT_LEN (128), OUTPUT_LEN (200), SETTLE (30), SAMPLE_EVERY (5),
# GOROUTINE_SLACK (50), RESULT_DIR (.cache/soak), HAPROXY (haproxy on PATH or /usr/sbin/haproxy),
# LOG_DIR (a temporary directory, kept on failure).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bin=${BIN:-bin/vrender}
model=${MODEL:-.cache/models/qwen3}
served=Qwen/Qwen3-8B
modes=${MODES:-single lb}
concurrency=${CONCURRENCY:-1000}
duration=${DURATION:-60}
token_latency=${TOKEN_LATENCY:-50ms}
input_len=${INPUT_LEN:-128}
output_len=${OUTPUT_LEN:-200}
settle=${SETTLE:-30}
sample_every=${SAMPLE_EVERY:-5}
goroutine_slack=${GOROUTINE_SLACK:-50}
result_dir=${RESULT_DIR:-.cache/soak}
state_key=5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e

[ -x "$bin" ] || { echo "soak: $bin not found; run make build" >&2; exit 1; }
[ -f "$model/tokenizer.json" ] || { echo "soak: $model/tokenizer.json not found; run make models" >&2; exit 1; }
haproxy=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}
case " $modes " in *" lb "*) [ -x "$haproxy" ] || { echo "soak: haproxy not found (apt-get install -y haproxy)" >&2; exit 1; } ;; esac

# Streams last about OUTPUT_LEN x TOKEN_LATENCY; enough prompts for DURATION seconds of them.
latency_ms=$(python3 -c "import re,sys; v,u=re.fullmatch(r'([0-9.]+)(ms|s)', sys.argv[1]).groups(); print(float(v)*(1000 if u=='s' else 1))" "$token_latency")
num_prompts=$(python3 -c "import math,sys; c,d,o,l=map(float,sys.argv[1:]); print(int(c*max(1,math.ceil(d*1000/(o*l)))))" \
  "$concurrency" "$duration" "$output_len" "$latency_ms")

keep_logs=${LOG_DIR:+yes}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vrender-soak.XXXXXX")}
mkdir -p "$log_dir" "$result_dir"
pids=()
sampler_pid=""

tag=soak
# shellcheck source=scripts/proc.sh
. "$repo/scripts/proc.sh"


# stop_all ends every process this script started (by pid) and waits for it.
stop_all() {
  local pid
  [ -z "$sampler_pid" ] || { kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""; }
  for pid in "${pids[@]}"; do stop_pid "$pid"; done
  pids=()
}
on_exit() {
  local status=$?
  stop_all
  if [ "$status" -ne 0 ]; then
    echo "soak: failed (status $status); logs kept in $log_dir" >&2
  elif [ -z "$keep_logs" ]; then
    rm -rf "$log_dir"
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM


# sample PHASE PID PORT...: one "phase pid rss_kib threads goroutines" line per serve process.
sample() {
  local phase=$1; shift
  local pid port rss threads gor
  while [ $# -gt 0 ]; do
    pid=$1 port=$2; shift 2
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "?")
    threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "?")
    gor=$(curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" 2>/dev/null | awk '$1 == "go_goroutines" {print $2}' || true)
    echo "$phase $pid ${rss:-?} ${threads:-?} ${gor:-?}"
  done
}

# run_mode MODE: start the set-up, warm up, sample, load, sample, settle, sample, judge.
run_mode() {
  local mode=$1 replicas=1 target i engine_port lb_port
  [ "$mode" = lb ] && replicas=3
  local samples=$log_dir/$mode-samples.txt serve_args=() metrics_urls=() pid_port=()
  : >"$samples"

  engine_port=$(free_port)
  "$bin" engine-sim --model "$model" --served-model-name "$served" --host 127.0.0.1 --port "$engine_port" \
    --first-token-latency 0 --token-latency "$token_latency" >"$log_dir/$mode-engine-sim.log" 2>&1 &
  pids+=($!)
  wait_health engine-sim "http://127.0.0.1:$engine_port" "$!" "$log_dir/$mode-engine-sim.log"

  for i in $(seq "$replicas"); do
    local port
    port=$(free_port)
    "$bin" serve "$model" --served-model-name "$served" --engine "http://127.0.0.1:$engine_port" \
      --reasoning-parser qwen3 --tool-call-parser hermes --enable-auto-tool-choice --state-key "$state_key" \
      --host 127.0.0.1 --port "$port" >"$log_dir/$mode-serve$i.log" 2>&1 &
    pids+=($!)
    wait_health "vrender serve $i" "http://127.0.0.1:$port" "$!" "$log_dir/$mode-serve$i.log"
    pid_port+=("$!" "$port")
    serve_args+=(--server-pid "$!")
    metrics_urls+=("http://127.0.0.1:$port/metrics")
  done
  target="http://127.0.0.1:${pid_port[1]}"

  if [ "$mode" = lb ]; then
    lb_port=$(free_port)
    {
      printf 'global\n    maxconn %d\n\ndefaults\n    mode http\n    option redispatch\n    retries 3\n' $((4 * concurrency + 100))
      printf '    timeout connect 1s\n    timeout client 120s\n    timeout server 120s\n\n'
      printf 'frontend vrender\n    bind 127.0.0.1:%d\n    maxconn %d\n    default_backend replicas\n\n' "$lb_port" $((2 * concurrency + 100))
      printf 'backend replicas\n    balance roundrobin\n    option httpchk GET /health\n    http-check expect status 200\n'
      printf '    default-server inter 1s fall 3 rise 2\n'
      for ((i = 0; i < replicas; i++)); do
        printf '    server r%d 127.0.0.1:%s check\n' "$i" "${pid_port[$((2 * i + 1))]}"
      done
    } >"$log_dir/haproxy.cfg"
    "$haproxy" -c -f "$log_dir/haproxy.cfg" >/dev/null
    "$haproxy" -db -f "$log_dir/haproxy.cfg" >"$log_dir/haproxy.log" 2>&1 &
    pids+=($!)
    wait_health haproxy "http://127.0.0.1:$lb_port" "$!" "$log_dir/haproxy.log"
    target="http://127.0.0.1:$lb_port"
  fi

  echo "== soak $mode: $replicas serve replica(s), engine-sim at $token_latency a token; warm-up"
  "$bin" bench serve --base-url "$target" --model "$served" --tokenizer "$model" --dataset-name random \
    --random-input-len "$input_len" --random-output-len 16 --num-prompts 50 --max-concurrency 50 --seed 1 \
    --metrics-url none --disable-tqdm >"$log_dir/$mode-warmup.log" 2>&1
  sleep 2
  sample before "${pid_port[@]}" | tee -a "$samples"

  (while sleep "$sample_every"; do sample during "${pid_port[@]}" >>"$samples"; done) &
  sampler_pid=$!
  local metrics_arg
  metrics_arg=$(IFS=,; echo "${metrics_urls[*]}")
  echo "== soak $mode: $num_prompts prompts, $concurrency concurrent streams, $input_len in / $output_len out tokens"
  "$bin" bench serve --base-url "$target" --endpoint /v1/chat/completions --model "$served" --tokenizer "$model" \
    --dataset-name random --random-input-len "$input_len" --random-output-len "$output_len" \
    --num-prompts "$num_prompts" --max-concurrency "$concurrency" --request-rate inf --ignore-eos --seed 0 \
    --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 \
    "${serve_args[@]}" --metrics-url "$metrics_arg" --disable-tqdm \
    --save-result --result-dir "$result_dir" --result-filename "soak-$mode.json" | tee "$log_dir/$mode-bench.log"
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
  sample after "${pid_port[@]}" | tee -a "$samples"
  sleep "$settle"
  sample "settled+${settle}s" "${pid_port[@]}" | tee -a "$samples"
  cp "$samples" "$result_dir/soak-$mode-samples.txt"

  python3 - "$result_dir/soak-$mode.json" "$samples" "$goroutine_slack" "$mode" <<'EOF'
import json, sys
res, samples, slack, mode = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [l.split() for l in open(samples) if l.strip()]
by = {}
for phase, pid, rss, threads, gor in rows:
    by.setdefault(pid, {}).setdefault(phase.split("+")[0], []).append((rss, threads, gor))
ok = True
failed = res.get("failed", 0)
print(f"soak {mode}: completed {res['completed']} of {res['num_prompts']}, failed {failed}, "
      f"{res['duration']:.1f} s, {res['output_throughput']:.0f} output tokens/s")
print(f"  p99 TTFT {res['p99_ttft_ms']:.1f} ms, p99 ITL {res['p99_itl_ms']:.1f} ms, p99 E2EL {res['p99_e2el_ms']:.0f} ms, "
      f"added latency p99 {res.get('added_latency_p99_ms', float('nan')):.3f} ms over {res.get('added_latency_events', 0):.0f} events")
if failed or res["completed"] != res["num_prompts"]:
    ok = False
    print(f"  FAIL: {failed} request(s) failed: {res.get('errors', [])[:3]}")
num = lambda v: int(float(v)) if v not in ("?", "") else None
for pid, ph in by.items():
    b, a, s = ph["before"][0], ph["after"][0], ph["settled"][0]
    peak = max(ph.get("during", [b]), key=lambda r: num(r[0]) or 0)
    peak_g = max((num(r[2]) or 0) for r in ph.get("during", [b]))
    print(f"  pid {pid}: RSS MiB before {num(b[0])/1024:.0f}, peak {num(peak[0])/1024:.0f}, after {num(a[0])/1024:.0f}, "
          f"settled {num(s[0])/1024:.0f}; goroutines before {b[2]}, peak {peak_g}, after {a[2]}, settled {s[2]}; "
          f"threads before {b[1]}, settled {s[1]}")
    if num(s[2]) is None or num(b[2]) is None:
        ok = False
        print("  FAIL: go_goroutines missing from /metrics")
    elif num(s[2]) > num(b[2]) + slack:
        ok = False
        print(f"  FAIL: goroutines settled at {s[2]}, more than {slack} above the baseline {b[2]}")
sys.exit(0 if ok else 1)
EOF
  stop_all
}

echo "soak: modes: $modes; results in $result_dir, logs in $log_dir"
for m in $modes; do
  case $m in single | lb) run_mode "$m" ;; *) echo "soak: unknown mode $m (want single or lb)" >&2; exit 2 ;; esac
done
echo "soak: passed"
