#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a short time each.
#
# Targets are found by scanning *_test.go files for `func FuzzXxx(`; each runs on its own because
# a fuzzing run takes one target. Each package's instrumented test binary is built once (`go test -c -fuzz=.`)
# and run per target, as `go test -fuzz` runs it, instead of being linked again for every target (about 2 s
# each on a loaded 2-core machine). Any failing target fails the script (after
# all have run, so one report lists every failure). Crashers that the fuzzer finds are written by Go to
# <pkg>/testdata/fuzz/FuzzXxx/ — commit them as regression seeds once fixed.
#
# Environment: FUZZTIME per target (default 5s), FUZZ_PKGS to restrict the search to some package dirs,
# FUZZ_MATCH an extended regexp the "dir name" of a target must match (e.g. 'parsers|FuzzCheckpoint'),
# FUZZ_SHARD=i/n to run only every n-th target starting at the i-th (1-based; two shards in parallel halve the
# wall time on a 2-core machine), FUZZ_WORKERS fuzzing processes per target (go test -parallel; default GOMAXPROCS),
# FUZZ_SUMMARY a file to append one "pkg name execs status" line per target to (for docs/reliability.md).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
fuzztime=${FUZZTIME:-5s}
go=${GO:-go}

# FUZZ_PKGS is a space-separated list of directories.
read -r -a roots <<<"${FUZZ_PKGS:-.}"
# "dir<TAB>FuzzName" lines, sorted for a stable order. The vendored/cached trees are not ours.
mapfile -t targets < <(
  grep -rIo --include='*_test.go' --exclude-dir=.cache --exclude-dir=.git --exclude-dir=testdata \
    -E '^func Fuzz[A-Za-z0-9_]*\(' "${roots[@]}" |
    sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1\t\2#' |
    sort -u
)

if [ -n "${FUZZ_MATCH:-}" ]; then
  mapfile -t targets < <(printf '%s\n' "${targets[@]}" | { grep -E -- "$FUZZ_MATCH" || true; })
  [ -n "${targets[0]:-}" ] || targets=()
fi
if [ -n "${FUZZ_SHARD:-}" ]; then
  shard_i=${FUZZ_SHARD%/*}
  shard_n=${FUZZ_SHARD#*/}
  mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk -v i="$shard_i" -v n="$shard_n" 'NF && (NR - i) % n == 0')
  [ -n "${targets[0]:-}" ] || targets=()
fi
workers=()
[ -z "${FUZZ_WORKERS:-}" ] || workers=(-test.parallel="$FUZZ_WORKERS")
summary=${FUZZ_SUMMARY:-/dev/null}

# execs_of prints the execution count of the last progress line of a fuzz log ("fuzz: elapsed: 1m0s, execs:
# 123456 (2057/sec), ..."), or "?" when the run never got that far.
execs_of() { sed -nE 's/^fuzz: elapsed: .*, execs: ([0-9]+) .*/\1/p' "$1" | tail -n 1 | grep . || echo "?"; }

if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found"
  exit 0
fi

echo "fuzz: ${#targets[@]} target(s), $fuzztime each"
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
# Where `go test -fuzz` keeps the corpus a run grows: $GOCACHE/fuzz/<import path>.
fuzzcache=$("$go" env GOCACHE)/fuzz
failed=()
flaked=()
built_dir=
for t in "${targets[@]}"; do
  dir=${t%%$'\t'*}
  name=${t##*$'\t'}
  pkg=./${dir#./}
  corpus=$dir/testdata/fuzz/$name
  before=$(find "$corpus" -type f 2>/dev/null | wc -l || true)
  log=$(mktemp)
  if [ "$dir" != "$built_dir" ]; then
    built_dir=$dir
    bin=$bindir/pkg.test
    rm -f "$bin"
    importpath=$("$go" list -f '{{.ImportPath}}' "$pkg")
    "$go" test -c -fuzz=. -o "$bin" "$pkg" >"$bindir/build.log" 2>&1 || true
  fi
  if [ ! -x "$bin" ]; then
    cat "$bindir/build.log"
    echo "fuzz: FAIL $pkg $name (the package's test binary did not build)"
    failed+=("$pkg $name")
    echo "$pkg $name ? FAILED" >>"$summary"
    rm -f "$log"
    continue
  fi
  # The log is shown only for a real failure: the coordinator race below prints go test's FAIL lines
  # too, and a passing run must not put FAIL into a CI log. The binary runs in the package directory, as go
  # test runs it, so a failing input lands in the package's testdata/fuzz.
  if (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$fuzztime" \
    -test.fuzzcachedir="$fuzzcache/$importpath" "${workers[@]}") >"$log" 2>&1; then
    echo "fuzz: ok   $pkg $name ($(execs_of "$log") execs)"
    echo "$pkg $name $(execs_of "$log") ok" >>"$summary"
    rm -f "$log"
    continue
  fi
  after=$(find "$corpus" -type f 2>/dev/null | wc -l || true)
  # Go 1.26's fuzz coordinator can report a bare "context deadline exceeded" when -fuzztime expires
  # while a worker is mid-call on a loaded machine (golang/go#75804, fixed in Go 1.27). That is no
  # finding: a real one writes a reproducer into the corpus. Count it as a flake and say so.
  if [ "$after" -eq "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
    ! grep -qE '^\s+(panic|--- FAIL: .*/)|Failing input written' "$log"; then
    echo "fuzz: ok   $pkg $name ($(execs_of "$log") execs; ended on Go's fuzz-coordinator deadline race, golang/go#75804: no failing input, log not shown)"
    flaked+=("$pkg $name")
    echo "$pkg $name $(execs_of "$log") ok-deadline-race" >>"$summary"
  else
    cat "$log"
    echo "fuzz: FAIL $pkg $name"
    failed+=("$pkg $name")
    echo "$pkg $name $(execs_of "$log") FAILED" >>"$summary"
  fi
  rm -f "$log"
done

passed=$((${#targets[@]} - ${#failed[@]}))
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${passed} passed, ${#failed[@]} failed"
  echo "fuzz: FAILED:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
if [ ${#flaked[@]} -gt 0 ]; then
  echo "fuzz: ${#flaked[@]} target(s) ended on the Go coordinator's deadline race (golang/go#75804), counted as passed:"
  printf '  %s\n' "${flaked[@]}"
fi
echo "fuzz: ${passed} passed, 0 failed"
