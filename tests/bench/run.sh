#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# ferry's benchmarks (issues 4, 5, 12, 13 and 15; tests/bench/README):
# builds a Release tree if needed, runs bench_rtt, bench_throughput,
# bench_latency, bench_store, bench_dht, bench_stages and bench_remote (and
# bench_smtp when asked), and draws their PNG plots with gnuplot, all into
# one output directory.
#
# Usage: tests/bench/run.sh [-q] [-r REPS] [-o OUT_DIR] [-b BUILD_DIR]
#                           [-s rtt,throughput,latency,store,dht,stages,remote,xfer,dhtcc,smtp]
#                           [--smtp]
#   -q   quick smoke run (small counts, 1-2 repetitions; about two minutes)
#   -r   repetitions of every measurement (default: each program's own,
#        5 for rtt and throughput, 3 new links per point for latency)
#   -o   output directory (default ./bench-out)
#   -b   build directory (default <source>/build-bench, configured with
#        -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRY_BENCH=ON)
#   -s   which benchmarks to run (default rtt,throughput,latency,store,dht,
#        stages,remote; store measures the disk of $TMPDIR, or /tmp; dht
#        starts 16 daemons there and takes about 15 minutes; stages, the
#        storage encoding's stages, pipeline limit and erasure coding rates,
#        about one minute; remote, 1 MB put by a full peer and by the thin
#        client through an intermediary at client RTTs of 10-300 ms (issue
#        15, seed 001 Fig. 5-6), about 10 minutes; xfer,
#        ferry put and get of 1 GiB on 4 and 16 daemons, about 3 minutes a
#        repetition, is left out unless named; so is dhtcc, bench_dht_cc,
#        congestion collapse and cross-load between 16 daemons over
#        emulated links (issue 14), about 70 minutes a scheme (-q: 20);
#        its schemes come from FERRY_BENCH_DHTCC_ARGS, e.g.
#        "-C none,cscc,bpcc")
#   --smtp  add the SMTP benchmark (bench_smtp, issue 5) to them. Not in
#        the default set: it needs root, installs and starts Postfix and
#        procmail through tests/mta/setup-mta.sh, makes test users, and
#        takes 10-60 minutes. "-s smtp" runs it alone.
# Environment: FERRY_BENCH_QUIET_WAIT (seconds to wait for a quiet machine
#   before each benchmark, default 60; 0 skips), FERRY_BENCH_NICE (nice
#   value of the benchmarks, default -20 as root, else 0: on a shared
#   machine the benchmarked processes then win over background work),
#   FERRY_BENCH_ARGS (more options for every program, e.g. "-p on" or
#   "-c extra.conf"), FERRY_BENCH_DHTCC_ARGS (more options for
#   bench_dht_cc only, e.g. "-C none,cscc,bpcc -B bpcc:..."),
#   FERRY_BENCH_SMTP_ARGS (more options for bench_smtp only, e.g.
#   "-f fig8 -I maildir,fifo"), FERRY_BENCH_NO_INSTALL=1 (never run
#   .ci/install-deps.sh for a missing gnuplot).
#
# gnuplot comes from Debian's gnuplot-nox, which .ci/install-deps.sh
# installs; this script runs that when gnuplot is missing (as root or
# through sudo). Without gnuplot the tables and CSV files are still made.

set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build-bench
out=bench-out
quick=()
reps=()
which=rtt,throughput,latency,store,dht,stages,remote

# --smtp (a long option getopts does not know): add smtp to the set.
args=()
for a in "$@"; do
    if [ "$a" = --smtp ]; then
        add_smtp=1
    else
        args+=("$a")
    fi
done
set -- ${args[@]+"${args[@]}"}

while getopts "qr:o:b:s:h" opt; do
    case $opt in
    q) quick=(-q) ;;
    r) reps=(-r "$OPTARG") ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    s) which=$OPTARG ;;
    h)
        awk 'NR > 2 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "${add_smtp:-}" ] && which=$which,smtp
read -r -a extra <<<"${FERRY_BENCH_ARGS:-}"
read -r -a smtp_extra <<<"${FERRY_BENCH_SMTP_ARGS:-}"
read -r -a dhtcc_extra <<<"${FERRY_BENCH_DHTCC_ARGS:-}"
quiet_wait=${FERRY_BENCH_QUIET_WAIT:-60}
if [ "$(id -u)" -eq 0 ]; then
    nice_level=${FERRY_BENCH_NICE:--20}
else
    nice_level=${FERRY_BENCH_NICE:-0}
fi

log() { echo "bench: $*" >&2; }

# --- build (Release only: benchmarks of a debug build mislead) -----------
if [ -f "$build/CMakeCache.txt" ]; then
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
    if [ "$type" != Release ]; then
        log "$build is a '$type' build; benchmarks need Release (use -b)"
        exit 1
    fi
else
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    log "configuring $build (Release)"
    cmake -S "$src" -B "$build" "${generator[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DFERRY_BENCH=ON >/dev/null
fi
log "building"
cmake --build "$build" --target bench --parallel "$(nproc 2>/dev/null || echo 2)" \
    >/dev/null
bin=$build/tests/bench

# --- gnuplot --------------------------------------------------------------
if ! command -v gnuplot >/dev/null 2>&1 && [ "${FERRY_BENCH_NO_INSTALL:-0}" != 1 ]; then
    log "gnuplot is missing: installing the project's dependencies"
    "$src/.ci/install-deps.sh" || log "could not install gnuplot-nox"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- the machine ----------------------------------------------------------
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
        "$(nproc) CPUs"
    echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "cpuidle: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown)"
    echo "udp rmem_default: $(cat /proc/sys/net/core/rmem_default 2>/dev/null || echo ?)"
    echo "compiler: $(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" \
        "$("$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" -dumpversion 2>/dev/null)"
    echo "git: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo ?)" \
        "$(git -C "$src" status --porcelain --untracked-files=no -- src plugins 2>/dev/null |
            grep -q . && echo '(with uncommitted changes in src/ or plugins/)')"
    echo "nice: $nice_level"
} >"$out/machine.txt"

# Benchmarks on a busy machine measure the other work: wait until the
# load has settled, and note it either way.
wait_quiet() {
    local t=0 load
    while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$load" 'BEGIN { exit !(l < 0.5) }' && break
        if [ "$t" -ge "$quiet_wait" ]; then
            log "machine still busy (load $load); measuring anyway"
            break
        fi
        [ "$t" -eq 0 ] && log "waiting for a quiet machine (load $load)"
        sleep 5
        t=$((t + 5))
    done
    echo "$1: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
}

run() {
    local name=$1
    shift
    wait_quiet "$name"
    log "running $name $*"
    nice -n "$nice_level" "$bin/$name" -o "$out" "$@" | tee "$out/$name.txt"
    echo "$name: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
}

status=0
case ",$which," in *,rtt,*)
    run bench_rtt "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,throughput,*)
    run bench_throughput "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,latency,*)
    run bench_latency "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,store,*)
    run bench_store "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,dht,*)
    run bench_dht "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,stages,*)
    run bench_stages "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,remote,*)
    run bench_remote "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,xfer,*)
    run bench_xfer "${quick[@]}" "${reps[@]}" "${extra[@]}" || status=1 ;;
esac
case ",$which," in *,dhtcc,*)
    run bench_dht_cc "${quick[@]}" "${reps[@]}" "${extra[@]}" \
        ${dhtcc_extra[@]+"${dhtcc_extra[@]}"} || status=1 ;;
esac
case ",$which," in *,smtp,*)
    if [ "$(id -u)" -ne 0 ]; then
        log "bench_smtp needs root (Postfix, test users): skipped"
    elif [ ! -x "$bin/bench_smtp" ]; then
        log "bench_smtp was not built (no SMTP transport?): skipped"
    else
        {
            echo "postfix: $(postconf -h mail_version 2>/dev/null || echo ?)," \
                "procmail: $(procmail -v 2>&1 | sed -n '1s/^procmail v//p')," \
                "spool: $(df -T /var/spool/postfix 2>/dev/null | awk 'NR == 2 { print $2 " on " $1 }')"
        } >>"$out/machine.txt"
        run bench_smtp "${quick[@]}" "${reps[@]}" "${extra[@]}" \
            ${smtp_extra[@]+"${smtp_extra[@]}"} || status=1
    fi
    ;;
esac

# --- plots -----------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
    for p in rtt throughput latency dht dhtcc stages remote smtp; do
        case ",$which," in *,$p,*)
            gnuplot -e "dir='$out'" "$src/tests/bench/plot_$p.gp" || status=1 ;;
        esac
    done
else
    log "gnuplot not found: no plots (apt-get install gnuplot-nox)"
fi
log "results in $out:"
ls "$out" >&2
exit $status
