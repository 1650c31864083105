#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a short time each.
#
# Targets are found by scanning *_test.go files for `func FuzzXxx(`; each runs on its own because
# `go test -fuzz` accepts one target per package per invocation. Any failing target fails the script (after
# all have run, so one report lists every failure). Crashers that the fuzzer finds are written by Go to
# <pkg>/testdata/fuzz/FuzzXxx/ — commit them as regression seeds once fixed.
#
# Environment: FUZZTIME per target (default 5s), FUZZ_PKGS to restrict the search to some package dirs.
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

if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found"
  exit 0
fi

echo "fuzz: ${#targets[@]} target(s), $fuzztime each"
failed=()
for t in "${targets[@]}"; do
  dir=${t%%$'\t'*}
  name=${t##*$'\t'}
  pkg=./${dir#./}
  echo "fuzz: $pkg $name"
  if ! "$go" test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg"; then
    failed+=("$pkg $name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} target(s) passed"
