#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Lints every manual page under man/ with mandoc: a warning or an error
# fails. Style notes (such as cross references to pages that are not
# installed yet) are shown but do not fail.
#
# Usage: .ci/check-docs.sh [PAGE...]

set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v mandoc >/dev/null 2>&1; then
    echo "check-docs: mandoc not found (apt-get install mandoc)" >&2
    exit 1
fi

pages=("$@")
if [ "${#pages[@]}" -eq 0 ]; then
    for f in man/*.[1-9]; do
        [ -f "$f" ] && pages+=("$f")
    done
fi
if [ "${#pages[@]}" -eq 0 ]; then
    echo "check-docs: no manual pages found" >&2
    exit 1
fi

failed=0
for f in "${pages[@]}"; do
    if ! out=$(mandoc -Tlint -Wwarning "$f" 2>&1) || [ -n "$out" ]; then
        echo "$out"
        echo "check-docs: $f: FAILED"
        failed=$((failed + 1))
        continue
    fi
    # (mandoc also grumbles about this machine's stale whatis database.)
    notes=$(mandoc -Tlint -Wstyle "$f" 2>&1 | grep -v 'outdated mandoc.db' || true)
    [ -n "$notes" ] && echo "$notes"
    echo "check-docs: $f: OK"
done

if [ "$failed" -gt 0 ]; then
    echo "check-docs: $failed page(s) with warnings or errors" >&2
    exit 1
fi
