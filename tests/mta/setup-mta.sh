#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The SMTP transport's test MTA (issue 5): Postfix listening on 127.0.0.1:25
# only, delivering only to local users, never relaying, and handing each
# test user's mail to procmail, which files mail carrying the user's filter
# line into an inbox ferry reads: a Maildir or a FIFO. Debian 12, as root,
# without systemd (postfix start / reload). Idempotent.
#
#   setup-mta.sh                         install (apt-get), configure, start
#   setup-mta.sh user NAME MODE FILTER [keep]
#                                        (re)make test user NAME; prints the
#                                        inbox path. MODE: maildir | fifo.
#                                        keep: procmail also files a copy
#                                        of every mail for the inbox in
#                                        the Maildir $HOME/Kept, which the
#                                        reader does not consume (for tests
#                                        that search all mail sent)
#   setup-mta.sh status                  exit 0 if Postfix answers on :25
#
# Test-run tagging: a test passes a FILTER that names its run (for example
# "X-Ferry-Test: 4711-1732272000-a"). The user's recipe matches only that
# line, so mail deferred during an earlier run (a FIFO without reader) that
# Postfix redelivers later lands in NAME's $HOME/Mailbox, not in the inbox;
# and ferry, configured with the same FILTER, would refuse it anyway.
# `user` also empties the inbox of what earlier runs left.
#
# Traps this avoids (all measured; see ferry-smtp(7)):
# - procmail's ':0:' append to a FIFO tries a kernel lock on it, fails and
#   sleeps 1 s per mail, and with no reader blocks until Postfix kills it
#   and bounces the mail. The FIFO mode pipes to fifo-write instead: it
#   opens the FIFO non-blocking and exits 75 (EX_TEMPFAIL) when nobody
#   reads, so Postfix defers and retries.
# - procmail run by Postfix as the user cannot lock /var/mail/USER, so
#   unmatched mail goes to $HOME/Mailbox.
# - mailbox_size_limit also limits what a mailbox_command writes (it is a
#   file size rlimit): unlimited here, message_size_limit is what counts.
#
# Environment:
#   FERRY_MTA_DIR         homes and inboxes of test users  (/var/tmp/ferry-mta)
#   FERRY_MTA_LOG         Postfix log (postlogd)           (/var/log/ferry-mta.log)
#   FERRY_MTA_RETRY       retry delay of deferred mail     (3s)
#   FERRY_MTA_MAX_BACKOFF longest retry delay              (15s)
#   FERRY_MTA_SIZE        message_size_limit               (10240000, Postfix's)
#   FERRY_MTA_NO_INSTALL  1: never call apt-get
#
# Exit status: 0 ready, 1 failed, 77 cannot run here (not root, or Postfix
# missing and no apt-get): tests skip on 77 unless FERRY_REQUIRE_MTA=1.

set -euo pipefail
[ -n "${FERRY_MTA_TRACE:-}" ] && { PS4='+ $EPOCHREALTIME '; set -x; }

DIR=${FERRY_MTA_DIR:-/var/tmp/ferry-mta}
LOG=${FERRY_MTA_LOG:-/var/log/ferry-mta.log}
RETRY=${FERRY_MTA_RETRY:-3s}
MAX_BACKOFF=${FERRY_MTA_MAX_BACKOFF:-15s}
SIZE=${FERRY_MTA_SIZE:-10240000}
LIBEXEC=/usr/local/lib/ferry-mta
WRITER=$LIBEXEC/fifo-write

say() { echo "setup-mta: $*" >&2; }
cannot() { say "$*"; exit 77; }

[ "$(id -u)" = 0 ] || cannot "must run as root"

# ------------------------------------------------------------------ install
install_packages() {
    command -v postfix >/dev/null 2>&1 && command -v procmail >/dev/null 2>&1 \
        && return 0
    [ "${FERRY_MTA_NO_INSTALL:-0}" = 1 ] \
        && cannot "postfix or procmail missing and FERRY_MTA_NO_INSTALL=1"
    command -v apt-get >/dev/null 2>&1 \
        || cannot "postfix or procmail missing and no apt-get to install them"
    say "installing postfix and procmail"
    # Answer the postfix package's questions before it asks them.
    debconf-set-selections <<'EOF'
postfix postfix/main_mailer_type select Local only
postfix postfix/mailname string localhost
postfix postfix/destinations string localhost
postfix postfix/protocols select ipv4
postfix postfix/relayhost string
EOF
    local opts=(-y -q --no-install-recommends
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install "${opts[@]}" postfix procmail >/dev/null; then
        apt-get update -q >/dev/null
        apt-get install "${opts[@]}" postfix procmail >/dev/null
    fi
}

# -------------------------------------------------------------- configure
configure_postfix() {
    local procmail
    procmail=$(command -v procmail)
    # Loopback only, local delivery only: anything for another domain
    # fails in the error transport, so nothing can leave the machine.
    postconf -e \
        "inet_interfaces = loopback-only" \
        "inet_protocols = ipv4" \
        "mydestination = localhost, localhost.localdomain, \$myhostname" \
        "mynetworks = 127.0.0.0/8" \
        "relayhost =" \
        "default_transport = error:ferry test MTA, local delivery only" \
        "relay_transport = error:ferry test MTA, local delivery only" \
        "smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination" \
        "smtpd_tls_security_level = none" \
        "smtp_tls_security_level = none" \
        "mailbox_command = $procmail -a \"\$EXTENSION\"" \
        "mailbox_size_limit = 0" \
        "message_size_limit = $SIZE" \
        "recipient_delimiter = +" \
        "command_time_limit = 60s" \
        "queue_run_delay = $RETRY" \
        "minimal_backoff_time = $RETRY" \
        "maximal_backoff_time = $MAX_BACKOFF" \
        "biff = no" \
        "maillog_file = $LOG"
    # maillog_file needs the postlogd service (in Debian's master.cf since
    # Postfix 3.4; add it to an older one).
    grep -qE '^postlog[[:space:]]' /etc/postfix/master.cf \
        || echo 'postlog   unix-dgram n  -       n       -       1       postlogd' \
            >>/etc/postfix/master.cf
    touch "$LOG"
    [ -f /etc/aliases ] || echo 'postmaster: root' >/etc/aliases
    # newaliases can take seconds: only when the table is out of date
    [ /etc/aliases.db -nt /etc/aliases ] || newaliases
}

# The FIFO writer procmail pipes to. perl-base is Essential on Debian.
install_writer() {
    install -d -m 0755 "$LIBEXEC"
    cat >"$WRITER.tmp" <<'EOF'
#!/usr/bin/perl
# fifo-write FIFO: appends the message on stdin, mbox style, to FIFO for a
# reader that may be absent. Exit 0 once the reader has taken all of it
# from the pipe; 75 (EX_TEMPFAIL: Postfix defers and retries) when no
# process reads the FIFO or the reader does not take the message within
# 30 s. Waiting for the pipe to drain matters: bytes still in a pipe are
# lost when its last holder closes it, and a writer that left early would
# have told Postfix "delivered". Writers take turns through an flock on
# FIFO.lock, as a message over PIPE_BUF bytes is not written atomically.
use strict;
use warnings;
use Fcntl qw(:DEFAULT :flock);

my $fifo = shift @ARGV or exit 64;
binmode STDIN;
my $msg = do { local $/; <STDIN> };
$msg = '' unless defined $msg;
# The reader splits the stream at "From " lines: make sure there is one,
# and a blank line after the message as in an mbox file.
$msg = 'From MAILER-DAEMON ' . scalar(gmtime) . "\n" . $msg
    unless $msg =~ /\AFrom /;
$msg .= "\n" unless $msg =~ /\n\z/;
$msg .= "\n" unless $msg =~ /\n\n\z/;

$SIG{ALRM} = sub { exit 75 };
$SIG{PIPE} = 'IGNORE';
alarm 30;
sysopen(my $lock, "$fifo.lock", O_RDWR | O_CREAT, 0600) or exit 75;
flock($lock, LOCK_EX) or exit 75;
# ENXIO at once when nobody has the FIFO open for reading.
sysopen(my $out, $fifo, O_WRONLY | O_NONBLOCK) or exit 75;
my $flags = fcntl($out, F_GETFL, 0) or exit 75;
fcntl($out, F_SETFL, $flags & ~O_NONBLOCK) or exit 75;
binmode $out;
my $off = 0;
while ($off < length $msg) {
    my $n = syswrite($out, $msg, length($msg) - $off, $off);
    exit 75 unless defined $n;
    $off += $n;
}
# FIONREAD (0x541B on Linux) counts the bytes still in the pipe.
my $left = pack('i', 0);
while (ioctl($out, 0x541B, $left) && unpack('i', $left) > 0) {
    select(undef, undef, undef, 0.002);
}
close $out or exit 75;
exit 0;
EOF
    chmod 0755 "$WRITER.tmp"
    mv -f "$WRITER.tmp" "$WRITER"
}

config_sum() {
    cat /etc/postfix/main.cf /etc/postfix/master.cf /etc/aliases | md5sum
}

# Whether Postfix's master runs, without `postfix status` (which can take
# seconds when it waits to log).
master_running() {
    local pid
    pid=$(tr -d ' ' </var/spool/postfix/pid/master.pid 2>/dev/null) &&
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

start_postfix() {
    # Nothing changed and running: done (the tests call this often).
    if [ "$(config_sum)" = "$1" ] && master_running; then
        wait_port
        return
    fi
    # Debian keeps copies of /etc files in the chroot; refresh them as
    # its init script would.
    if [ -x /usr/lib/postfix/configure-instance.sh ]; then
        /usr/lib/postfix/configure-instance.sh - >/dev/null 2>&1 || true
    fi
    postfix check
    if postfix status >/dev/null 2>&1; then
        postfix reload >/dev/null 2>&1
    else
        postfix start >/dev/null 2>&1
    fi
    wait_port
}

port_open() {
    (exec 3<>/dev/tcp/127.0.0.1/25) 2>/dev/null
}

wait_port() {
    local i
    for i in $(seq 1 100); do
        port_open && return 0
        sleep 0.1
    done
    say "Postfix does not answer on 127.0.0.1:25 (see $LOG)"
    exit 1
}

# ------------------------------------------------------------- test users
# procmail regular expression matching the literal text $1
regex_quote() {
    printf '%s' "$1" | sed -e 's/[][\\.*+?^$|(){}]/\\&/g'
}

make_user() {
    local name=$1 mode=$2 filter=$3 keep=${4:-} home inbox rc re
    case "$name" in
        *[!a-z0-9_-]* | [!a-z]* | ?????????????????????????????????*)
            say "user name '$name': lower-case letters, digits, - and _, up to 32"
            exit 1 ;;
    esac
    case "$mode" in maildir | fifo) ;; *)
        say "mode '$mode': maildir or fifo"; exit 1 ;;
    esac
    case "$keep" in "" | keep) ;; *)
        say "'$keep': keep or nothing"; exit 1 ;;
    esac
    if [[ "$filter" == *[$'\r\n']* ]] ||
        ! printf '%s' "$filter" | LC_ALL=C grep -qE '^[!-9;-~]+: *[^ ].*$'; then
        say "filter '$filter': expected a header line 'Name: value'"
        exit 1
    fi
    port_open || { say "Postfix is not running: run setup-mta.sh first"; exit 1; }

    home=$DIR/$name
    install -d -m 0755 "$DIR"
    if ! id "$name" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir "$home" \
            --shell /usr/sbin/nologin "$name"
    fi
    install -d -o "$name" -g "$name" -m 0755 "$home"
    # Start each run with an empty inbox.
    rm -rf "$home/Maildir" "$home/inbox.fifo" "$home/inbox.fifo.lock" \
        "$home/Kept" "$home/Mailbox"
    if [ "$keep" = keep ]; then
        install -d -o "$name" -g "$name" -m 0755 \
            "$home/Kept" "$home/Kept/tmp" "$home/Kept/new" "$home/Kept/cur"
    fi
    if [ "$mode" = maildir ]; then
        inbox=$home/Maildir
        install -d -o "$name" -g "$name" -m 0755 \
            "$inbox" "$inbox/tmp" "$inbox/new" "$inbox/cur"
    else
        inbox=$home/inbox.fifo
        mkfifo -m 0600 "$inbox"
        chown "$name:$name" "$inbox"
    fi

    re=$(regex_quote "$filter")
    rc=$home/.procmailrc
    {
        echo "# setup-mta.sh: $mode inbox for mail carrying '$filter'"
        echo "SHELL=/bin/sh"
        echo "PATH=/usr/bin:/bin"
        echo "MAILDIR=$home"
        echo "DEFAULT=$home/Mailbox"
        echo "LOGFILE=$home/procmail.log"
        echo "UMASK=022"
        echo ""
        if [ "$keep" = keep ]; then
            # A carbon copy (c): the recipe below still delivers.
            printf ':0 c\n* ^%s$\nKept/\n\n' "$re"
        fi
        if [ "$mode" = maildir ]; then
            # Maildir (trailing slash): written to tmp/, then linked into
            # new/; never blocks, and waits while no reader runs.
            printf ':0\n* ^%s$\nMaildir/\n' "$re"
        else
            # No lock flag: fifo-write serialises writers itself. When it
            # fails (no reader), stop with EX_TEMPFAIL so Postfix defers.
            printf ':0 w\n* ^%s$\n| %s %s\n\n' "$re" "$WRITER" "$inbox"
            printf ':0 e\n* ^%s$\n{\n  EXITCODE=75\n  HOST\n}\n' "$re"
        fi
    } >"$rc.tmp"
    chown "$name:$name" "$rc.tmp"
    chmod 0644 "$rc.tmp"
    mv -f "$rc.tmp" "$rc"
    echo "$inbox"
}

case "${1:-setup}" in
    setup)
        install_packages
        before=$(config_sum)
        configure_postfix
        install_writer
        install -d -m 0755 "$DIR"
        start_postfix "$before"
        say "ready: Postfix on 127.0.0.1:25, log $LOG, inboxes under $DIR"
        ;;
    user)
        [ $# -eq 4 ] || [ $# -eq 5 ] ||
            { say "usage: setup-mta.sh user NAME MODE FILTER [keep]"; exit 1; }
        command -v postfix >/dev/null 2>&1 || cannot "Postfix is not installed"
        make_user "$2" "$3" "$4" "${5:-}"
        ;;
    status)
        port_open
        ;;
    *)
        say "usage: setup-mta.sh [setup | user NAME MODE FILTER [keep] | status]"
        exit 1
        ;;
esac
