#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Lints every manual page under man/ with two formatters, mandoc
# (-Tlint -Wwarning) and groff (-ww -z with the mdoc macros): a warning or
# an error from either fails. mandoc's style notes (such as cross
# references to pages that are not installed yet) are shown but do not
# fail.
#
# Usage: .ci/check-docs.sh [PAGE...]

set -euo pipefail

cd "$(dirname "$0")/.."

for tool in mandoc:mandoc groff:groff-base; do
    if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
        echo "check-docs: ${tool%%:*} not found (apt-get install ${tool#*:})" >&2
        exit 1
    fi
done

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
        echo "check-docs: $f: FAILED (mandoc)"
        failed=$((failed + 1))
        continue
    fi
    # groff's own warnings (all of them, -ww), formatting for a terminal
    # as man(1) would, output discarded.
    if ! out=$(LC_ALL=C.UTF-8 groff -ww -z -mdoc -Tutf8 "$f" 2>&1) ||
        [ -n "$out" ]; then
        echo "$out"
        echo "check-docs: $f: FAILED (groff)"
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
