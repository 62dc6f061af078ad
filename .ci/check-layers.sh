#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Fails if an #include points up or sideways through ferry's layers
# (DESIGN.md "Layers", STYLE.md section 1):
#
#   lib <- core <- dht <- storage <- service <- intermediary <- daemon
#
# A file under src/<layer>/ may include "<lower or same layer>/...".
# src/libferry and src/cli see only <ferry/...>, "lib/..." and their own
# directory; so do plugins/*/. src/remote, the thin client, sees the
# storage encoding (lib, core, dht, storage: what ferry_codec builds) and
# itself, and of the intermediary only "intermediary/imdwire.h": the
# upload records and Authorization header both ends encode, built in
# ferry_codec so that one codec serves both; src/cli may include the
# thin client's interface, "remote/remote.h".
# include/ferry/ sees only <ferry/...> and the system.
# "lib/sqlfile.h" is layer 0 but its own library (ferry_sqlite), linked
# by the daemon's layers only: clients, remote and plugins never include
# it, so that SQLite stays out of libferry, the CLI and the thin client.
# "<dir>/<module>_int.h" is private to <dir> (and tests/unit).
# Includes with ".." are refused everywhere. tests/ is exempt.
#
# Usage: .ci/check-layers.sh [SOURCE_ROOT]    (default: the repository)
# Prints each violation as file:line: reason, and exits 1 if there is any.

set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

declare -A rank=([lib]=0 [core]=1 [dht]=2 [storage]=3 [service]=4 [intermediary]=5 [daemon]=6)
ours=" lib core dht storage service intermediary daemon libferry cli ferry remote "
violations=0

report() {
    printf '%s:%s: %s\n' "$1" "$2" "$3"
    violations=$((violations + 1))
}

# may_include FILE_KIND FILE_DIR TARGET_DIR -> 0 if allowed
may_include() {
    local kind=$1 own=$2 target=$3
    [ "$target" = ferry ] && return 0
    case $kind in
    public)
        return 1 ;;
    layer)
        [ -n "${rank[$target]+x}" ] || return 1
        [ "${rank[$target]}" -le "${rank[$own]}" ] ;;
    client)
        [ "$target" = lib ] || [ "$target" = "$own" ] ;;
    remote)
        [ "$target" = remote ] ||
            { [ -n "${rank[$target]+x}" ] && [ "${rank[$target]}" -le "${rank[storage]}" ]; } ;;
    plugin)
        [ "$target" = lib ] ;;
    esac
}

check_file() {
    local file=$1 kind=$2 own=$3
    local line num text path first

    while IFS= read -r line; do
        num=${line%%:*}
        text=${line#*:}
        [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] ||
            continue
        path=${BASH_REMATCH[2]}
        if [[ $path == *..* ]]; then
            report "$file" "$num" "include \"$path\" climbs with '..'"
            continue
        fi
        [[ $path == */* ]] || continue # same directory, or the system
        first=${path%%/*}
        [[ $ours == *" $first "* ]] || continue # third-party or system
        if [ "$kind" = public ] && [ "$first" != ferry ]; then
            report "$file" "$num" "public header includes \"$path\"; only <ferry/...> and system headers are allowed"
            continue
        fi
        if [ "$own" = cli ] && [ "$path" = remote/remote.h ]; then
            continue
        fi
        if [ "$path" = lib/sqlfile.h ] && [ "$kind" != layer ]; then
            report "$file" "$num" "$own ($kind) must not include \"$path\" (ferry_sqlite is the daemon's: no SQLite in clients, the thin client or plugins)"
            continue
        fi
        if [ "$own" = remote ] && [ "$path" = intermediary/imdwire.h ]; then
            continue
        fi
        if ! may_include "$kind" "$own" "$first"; then
            report "$file" "$num" "$own ($kind) must not include \"$path\" (layers: lib <- core <- dht <- storage <- service <- intermediary <- daemon; clients and plugins see <ferry/...> and lib/ only)"
            continue
        fi
        if [[ $path == *_int.h ]] && [ "$first" != "$own" ]; then
            report "$file" "$num" "\"$path\" is private to src/$first"
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$file" || true)
}

while IFS= read -r -d '' file; do
    rel=${file#./}
    case $rel in
    src/*/*)
        own=${rel#src/}
        own=${own%%/*}
        if [ -n "${rank[$own]+x}" ]; then
            check_file "$rel" layer "$own"
        elif [ "$own" = libferry ] || [ "$own" = cli ]; then
            check_file "$rel" client "$own"
        elif [ "$own" = remote ]; then
            check_file "$rel" remote "$own"
        else
            report "$rel" 1 "src/$own is not a known layer; add it to .ci/check-layers.sh and DESIGN.md first"
        fi
        ;;
    plugins/*/*)
        own=${rel#plugins/}
        check_file "$rel" plugin "${own%%/*}"
        ;;
    include/*)
        check_file "$rel" public ferry
        ;;
    esac
done < <(find ./src ./plugins ./include -type f \( -name '*.c' -o -name '*.h' \) -print0 2>/dev/null | sort -z)

if [ "$violations" -gt 0 ]; then
    echo "check-layers: $violations violation(s)" >&2
    exit 1
fi
echo "check-layers: OK"
