#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The long fuzzing run (issue 6): every libFuzzer target of a FERRY_FUZZ
# build for SECONDS each, JOBS targets at a time, each over a working copy
# of its seed corpus that grows as the fuzzer finds new inputs. Prints one
# line per target with the executions, the edge coverage and features
# reached, and the verdict; any crash, leak or timeout input is kept in
# OUT/<target>/artifacts.
#
# Usage: tests/fuzz/long.sh [-b BUILD_DIR] [-o OUT_DIR] [-j JOBS]
#                           [-t SECONDS] [TARGET...]
#   BUILD_DIR  a tree configured with CC=clang -DFERRY_FUZZ=ON (default
#              ./build-fuzz); the fuzz target is built first
#   OUT_DIR    work corpora, logs and results.txt (default
#              BUILD_DIR/fuzz-long)
#   JOBS       targets run at once (default: the number of CPUs)
#   SECONDS    per target (default 1800)
#   TARGET     short names (cfg, helo, ...); default all
# Afterwards, new inputs worth keeping can be merged into the seeds with
#   BUILD/tests/fuzz/fuzz_X -merge=1 tests/fuzz/corpus/X OUT/X/corpus
# and a bug's reproducer goes into tests/fuzz/corpus/X as is.
# Exit status: 0 no target failed, 1 one did, 2 could not run.

set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build-fuzz
out=
jobs=$(nproc 2>/dev/null || echo 2)
seconds=1800

usage() {
    sed -n '10,24p' "$0" | sed 's/^# \{0,1\}//'
}

while getopts "b:o:j:t:h" opt; do
    case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    j) jobs=$OPTARG ;;
    t) seconds=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$out" ] || out=$build/fuzz-long

if ! grep -q '^FERRY_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    echo "long: $build is not configured with -DFERRY_FUZZ=ON" >&2
    exit 2
fi
cmake --build "$build" --target fuzz >/dev/null || {
    echo "long: building the fuzz targets failed" >&2
    exit 2
}

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    for f in "$src"/tests/fuzz/fuzz_*.c; do
        n=$(basename "$f" .c)
        targets+=("${n#fuzz_}")
    done
fi
mkdir -p "$out"

# One target: its last status line and final stats into OUT/X/result.
run_one() {
    local t=$1 dir=$out/$1 status=0 execs cov ft verdict
    rm -rf "$dir"
    mkdir -p "$dir/corpus" "$dir/artifacts"
    cp -R "$src/tests/fuzz/corpus/$t/." "$dir/corpus/"
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/" "$dir/corpus" \
        >"$dir/log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
    cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -n1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -n1 | cut -d' ' -f2)
    if [ "$status" -eq 0 ] && [ -z "$(ls -A "$dir/artifacts")" ]; then
        verdict=ok
    else
        verdict="FAILED (exit $status; see $dir/artifacts)"
    fi
    printf '%-14s %6ss %12s execs  cov %6s  ft %7s  corpus %5s  %s\n' \
        "$t" "$seconds" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "$(find "$dir/corpus" -type f | wc -l)" "$verdict" >"$dir/result"
}

echo "long: ${#targets[@]} target(s), ${seconds}s each, $jobs at a time, in $out"
running=0
for t in "${targets[@]}"; do
    if [ ! -x "$build/tests/fuzz/fuzz_$t" ]; then
        echo "long: no target fuzz_$t in $build" >&2
        exit 2
    fi
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

{
    echo "# $(date -u +%FT%TZ), $(uname -m), clang $(clang -dumpversion 2>/dev/null || echo ?)"
    for t in "${targets[@]}"; do
        cat "$out/$t/result"
    done
} | tee "$out/results.txt"
if grep -q 'FAILED' "$out/results.txt"; then
    exit 1
fi
exit 0
