#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Proves .ci/check-layers.sh catches what it should: runs it over a small
# fixture tree with one allowed and one forbidden include of each kind.
#
# Usage: tests/ci/check-layers-selftest.sh PATH/TO/check-layers.sh

set -euo pipefail

check=${1:?usage: $0 PATH/TO/check-layers.sh}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ferry-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

put() { # put FILE LINE...
    mkdir -p "$tmp/$(dirname "$1")"
    local f=$1
    shift
    printf '%s\n' "$@" >"$tmp/$f"
}

# Allowed.
put src/lib/a.c '#include "lib/a.h"' '#include <stdio.h>' '#include <sodium.h>'
put src/core/b.c '#include "core/b_int.h"' '#include "lib/a.h"' '#include <ferry/proto.h>'
put src/service/c.c '#include "core/core.h"' '#  include "service/c.h"'
put src/daemon/d.c '#include "service/service.h"' '#include "daemon/sd.h"'
put src/cli/e.c '#include <ferry/client.h>' '#include "lib/a.h"' '#include "cli/e.h"'
put plugins/udp/f.c '#include <ferry/transport.h>' '#include "lib/buf.h"' '#include "f_int.h"' '#include <event2/event.h>'
put include/ferry/g.h '#include <stdint.h>' '#include <ferry/proto.h>'
put src/remote/i.c '#include "storage/chunk.h"' '#include "intermediary/imdwire.h"' '#include "remote/remote_int.h"'
put tests/unit/h.c '#include "core/b_int.h"' '#include "../../src/x.c"'

if ! out=$(bash "$check" "$tmp" 2>&1); then
    echo "FAIL: a clean tree was refused:"
    echo "$out"
    exit 1
fi

# Forbidden, one line each; the expected file:line follows each case.
put src/lib/bad1.c '#include "core/core.h"'
put src/core/bad2.c '#include <stdio.h>' '#include "service/service.h"'
put src/service/bad3.c '#include "daemon/x.h"'
put src/core/bad4.c '#include "../lib/a.h"'
put src/service/bad5.c '#include "core/core_int.h"'
put src/cli/bad6.c '#include "libferry/libferry_int.h"'
put src/libferry/bad7.c '#include "core/core.h"'
put plugins/tcp/bad8.c '#include "core/transport.h"'
put include/ferry/bad9.h '#include "lib/buf.h"'
put src/weird/bad10.c '#include <stdio.h>'
put src/storage/bad11.c '#include <service/x.h>'
put src/remote/bad12.c '#include "intermediary/imd.h"'

expected="include/ferry/bad9.h:1
plugins/tcp/bad8.c:1
src/cli/bad6.c:1
src/core/bad2.c:2
src/core/bad4.c:1
src/lib/bad1.c:1
src/libferry/bad7.c:1
src/remote/bad12.c:1
src/service/bad3.c:1
src/service/bad5.c:1
src/storage/bad11.c:1
src/weird/bad10.c:1"

status=0
out=$(bash "$check" "$tmp" 2>&1) || status=$?
if [ "$status" -ne 1 ]; then
    echo "FAIL: check-layers exited $status on a tree with violations:"
    echo "$out"
    exit 1
fi
got=$(printf '%s\n' "$out" | grep -E '^[^ ]+:[0-9]+: ' | cut -d: -f1,2 | sort)
if [ "$got" != "$expected" ]; then
    echo "FAIL: violations reported differ from those planted."
    diff <(echo "$expected") <(echo "$got") || true
    echo "--- full output:"
    echo "$out"
    exit 1
fi
echo "check-layers self-test: all 12 planted violations found, nothing else"
