#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Checks conf/ferryd.service without a running systemd:
#
#   - systemd-analyze verify: every directive is known and parses (any
#     complaint fails);
#   - systemd-analyze security --offline: the sandbox's exposure must not
#     be above FERRY_UNIT_MAX_EXPOSURE (default 2.0, the goal issue 6 sets);
#   - with --syscalls BUILD_DIR (needs strace, python3 and a build): runs
#     two ferryd of that build under strace through what they do in
#     service (UDP, TCP and SMTP transports, a Maildir inbox, clients, a
#     refused client as root only, a reload, a shutdown) and fails if they
#     made a system call the unit's SystemCallFilter= would refuse.
#
# Skipped, with a note, where systemd-analyze is missing.
#
# Usage: .ci/check-unit.sh [--syscalls BUILD_DIR]

set -euo pipefail

cd "$(dirname "$0")/.."
max=${FERRY_UNIT_MAX_EXPOSURE:-2.0}
unit=conf/ferryd.service
build=
if [ "${1:-}" = --syscalls ]; then
    build=$(cd "${2:?usage: check-unit.sh [--syscalls BUILD_DIR]}" && pwd)
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "check-unit: systemd-analyze not found; skipped"
    exit 0
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ferry-unit.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$scratch"
}
trap cleanup EXIT

# --- verify: the unit as it would be installed, with an ExecStart that
# exists here (verify checks that it is executable).
sed "s|^ExecStart=.*|ExecStart=$(command -v true)|" "$unit" \
    >"$scratch/ferryd.service"
out=$(systemd-analyze verify --man=no "$scratch/ferryd.service" 2>&1 || true)
if [ -n "$out" ]; then
    printf '%s\n' "$out"
    echo "check-unit: systemd-analyze verify complains about $unit" >&2
    exit 1
fi
echo "check-unit: $unit verifies"

# --- security: systemd-analyze counts exposure in tenths.
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

[ -n "$build" ] || exit 0

# --- system calls --------------------------------------------------------
for tool in strace python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "check-unit: $tool not found; system calls not checked"
        exit 0
    }
done
ferryd=$build/src/daemon/ferryd
ferry=$build/src/cli/ferry
if [ ! -x "$ferryd" ] || [ ! -x "$ferry" ]; then
    echo "check-unit: no ferryd and ferry in $build" >&2
    exit 1
fi

# The MTA by a name the resolver must look up (curl answers "localhost"
# itself), so that its resolver thread and NSS are traced too.
mta_host=$(hostname 2>/dev/null || true)
getent hosts "$mta_host" >/dev/null 2>&1 || mta_host=localhost

# start_traced NAME: ferryd NAME under strace; its pid in $traced_pid.
start_traced() {
    local n=$1 d=$scratch/$1
    mkdir -p "$d/Maildir/new" "$d/Maildir/cur" "$d/Maildir/tmp"
    cat >"$d/ferryd.conf" <<EOF
[paths]
STATE_DIR = $d/state
RUNTIME_DIR = $d/run
[core]
TRANSPORTS = udp tcp smtp
PLUGIN_DIR = $build/plugins
[transport-udp]
BIND_ADDRESS = 127.0.0.1
PORT = 0
BLACKLIST =
[transport-tcp]
BIND_ADDRESS = 127.0.0.1
PORT = 0
BLACKLIST =
[transport-smtp]
SERVER = smtp://$mta_host:25
ADDRESS = ferry-unit-$n@localhost
FILTER = X-Ferry-Unit-Check: $n
INBOX = $d/Maildir
EOF
    strace -f -qq -o "$scratch/trace.$n" "$ferryd" -c "$d/ferryd.conf" \
        >"$d/log" 2>&1 &
    pids+=($!)
    traced_pid=$!
    local _
    for _ in $(seq 1 100); do
        "$ferry" --socket "$d/run/ferryd.sock" status >/dev/null 2>&1 &&
            return 0
        sleep 0.1
    done
    cat "$d/log" >&2
    echo "check-unit: ferryd $n did not start" >&2
    exit 1
}

start_traced a
trace_a=$traced_pid
start_traced b
fa=("$ferry" --socket "$scratch/a/run/ferryd.sock")
fb=("$ferry" --socket "$scratch/b/run/ferryd.sock")
"${fa[@]}" connect "$("${fb[@]}" hello)" >/dev/null
for _ in $(seq 1 50); do
    "${fa[@]}" peers | grep -q udp && break
    sleep 0.1
done
"${fb[@]}" listen -n 1 4242 >/dev/null &
listener=$!
sleep 0.3
"${fa[@]}" send "$("${fb[@]}" id)" 4242 "hello" >/dev/null
"${fa[@]}" ping -c 2 -i 100 "$("${fb[@]}" id)" >/dev/null || true
wait "$listener" || true
# The inbox: one mail for ferryd (deleted), one foreign file (kept).
printf 'X-Ferry-Unit-Check: a\n\nnot a ferry mail\n' \
    >"$scratch/a/Maildir/new/1.unit"
printf 'Subject: other\n\nsomething else\n' >"$scratch/a/Maildir/new/2.unit"
# Whether mail went out (a PING to b's mail address) or only was tried.
"${fa[@]}" stats smtp.tx_connects | sed 's/^/check-unit: a: /'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    chmod 0711 "$scratch" "$scratch/a"
    chmod 0666 "$scratch/a/run/ferryd.sock"
    setpriv --reuid=65534 --regid=65534 --clear-groups "${fa[@]}" status \
        >/dev/null 2>&1 || true
fi
kill -HUP "$(pgrep -P "$trace_a" | head -n 1)"
sleep 1
"${fa[@]}" status >/dev/null
"${fa[@]}" shutdown >/dev/null
"${fb[@]}" shutdown >/dev/null
for p in "${pids[@]}"; do wait "$p" || true; done
pids=()

systemd-analyze syscall-filter --no-pager >"$scratch/groups"
grep -h '^SystemCallFilter=' "$unit" >"$scratch/filter"
python3 - "$scratch/groups" "$scratch/filter" "$scratch"/trace.* <<'EOF'
import os, re, sys

groups, cur = {}, None
for line in open(sys.argv[1]):
    t = line.strip()
    if not t or t.startswith('#'):
        continue
    if not line[0].isspace():
        cur = groups.setdefault(t, [])
    else:
        cur.append(t)

def expand(names):
    out = set()
    for n in names:
        out |= expand(groups.get(n, [])) if n.startswith('@') else {n}
    return out

# systemd's rule: the first line decides between an allow and a deny
# list; later lines add to it or take from it.
allow, deny, mode = set(), set(), None
for line in open(sys.argv[2]):
    v = line.split('=', 1)[1].strip()
    neg = v.startswith('~')
    names = expand(v.lstrip('~').split())
    if mode is None:
        mode = 'deny' if neg else 'allow'
    if mode == 'allow':
        allow = allow - names if neg else allow | names
    else:
        deny = deny | names if neg else deny - names

used = set()
for path in sys.argv[3:]:
    for line in open(path):
        m = re.match(r'\d+\s+(?:<\.\.\.\s+)?([a-z0-9_]+)[ (]', line)
        if m:
            used.add(m.group(1))
bad = sorted(s for s in used
             if (mode == 'allow' and s not in allow) or s in deny)
print('check-unit: %d distinct system calls traced' % len(used))
if os.environ.get('FERRY_UNIT_VERBOSE'):
    print(' '.join(sorted(used)))
if bad:
    print('check-unit: refused by SystemCallFilter=: ' + ' '.join(bad))
    sys.exit(1)
print('check-unit: all of them pass SystemCallFilter=')
EOF
