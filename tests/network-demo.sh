#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# ferry's main job on one machine: builds ferry if needed, starts a small
# network of ferryd processes on loopback, each with its own address (node N
# on 127.0.0.(10+N): Linux answers all of 127.0.0.0/8, and so every node is
# a network source of its own to the others, as hosts are), state directory,
# client socket and UDP and TCP ports, where every node but the first knows
# only the first one's HELO. It shows them find and prove each other's
# addresses and agree on keys (`ferry peers`), every node send a message to
# every other, a round trip through the stack (`ferry ping`), a 1 MB
# transfer checked byte for byte, a block stored in the DHT from one node
# and fetched, checked, on another (`ferry dht put` / `get`, with the
# storing nodes' signed receipts), a file stored from one node as
# encrypted chunks under a manifest and fetched by its URI, checked, on
# another (`ferry put` / `ferry get`), a thin client with no daemon of its
# own putting a file through node 1 as an HTTPS intermediary (with a
# certificate made here), checked back through node 2, the second
# intermediary, and a full node getting it back by its URI (`ferry remote
# put`), what the counters say happened, and stops them all
# cleanly (also on Ctrl-C or an error).
#
# The demo is a list of steps (DEMO_STEPS below); each is a function
# step_<name> using the same helpers (node_cli, node_conf, ...).
#
# Usage: tests/network-demo.sh [-n NODES] [-b BUILD_DIR] [--no-build]
#                              [--hold SECONDS] [--keep]
#   -n NODES        how many daemons, 3 to 99 (default 3)
#   -b BUILD_DIR    build directory (default ./build in the source tree)
#   --no-build      use the build as it is
#   --hold SECONDS  keep the network up this long before stopping it
#   --keep          keep the temporary directory (configs, logs, state)

set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build
NODES=3
DO_BUILD=1
HOLD=0
KEEP=0
DEMO_STEPS=(start status peers messages ping bulk dht files remote stats stop)
APP_TYPE=4242

WORK=
HOLD_PID=
PIDS=()
UDP_PORTS=()
TCP_PORTS=()
IMD_PORTS=() # nodes 1 and 2 are HTTPS intermediaries too
NODE_IPS=()
TRANSPORTS=()

if [ -t 1 ]; then
    say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
    say() { printf '\n== %s\n' "$*"; }
fi
die() {
    printf 'network-demo: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '/^# Usage:/,/^$/s/^# \{0,1\}//p' "$0"
    exit "${1:-0}"
}

parse_args() {
    while [ "$#" -gt 0 ]; do
        case $1 in
        -n) NODES=${2:?-n needs a number}; shift ;;
        -b) BUILD=$(realpath -m "${2:?-b needs a directory}"); shift ;;
        --no-build) DO_BUILD=0 ;;
        --hold) HOLD=${2:?--hold needs seconds}; shift ;;
        --keep) KEEP=1 ;;
        -h | --help) usage 0 ;;
        *) echo "network-demo: unknown argument '$1'" >&2; usage 2 ;;
        esac
        shift
    done
    # Blocks are stored on 3 nodes (REPLICATION's default, which the thin
    # client asks for too): fewer cannot give a put its receipts.
    [[ $NODES =~ ^[1-9][0-9]?$ && $NODES -ge 3 ]] || die "-n takes 3 to 99"
    [[ $HOLD =~ ^[0-9]+$ ]] || die "--hold takes whole seconds"
}

build() {
    if [ "$DO_BUILD" = 1 ]; then
        say "Building ferry in $BUILD"
        local gen=()
        if [ ! -f "$BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null; then
            gen=(-G Ninja)
        fi
        command -v cmake >/dev/null ||
            die "cmake not found; install the dependencies: .ci/install-deps.sh"
        cmake -S "$SRC" -B "$BUILD" "${gen[@]}" >/dev/null
        cmake --build "$BUILD" --parallel "$(nproc 2>/dev/null || echo 2)"
    fi
    [ -f "$BUILD/ferry-env.sh" ] ||
        die "$BUILD is not a configured ferry build (no ferry-env.sh)"
    # shellcheck source=/dev/null
    . "$BUILD/ferry-env.sh"
    export FERRY_PLUGIN_DIR
    [ -x "${FERRYD:-}" ] || die "ferryd was not built in $BUILD"
    [ -x "${FERRY_CLI:-}" ] || die "the ferry CLI was not built in $BUILD"
    for t in udp tcp; do
        if [ -f "$FERRY_PLUGIN_DIR/libtransport_$t.so" ]; then
            TRANSPORTS+=("$t")
        else
            echo "network-demo: no $t transport in $FERRY_PLUGIN_DIR; running without it"
        fi
    done
    [ "${#TRANSPORTS[@]}" -gt 0 ] || die "no transport plugin was built"
}

port_free() { # port_free PORT: nothing listens on it, TCP or UDP
    ! ss -Htuln "sport = :$1" 2>/dev/null | grep -q .
}

# Two consecutive free ports per node and two more for the HTTPS
# intermediaries of nodes 1 and 2, from a random base, so that several demos (or test runs)
# on one machine do not collide.
pick_ports() {
    local base tries=0 i ok
    while :; do
        tries=$((tries + 1))
        [ "$tries" -le 50 ] || die "found no free ports"
        base=$((20000 + (RANDOM % 2000) * 20))
        ok=1
        for ((i = 0; i < 2 * NODES + 2; i++)); do
            port_free $((base + i)) || { ok=0; break; }
        done
        [ "$ok" = 1 ] && break
    done
    for ((i = 1; i <= NODES; i++)); do
        UDP_PORTS[i]=$((base + 2 * i - 2))
        TCP_PORTS[i]=$((base + 2 * i - 1))
        IMD_PORTS[i]=$((base + 2 * NODES + i - 1))
        NODE_IPS[i]=127.0.0.$((10 + i))
    done
}

node_dir() { echo "$WORK/node$1"; }
node_conf() { echo "$WORK/node$1/ferryd.conf"; }
node_socket() { echo "$WORK/node$1/run/ferryd.sock"; }
node_cli() { # node_cli N ARGS...: runs `ferry` against node N
    local n=$1
    shift
    "$FERRY_CLI" --socket "$(node_socket "$n")" "$@"
}

write_conf() { # write_conf N [BOOTSTRAP_URI]
    local n=$1 boot=${2:-} dir
    dir=$(node_dir "$n")
    mkdir -p "$dir/state" "$dir/run"
    {
        echo "# node $n of tests/network-demo.sh"
        echo "[paths]"
        echo "STATE_DIR = $dir/state"
        echo "RUNTIME_DIR = $dir/run"
        echo "[core]"
        echo "TRANSPORTS = ${TRANSPORTS[*]}"
        [ -z "$boot" ] || echo "BOOTSTRAP = $boot"
        # The IP transports refuse loopback by default: this network
        # lives on 127.0.0.0/8 only.
        echo "[transport-udp]"
        echo "BIND_ADDRESS = ${NODE_IPS[n]}"
        echo "PORT = ${UDP_PORTS[n]}"
        echo "ADVERTISE = ${NODE_IPS[n]}:${UDP_PORTS[n]}"
        echo "BLACKLIST ="
        echo "[transport-tcp]"
        echo "BIND_ADDRESS = ${NODE_IPS[n]}"
        echo "PORT = ${TCP_PORTS[n]}"
        echo "ADVERTISE = ${NODE_IPS[n]}:${TCP_PORTS[n]}"
        echo "BLACKLIST ="
        # All nodes are in 127.0.0.0/24, which the DHT's bound on one
        # network's peers per bucket would count as one host.
        echo "[dht]"
        echo "PER_NETWORK = 0"
        # Nodes 1 and 2 are also intermediaries for thin clients.
        if [ "$n" -le 2 ]; then
            echo "[intermediary]"
            echo "LISTEN = ${NODE_IPS[n]}:${IMD_PORTS[n]}"
            echo "CERTIFICATE = $WORK/cert.pem"
            echo "PRIVATE_KEY = $WORK/key.pem"
        fi
    } >"$(node_conf "$n")"
}

start_node() {
    local n=$1 log i
    log=$(node_dir "$n")/ferryd.log
    "$FERRYD" -c "$(node_conf "$n")" </dev/null >"$log" 2>&1 &
    PIDS[n]=$!
    for ((i = 0; i < 100; i++)); do
        if ! kill -0 "${PIDS[n]}" 2>/dev/null; then
            cat "$log" >&2
            die "node $n: ferryd exited during start"
        fi
        if node_cli "$n" status >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    cat "$log" >&2
    die "node $n: ferryd did not answer within 10 s"
}

stop_node() { # SIGTERM, then insist on exit status 0 and a removed socket
    local n=$1 pid=${PIDS[$1]:-} i status=0
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        PIDS[n]=
        echo "node $n: did not stop within 10 s of SIGTERM; killed" >&2
        return 1
    fi
    wait "$pid" || status=$?
    PIDS[n]=
    if [ "$status" -ne 0 ]; then
        echo "node $n: ferryd exited with status $status" >&2
        tail -n 20 "$(node_dir "$n")/ferryd.log" >&2
        return 1
    fi
    if [ -e "$(node_socket "$n")" ]; then
        echo "node $n: socket $(node_socket "$n") left behind" >&2
        return 1
    fi
    echo "node $n: stopped cleanly (exit 0, socket removed)"
}

cleanup() {
    local status=$? n
    trap - EXIT INT TERM
    [ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null
    for ((n = 1; n <= NODES; n++)); do
        if [ -n "${PIDS[n]:-}" ]; then
            kill -KILL "${PIDS[n]}" 2>/dev/null || true
            wait "${PIDS[n]}" 2>/dev/null || true
        fi
    done
    if [ -n "$WORK" ]; then
        # Keep the evidence of a failure, not of an interruption.
        if [ "$KEEP" = 1 ] || { [ "$status" -ne 0 ] &&
            [ "$status" -ne 130 ] && [ "$status" -ne 143 ]; }; then
            echo "network-demo: configs and logs kept in $WORK"
        else
            rm -rf "$WORK"
        fi
    fi
    exit "$status"
}

# --- the steps -------------------------------------------------------------

step_start() {
    say "Starting $NODES ferryd on 127.0.0.11 and up" \
        "(transports: ${TRANSPORTS[*]})"
    pick_ports
    # The intermediaries' certificate, self-signed for their addresses.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -days 1 -subj /CN=ferry-demo \
        -addext "subjectAltName=IP:${NODE_IPS[1]},IP:${NODE_IPS[2]}" \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" >/dev/null 2>&1 ||
        die "openssl could not make the intermediary's certificate"
    local n uri=
    for ((n = 1; n <= NODES; n++)); do
        write_conf "$n" "$uri"
        start_node "$n"
        # The others know only node 1, by its signed HELOs.
        [ "$n" -gt 1 ] || uri=$(node_cli 1 hello)
        printf 'node %d: pid %d, udp %s:%d, tcp %s:%d, socket %s\n' \
            "$n" "${PIDS[n]}" "${NODE_IPS[n]}" "${UDP_PORTS[n]}" \
            "${NODE_IPS[n]}" "${TCP_PORTS[n]}" "$(node_socket "$n")"
    done
}

step_status() {
    local n
    for ((n = 1; n <= NODES; n++)); do
        say "ferry status of node $n"
        node_cli "$n" status
    done
    if [ "$HOLD" -gt 0 ]; then
        say "Holding the network for $HOLD s (sockets under $WORK)"
        sleep "$HOLD" &
        HOLD_PID=$!
        wait "$HOLD_PID" # a signal interrupts wait at once, not sleep
        HOLD_PID=
    fi
}

peer_count() { # peer_count N: connected peers of node N
    node_cli "$1" peers --json | grep -o '"id"' | wc -l
}

step_peers() {
    say "Nodes 2..$NODES knew only node 1: waiting for the full mesh"
    local n i want=$((NODES - 1))
    for ((i = 0; i < 200; i++)); do
        for ((n = 1; n <= NODES; n++)); do
            [ "$(peer_count "$n")" -ge "$want" ] || break
        done
        [ "$n" -gt "$NODES" ] && break
        sleep 0.1
    done
    for ((n = 1; n <= NODES; n++)); do
        say "ferry peers of node $n"
        node_cli "$n" peers
        [ "$(peer_count "$n")" -ge "$want" ] ||
            die "node $n has $(peer_count "$n") peers, expected $want"
    done
}

node_id() { node_cli "$1" id; }

wait_exit() { # wait_exit PID SECONDS: 0 once PID has exited, 1 if it runs on
    local i
    for ((i = 0; i < $2 * 100; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.01
    done
    return 1
}

step_messages() {
    say "Every node sends one message to every other (type $APP_TYPE)"
    local n m lp=() failed=0 out
    for ((n = 1; n <= NODES; n++)); do
        node_cli "$n" listen -n $((NODES - 1)) "$APP_TYPE" \
            >"$(node_dir "$n")/received" &
        lp[n]=$!
    done
    sleep 0.3 # the listeners register
    for ((n = 1; n <= NODES; n++)); do
        for ((m = 1; m <= NODES; m++)); do
            [ "$n" -ne "$m" ] || continue
            node_cli "$n" send "$(node_id "$m")" "$APP_TYPE" \
                "hello from node $n to node $m"
        done
    done
    for ((n = 1; n <= NODES; n++)); do
        if ! wait_exit "${lp[n]}" 10; then
            kill "${lp[n]}" 2>/dev/null || true
            failed=1
        fi
        wait "${lp[n]}" 2>/dev/null || failed=1
        out=$(node_dir "$n")/received
        echo "node $n received:"
        sed 's/^[0-9A-Z]\{44\}\([0-9A-Z]\{8\}\) [0-9]* [0-9]* /  from ...\1: /' "$out"
        [ "$(grep -c "to node $n\$" "$out")" -eq $((NODES - 1)) ] || failed=1
    done
    [ "$failed" = 0 ] || die "not every message arrived"
}

step_ping() {
    say "Round trips node 1 -> node 2 -> node 1 through the whole stack"
    node_cli 1 ping --count 5 "$(node_id 2)"
}

step_bulk() {
    say "1 MB from node 2 to node 1 as one message (fragmented, reassembled)"
    local src dst lpid t0 t1
    src=$WORK/bulk.in
    dst=$WORK/bulk.out
    head -c 1000000 /dev/urandom >"$src"
    node_cli 1 listen -n 1 --raw "$((APP_TYPE + 1))" >"$dst" &
    lpid=$!
    sleep 0.3
    t0=$(date +%s%N)
    node_cli 2 send "$(node_id 1)" "$((APP_TYPE + 1))" <"$src"
    wait_exit "$lpid" 20 || die "the 1 MB message did not arrive"
    t1=$(date +%s%N)
    wait "$lpid"
    cmp -s "$src" "$dst" || die "the 1 MB message arrived damaged"
    printf 'sha256 sent     %s\nsha256 received %s\n%d bytes in %d ms\n' \
        "$(sha256sum <"$src" | cut -c1-64)" "$(sha256sum <"$dst" | cut -c1-64)" \
        "$(stat -c %s "$dst")" $(((t1 - t0) / 1000000))
}

step_dht() {
    say "A file stored in the DHT from node 1, fetched and checked on node $NODES"
    local src dst key
    src=$WORK/dht.in
    dst=$WORK/dht.out
    head -c 262144 /dev/urandom >"$src"
    node_cli 1 dht put --json "$src" >"$WORK/dht.json" ||
        die "ferry dht put failed"
    sed 's/^/  /' "$WORK/dht.json"
    key=$(sed -n 's/^{"key":"\([0-9a-f]*\)".*/\1/p' "$WORK/dht.json")
    [ -n "$key" ] || die "ferry dht put printed no key"
    node_cli "$NODES" dht get "$key" -o "$dst" || die "ferry dht get failed"
    cmp -s "$src" "$dst" || die "the block came back damaged"
    printf 'key             %s\nsha256 stored   %s\nsha256 fetched  %s\n' "$key" \
        "$(sha256sum <"$src" | cut -c1-64)" "$(sha256sum <"$dst" | cut -c1-64)"
    node_cli "$NODES" dht status
}

step_files() {
    say "A 3 MB file put from node 1, got by its URI on node $NODES"
    local src dst uri t0 t1 t2
    src=$WORK/file.in
    dst=$WORK/file.out
    head -c 3000000 /dev/urandom >"$src"
    t0=$(date +%s%N)
    node_cli 1 put --json "$src" >"$WORK/put.json" || die "ferry put failed"
    t1=$(date +%s%N)
    tail -n 1 "$WORK/put.json" | sed 's/^/  /'
    uri=$(tail -n 1 "$WORK/put.json" | sed -n 's/.*"uri":"\([^"]*\)".*/\1/p')
    [ -n "$uri" ] || die "ferry put printed no URI"
    node_cli "$NODES" get "$uri" -o "$dst" || die "ferry get failed"
    t2=$(date +%s%N)
    [ ! -e "$dst.part" ] || die "ferry get left $dst.part behind"
    cmp -s "$src" "$dst" || die "the file came back damaged"
    printf 'uri             %s\nsha256 put      %s\nsha256 got      %s\n' "$uri" \
        "$(sha256sum <"$src" | cut -c1-64)" "$(sha256sum <"$dst" | cut -c1-64)"
    printf 'put in %d ms, got in %d ms\n' $(((t1 - t0) / 1000000)) \
        $(((t2 - t1) / 1000000))
    node_cli 1 stats storage. | grep -E '^storage\.(puts_done|blocks_put|bytes_put) '
    node_cli "$NODES" stats storage. | grep -E '^storage\.(gets_done|blocks_got|bytes_got|hedges) '
}

step_remote() {
    say "A thin client puts a 1 MB file through node 1 (HTTPS intermediary); node $NODES gets it"
    local src dst uri t0 t1 t2 client=$WORK/thin-client imds
    # Node 1 relays; node 2 is where the client fetches its blocks back
    # before it believes the receipts.
    imds=(--intermediary "https://${NODE_IPS[1]}:${IMD_PORTS[1]}"
        --intermediary "https://${NODE_IPS[2]}:${IMD_PORTS[2]}")
    src=$WORK/remote.in
    dst=$WORK/remote.out
    head -c 1000000 /dev/urandom >"$src"
    t0=$(date +%s%N)
    # No daemon on the client's side: its own key and convergence secret
    # in its own directory, the intermediary's certificate trusted here.
    "$FERRY_CLI" remote put --config-dir "$client" --cacert "$WORK/cert.pem" \
        "${imds[@]}" "$src" \
        >"$WORK/remote.uri" 2>"$WORK/remote.err" ||
        { cat "$WORK/remote.err" >&2; die "ferry remote put failed"; }
    t1=$(date +%s%N)
    # What the client said: its new key and convergence secret.
    sed 's/^[0-9:.]* //; s/^/  client: /' "$WORK/remote.err"
    uri=$(head -n 1 "$WORK/remote.uri")
    [ -n "$uri" ] || die "ferry remote put printed no URI"
    node_cli "$NODES" get "$uri" -o "$dst" || die "ferry get of the thin client's file failed"
    t2=$(date +%s%N)
    cmp -s "$src" "$dst" || die "the thin client's file came back damaged"
    printf 'uri             %s\nsha256 put      %s\nsha256 got      %s\n' "$uri" \
        "$(sha256sum <"$src" | cut -c1-64)" "$(sha256sum <"$dst" | cut -c1-64)"
    printf 'remote put in %d ms (every block with its storers'"'"' signed receipts, verified, and fetched back through node 2), got in %d ms\n' \
        $(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000))
    node_cli 1 stats intermediary. | grep -E '^intermediary\.(requests|records_relayed|receipts|bytes_relayed) '
    node_cli 2 stats intermediary. | grep -E '^intermediary\.blocks_fetched '
}

step_stats() {
    say "What node 1's counters say happened"
    node_cli 1 stats | grep -E '^(core\.(validations|key_changes|kx_sent|kx_in|enc_(in|out|bad|replay)|msg_(in|out)|frag_(in|out)|reasm_done|frames_lost|peers_connected)|(udp|tcp)\.units_(in|out)) '
}

step_stop() {
    say "Stopping the network (SIGTERM)"
    local n failed=0
    for ((n = 1; n <= NODES; n++)); do
        stop_node "$n" || failed=1
    done
    [ "$failed" = 0 ] || die "not every daemon stopped cleanly"
}

main() {
    parse_args "$@"
    build
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/ferry-demo.XXXXXX")
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    local step
    for step in "${DEMO_STEPS[@]}"; do
        "step_$step"
    done
    say "Done: $NODES daemons started, answered and stopped cleanly"
}

main "$@"
