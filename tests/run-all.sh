#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# ferry's whole test suite: configures (if needed), builds and runs every
# ctest test of one build directory: unit, integration, fuzz corpus replay
# (or the fuzz smoke runs in a FERRY_FUZZ build) and the lint checks.
#
# Usage: tests/run-all.sh [BUILD_DIR [CMAKE_OPTION...]]
#   BUILD_DIR defaults to ./build in the source tree; options after it go
#   to cmake, e.g.
#     tests/run-all.sh build-asan -DFERRY_SANITIZE=address,undefined
# Environment: JOBS (parallel jobs, default: the number of CPUs),
#   CTEST_ARGS (more ctest options, e.g. "-L unit" or "-R cfg"; the
#   tests labelled long, such as the DHT on 64 daemons, are left out
#   unless CTEST_ARGS chooses labels itself: "-L long" runs them alone,
#   "-L ." everything),
#   FERRY_NO_MTA=1 (do not set up the loopback Postfix; the SMTP tests
#   then say they skip).
# As root, the loopback Postfix + procmail the SMTP tests need is set up
# first (tests/mta/setup-mta.sh, idempotent) and those tests must pass.
# Exit status: 0 all tests passed, 1 a test failed, 2 configuring or
# building failed.

set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
[ "$#" -gt 0 ] && shift
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
read -r -a ctest_args <<<"${CTEST_ARGS:-}"
labels_chosen=0
for arg in "${ctest_args[@]}"; do
    case $arg in
    -L* | --label-regex* | --label-exclude*) labels_chosen=1 ;;
    esac
done
[ "$labels_chosen" -eq 1 ] || ctest_args+=(-LE '^long$')

for tool in cmake ctest; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run-all: $tool not found; install the dependencies: .ci/install-deps.sh" >&2
        exit 1
    fi
done

generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi

echo "run-all: configuring $build"
cmake -S "$src" -B "$build" "${generator[@]}" "$@" || {
    echo "run-all: configuring failed" >&2
    exit 2
}
echo "run-all: building with $jobs job(s)"
cmake --build "$build" --parallel "$jobs" || {
    echo "run-all: the build failed" >&2
    exit 2
}
if [ "$(id -u)" -eq 0 ] && [ "${FERRY_NO_MTA:-0}" != 1 ]; then
    echo "run-all: setting up the test MTA"
    if "$src/tests/mta/setup-mta.sh" >/dev/null; then
        export FERRY_REQUIRE_MTA=1
    else
        echo "run-all: the test MTA could not be set up" >&2
        exit 2
    fi
fi
echo "run-all: testing"
start=$(date +%s)
status=0
(cd "$build" && ctest --output-on-failure --no-tests=error --parallel "$jobs" \
    "${ctest_args[@]}") || status=$?
echo "run-all: ctest finished in $(($(date +%s) - start)) s with status $status"
[ "$status" -eq 0 ] || exit 1
