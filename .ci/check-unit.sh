#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Scores the sandbox of conf/ferryd.service with systemd-analyze and fails
# if its exposure is above FERRY_UNIT_MAX_EXPOSURE (default 2.0, the goal
# issue 6 sets). Skipped, with a note, where systemd-analyze is missing.

set -euo pipefail

cd "$(dirname "$0")/.."
max=${FERRY_UNIT_MAX_EXPOSURE:-2.0}
unit=conf/ferryd.service

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "check-unit: systemd-analyze not found; skipped"
    exit 0
fi
# systemd-analyze counts exposure in tenths.
threshold=$(awk -v m="$max" 'BEGIN { printf "%d", m * 10 + 0.5 }')
status=0
out=$(systemd-analyze security --offline=yes --no-pager \
    --threshold="$threshold" "$unit" 2>&1) || status=$?
printf '%s\n' "$out" | grep -E '^✗|Overall' || printf '%s\n' "$out"
if [ "$status" -ne 0 ]; then
    echo "check-unit: $unit is over the exposure limit $max (or could not be analysed)" >&2
    exit 1
fi
echo "check-unit: $unit within exposure $max"
