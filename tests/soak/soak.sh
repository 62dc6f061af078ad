#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The soak of issue 6: 16 ferryd, each on its own 127.0.0.N (UDP and TCP),
# with traffic between random pairs and random SIGKILL + restart, for a
# given time; checks reconnect times, delivery, crashes, RSS slopes and,
# in a sanitizer build, ASan/LSan/UBSan reports. See tests/soak/README.
#
# Usage: tests/soak/soak.sh [-b BUILD_DIR] [-o OUT_DIR] [-d SECONDS]
#                           [--no-build] [--] [soak option...]
#   BUILD_DIR  a configured build tree (default ./build); its ferryd, its
#              plugins and its compiler and sanitizer settings are used
#   OUT_DIR    results (default BUILD_DIR/soak-<UTC time>)
#   SECONDS    length of the run phase (default 120)
# Options after -- go to the soak program (soak --help). Environment:
#   JOBS (build parallelism), TMPDIR (where the daemons' directories go),
#   FERRY_TEST_KEEP=1 (keep them), ASAN_OPTIONS/UBSAN_OPTIONS (defaults
#   below for sanitizer builds).
# Exit status: 0 the soak passed, 1 it failed, 2 it could not run.

set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
out=
duration=120
do_build=1

usage() {
    sed -n '9,21p' "$0" | sed 's/^# \{0,1\}//'
}

while [ "$#" -gt 0 ]; do
    case $1 in
        -b) build=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        -d) duration=$2; shift 2 ;;
        --no-build) do_build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) usage >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
[ -n "$out" ] || out=$build/soak-$(date -u +%Y%m%dT%H%M%SZ)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cache_value() {
    sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"
}

if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "soak: $build is not a configured build tree" >&2
    exit 2
fi
if [ "$do_build" = 1 ]; then
    cmake --build "$build" --parallel "$jobs" --target ferryd libferry \
        ferry_testlib transport_udp transport_tcp >/dev/null || {
        echo "soak: building ferryd and the harness failed" >&2
        exit 2
    }
fi

# The program is built here rather than by CMake, against the static
# libraries of the build it tests, with that build's compiler and
# sanitizers (an instrumented library needs an instrumented program).
cc=$(cache_value CMAKE_C_COMPILER)
sanitize=$(cache_value FERRY_SANITIZE)
flags=(-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wformat=2
    -Wstrict-prototypes -Wmissing-prototypes -Wvla -Werror)
if [ -n "$sanitize" ]; then
    flags+=("-fsanitize=$sanitize" -fno-omit-frame-pointer)
fi
prog=$build/tests/soak/soak
sources=("$src"/tests/soak/*.c)
libs=("$build/tests/libferry_testlib.a" "$build/src/core/libferry_core.a"
    "$build/src/lib/libferry_lib.a")
stale=0
[ -x "$prog" ] || stale=1
for f in "${sources[@]}" "$src"/tests/soak/soak.h "$src"/tests/lib/harness.h \
    "${libs[@]}"; do
    [ "$f" -nt "$prog" ] && stale=1
done
if [ "$stale" = 1 ]; then
    mkdir -p "$(dirname "$prog")"
    # shellcheck disable=SC2046 # pkg-config's words are meant to split
    "$cc" "${flags[@]}" -I"$src/include" -I"$src/src" -I"$src/tests/lib" \
        -o "$prog" "${sources[@]}" "${libs[@]}" \
        -L"$build/src/libferry" -Wl,-rpath,"$build/src/libferry" -lferry \
        $(pkg-config --libs libsodium libevent_core libcrypto) -ldl -lm || {
        echo "soak: building the soak program failed" >&2
        exit 2
    }
fi

# Where the daemons and plugins are (FERRYD, FERRY_PLUGIN_DIR, ...).
# shellcheck disable=SC1091
. "$build/ferry-env.sh"
export FERRYD FERRY_PLUGIN_DIR FERRY_CLI
label=$(cache_value CMAKE_BUILD_TYPE)
if [ -n "$sanitize" ]; then
    label="$label, -fsanitize=$sanitize"
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
mkdir -p "$out"
# Nothing from an earlier run in the same place may pass for this one's.
rm -f "$out"/summary.txt "$out"/events.log "$out"/reconnects.csv \
    "$out"/delivery.csv "$out"/rss.csv "$out"/rss.dat "$out"/rss.png \
    "$out"/counters.csv "$out"/logs/d*.log
status=0
"$prog" -d "$duration" -o "$out" --label "$label" "$@" || status=$?

if [ -s "$out/rss.dat" ] && command -v gnuplot >/dev/null 2>&1; then
    stable=$(sed -n 's/.*(\([0-9]*\) never killed).*/\1/p' "$out/summary.txt")
    n=$(grep -c '^# d' "$out/rss.dat" || true)
    gnuplot -e "dat='$out/rss.dat'; png='$out/rss.png'; n=${n:-16}; stable=${stable:-4}" \
        "$src/tests/soak/plot_rss.gp" 2>/dev/null ||
        echo "soak: gnuplot could not draw $out/rss.png" >&2
fi
echo "soak: results in $out"
case $status in
    0) exit 0 ;;
    1) exit 1 ;;
    *) exit 2 ;;
esac
