#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# One libFuzzer smoke run, as ctest calls it (label "fuzz"): fuzzes a copy
# of the target's seed corpus for SECONDS, so the source tree never
# changes, and keeps any crash, leak or timeout input in WORKDIR/artifacts.
#
# Usage: tests/fuzz/smoke.sh FUZZER CORPUS_DIR WORKDIR SECONDS
# Extra libFuzzer flags can come from FERRY_FUZZ_ARGS.

set -euo pipefail

if [ "$#" -ne 4 ]; then
    echo "usage: $0 FUZZER CORPUS_DIR WORKDIR SECONDS" >&2
    exit 2
fi
fuzzer=$1 corpus=$2 work=$3 seconds=$4

if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
    echo "smoke: no seeds in $corpus: every target needs a corpus" >&2
    exit 1
fi
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp -R "$corpus/." "$work/corpus/"

read -r -a extra <<<"${FERRY_FUZZ_ARGS:-}"
seeds=$(find "$work/corpus" -type f | wc -l)
echo "smoke: $(basename "$fuzzer") for ${seconds}s over $seeds seeds"
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "${extra[@]}" "$work/corpus" || status=$?
if [ "$status" -ne 0 ]; then
    echo "smoke: FAILED (exit $status); reproducer(s):" >&2
    ls -l "$work/artifacts" >&2
    echo "smoke: replay one with: $fuzzer FILE; then add it to $corpus" >&2
fi
exit "$status"
