#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Installs everything ferry's build, tests, sanitizer and fuzz builds, docs
# checks and benchmarks need, on Debian 12 (bookworm). Idempotent: when
# every package is already there it changes nothing and needs no network.
# Runs itself through sudo when not started as root.
#
# Other scripts add packages with FERRY_DEPS_EXTRA, e.g.
#   FERRY_DEPS_EXTRA="postfix procmail" .ci/install-deps.sh

set -euo pipefail

packages=(
    # build
    build-essential cmake ninja-build pkg-config
    libsodium-dev libevent-dev libssl-dev libcurl4-openssl-dev
    libsqlite3-dev libxxhash-dev libjson-c-dev libisal-dev
    # tests, sanitizers, fuzzing, valgrind
    check clang llvm libclang-rt-14-dev valgrind
    # checks: format, man pages, the systemd unit
    clang-format mandoc groff-base systemd strace
    # scripts, benchmarks, network tests; the intermediary's tests make
    # certificates with openssl and drive its HTTP API with curl
    gnuplot-nox procps iproute2 python3 git openssl curl
)
# Extended by later scripts (the SMTP transport's tests need a real MTA).
read -r -a extra <<<"${FERRY_DEPS_EXTRA:-}"
packages+=("${extra[@]}")

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        exec sudo --preserve-env=FERRY_DEPS_EXTRA "$0" "$@"
    fi
    echo "install-deps: run me as root (sudo is not installed)" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: this script needs apt-get (Debian 12 or a derivative)" >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages are installed"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
