#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Stops the test MTA of setup-mta.sh.
#   teardown-mta.sh           postfix stop; queue, users and inboxes stay
#   teardown-mta.sh --purge   also deletes queued mail, the test users made
#                             by `setup-mta.sh user`, $FERRY_MTA_DIR and the log
# Postfix stops its own processes: nothing is killed by name.

set -euo pipefail

DIR=${FERRY_MTA_DIR:-/var/tmp/ferry-mta}
LOG=${FERRY_MTA_LOG:-/var/log/ferry-mta.log}

[ "$(id -u)" = 0 ] || { echo "teardown-mta: must run as root" >&2; exit 1; }
command -v postfix >/dev/null 2>&1 || { echo "teardown-mta: no postfix"; exit 0; }

if postfix status >/dev/null 2>&1; then
    postfix stop >/dev/null 2>&1 || true
    for _ in $(seq 1 100); do
        postfix status >/dev/null 2>&1 || break
        sleep 0.1
    done
    echo "teardown-mta: postfix stopped"
fi

[ "${1:-}" = --purge ] || exit 0

postsuper -d ALL >/dev/null 2>&1 || true
if [ -d "$DIR" ]; then
    # Only users whose home is a directory of ours were made by us.
    for home in "$DIR"/*/; do
        name=$(basename "$home")
        if [ "$(getent passwd "$name" | cut -d: -f6)" = "${home%/}" ]; then
            userdel "$name" >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$DIR"
fi
: >"$LOG" 2>/dev/null || true
echo "teardown-mta: purged queue, test users, $DIR and $LOG"
