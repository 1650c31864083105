# proc.sh: process helpers the bench and soak scripts share. Source it after
# setting `tag` (the prefix of its messages).

# free_port asks the kernel for an unused loopback port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# stop_pid PID: SIGTERM, up to 5 s to exit, then SIGKILL; reaps it.
stop_pid() {
  local pid=$1
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# wait_health NAME URL PID LOG polls URL/health until it answers 200, the
# process dies, or 60 s pass; on failure it shows the end of LOG.
wait_health() {
  local name=$1 url=$2 pid=$3 log=$4
  for _ in $(seq 600); do
    if curl -fsS -o /dev/null --max-time 1 "$url/health" 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$tag: $name exited before becoming healthy; its log:" >&2; tail -n 40 "$log" >&2; return 1
    fi
    sleep 0.1
  done
  echo "$tag: $name not healthy at $url after 60 s; its log:" >&2; tail -n 40 "$log" >&2
  return 1
}

# stop_pids ends the processes in the array pids (by pid), waiting for each, and empties it.
stop_pids() {
  local pid
  for pid in "${pids[@]}"; do stop_pid "$pid"; done
  pids=()
}

# cleanup_on_exit is an EXIT trap for a script with pids, log_dir and keep_logs: it stops every process the
# script started and removes log_dir unless the script failed or LOG_DIR named it.
cleanup_on_exit() {
  local status=$?
  stop_pids
  if [ "$status" -ne 0 ]; then
    echo "$tag: failed (status $status); logs kept in $log_dir" >&2
  elif [ -z "$keep_logs" ]; then
    rm -rf "$log_dir"
  fi
}
