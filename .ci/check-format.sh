#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Compares C sources with what clang-format makes of them (.clang-format at
# the top; STYLE.md section 9). Informational: it lists the files that
# differ and exits 0, unless FERRY_FORMAT_STRICT=1, when any difference
# (or a missing clang-format) fails.
#
# Usage: .ci/check-format.sh                 every .c/.h under src include plugins tests
#        .ci/check-format.sh --changed [REV] files changed since REV (default HEAD),
#                                            untracked ones included
#        .ci/check-format.sh FILE...         just these
# To fix a file: clang-format -i FILE (then review: the tool is a guide,
# STYLE.md is the rule).

set -euo pipefail

cd "$(dirname "$0")/.."
strict=${FERRY_FORMAT_STRICT:-0}
tool=${CLANG_FORMAT:-clang-format}

if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check-format: $tool not found (apt-get install clang-format)"
    [ "$strict" = 1 ] && exit 1
    exit 0
fi

files=()
if [ "${1:-}" = --changed ]; then
    rev=${2:-HEAD}
    while IFS= read -r f; do
        [ -f "$f" ] && files+=("$f")
    done < <({ git diff --name-only "$rev" -- '*.c' '*.h'
        git ls-files --others --exclude-standard -- '*.c' '*.h'; } | sort -u)
elif [ "$#" -gt 0 ]; then
    files=("$@")
else
    while IFS= read -r -d '' f; do
        files+=("${f#./}")
    done < <(find ./src ./include ./plugins ./tests -type f \
        \( -name '*.c' -o -name '*.h' \) -print0 2>/dev/null | sort -z)
fi

if [ "${#files[@]}" -eq 0 ]; then
    echo "check-format: no C files to check"
    exit 0
fi

bad=0
for f in "${files[@]}"; do
    n=$("$tool" --dry-run "$f" 2>&1 | grep -c 'Wclang-format-violations' || true)
    if [ "$n" -gt 0 ]; then
        printf 'check-format: %s: %d place(s) differ\n' "$f" "$n"
        bad=$((bad + 1))
    fi
done

echo "check-format: $bad of ${#files[@]} file(s) differ from clang-format ($("$tool" --version | head -n1))"
if [ "$bad" -gt 0 ] && [ "$strict" = 1 ]; then
    exit 1
fi
exit 0
