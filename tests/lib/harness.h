/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The integration-test harness (ferry_testlib): real ferryd processes in
 * temporary directories, each on a loopback address and port of its own,
 * and the ferry CLI run as a child with its output captured (STYLE.md
 * section 8).
 *
 * A test makes one struct harness, then up to HARNESS_MAX_DAEMONS daemons
 * (2-16 is usual). Each daemon has its own directory <harness dir>/d<N>
 * holding state/, run/ferryd.sock, ferryd.conf and ferryd.log (stdout and
 * stderr of every run, appended). The configuration the harness writes
 * sets the paths and the socket and loads NO transport; a test adds what
 * it needs with harness_daemon_transports() or harness_daemon_config()
 * before starting. Restarting keeps the state directory, and so the
 * identity.
 *
 *	struct harness *h;
 *	struct harness_daemon *a;
 *
 *	ck_assert_int_eq(harness_new("pair", &h), 0);
 *	ck_assert_int_eq(harness_daemon_new(h, &a), 0);
 *	harness_daemon_transports(a, "udp");
 *	ck_assert_int_eq(harness_daemon_start_ready(a), 0);
 *	... ferry_client via harness_daemon_client(a), or harness_run_cli ...
 *	harness_free(h); (stops the daemons, removes the directory)
 *
 * The test network. Daemon d<N> has a loopback address of its own,
 * 127.0.0.(HARNESS_ADDR_BASE + N) in d->ip (Linux answers all of
 * 127.0.0.0/8 on lo without configuration), and harness_daemon_transports
 * binds UDP and TCP there, so that each daemon is a network source of its
 * own to the others and per-source limits count per daemon, as between
 * hosts. Its port, d->port, is its own as well: free for TCP and UDP on
 * its address and never handed out twice by one test process. Distinct
 * ports, rather than one port on every address, keep a port alone naming
 * a daemon in logs and captures, and keep tests that run side by side,
 * each with a d0 on 127.0.0.10, apart. Test peers (wirepeer.h, relay.h,
 * flood.h) stay on 127.0.0.1, and 127.0.0.2 to 127.0.0.9 are left for
 * tests that want yet another source (the attacker of test_adversary_kx
 * is on 127.0.0.2). The SMTP transport is not bound: mail goes through
 * the MTA on 127.0.0.1 as before.
 *
 * Binaries come from $FERRYD and $FERRY_CLI (set by ctest), plugins from
 * $FERRY_PLUGIN_DIR. FERRY_TEST_KEEP=1 keeps the directories for a look
 * afterwards; FERRY_TEST_VERBOSE=1 (2) runs every ferryd with -v (-vv). Daemons die with the test process (PR_SET_PDEATHSIG).
 * Functions return 0 or a negative errno and never abort the test.
 */
#ifndef FERRY_TESTS_HARNESS_H
#define FERRY_TESTS_HARNESS_H

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <ferry/client.h>

/* d<N> is on 127.0.0.(HARNESS_ADDR_BASE + N): 127.0.0.10 to .249. */
#define HARNESS_ADDR_BASE        10
#define HARNESS_MAX_DAEMONS      240
#define HARNESS_READY_TIMEOUT_MS 10000 /* harness_daemon_start_ready() */
#define HARNESS_STOP_TIMEOUT_MS  10000 /* SIGTERM before SIGKILL */

struct harness;

/* One ferryd. Fields are read-only for tests, except through the
 * functions below. */
struct harness_daemon {
	struct harness *h;          /* owner */
	unsigned index;             /* N of d<N>, from 0 */
	char dir[PATH_MAX];         /* its directory */
	char state_dir[PATH_MAX];   /* [paths] STATE_DIR */
	char runtime_dir[PATH_MAX]; /* [paths] RUNTIME_DIR */
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* client */
	char config[PATH_MAX];   /* the file given with -c */
	char log[PATH_MAX];      /* stdout and stderr of every run */
	char ip[INET_ADDRSTRLEN]; /* its own, "127.0.0.10" for d0 */
	uint16_t port;           /* its own, free for TCP and UDP on ip */
	struct sockaddr_in addr; /* ip and port, for test sockets */
	pid_t pid;               /* running process, or 0 */
	int exit_status;         /* of the last run: exit code, 128+signal */
	bool use_config;         /* pass -c config (default true) */
	struct ferry_peer_id id; /* set by harness_daemon_wait_ready() */
	char id_str[FERRY_PEER_ID_STRLEN + 1]; /* the same, printable */
	char transports[64];       /* [core] TRANSPORTS, "" by default */
	char plugin_dir[PATH_MAX]; /* [core] PLUGIN_DIR; $FERRY_PLUGIN_DIR */
	char *extra;               /* configuration text added by the test */
	char **env; /* "NAME=VALUE" for the child, n_env of them */
	size_t n_env;
	char **args; /* extra ferryd arguments, n_args of them */
	size_t n_args;
	char **wrap; /* command run with ferryd's command line as its
	              * arguments (harness_daemon_wrap), n_wrap words */
	size_t n_wrap;
	char *program;   /* run in ferryd's place (harness_daemon_program),
	                  * or NULL */
	bool fresh_boot; /* its clocks start near 0 (fresh_boot()) */
};

/* What a daemon's monotonic clock reads when it starts after
 * harness_daemon_fresh_boot(), in seconds. */
#define HARNESS_BOOT_UPTIME_S 2

/* Captured result of a program run. */
struct harness_output {
	int status; /* exit code, or 128+signal */
	char *out;  /* standard output, NUL-terminated */
	size_t out_len;
	char *err; /* standard error, NUL-terminated */
	size_t err_len;
};

/* Creates /tmp/ferry-<name>-XXXXXX (or under $TMPDIR). */
int harness_new(const char *name, struct harness **ret);
/* Stops every daemon (SIGTERM, then SIGKILL), removes the directory
 * unless FERRY_TEST_KEEP is set, frees all. NULL is allowed. */
void harness_free(struct harness *h);
/* The harness's directory. */
const char *harness_dir(const struct harness *h);
/* Writes the log of every daemon to stderr (for a failing test). */
void harness_dump_logs(const struct harness *h);

/* Adds a daemon: makes its directories and picks its port; nothing runs
 * yet. The daemon belongs to h. -ENOSPC past HARNESS_MAX_DAEMONS. */
int harness_daemon_new(struct harness *h, struct harness_daemon **ret);
/* Appends printf-formatted text to its configuration file (written at
 * each start; later assignments win over the harness's). */
int harness_daemon_config(struct harness_daemon *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Forgets the text added by harness_daemon_config (from the next start
 * or reload on); transports, their bindings and the paths stay. */
int harness_daemon_config_clear(struct harness_daemon *d);
/* Sets [core] TRANSPORTS (the harness's file names it once, so use this
 * rather than harness_daemon_config for it). For "udp" and "tcp" it also
 * binds them to d->ip at d->port with an empty blacklist, so that
 * loopback peers are allowed. */
int harness_daemon_transports(struct harness_daemon *d, const char *names);
/* Sets [core] PLUGIN_DIR (default $FERRY_PLUGIN_DIR, the build's real
 * plugins), e.g. to $FERRY_TEST_PLUGIN_DIR for the loopback "test". */
int harness_daemon_plugin_dir(struct harness_daemon *d, const char *dir);
/* Sets an environment variable for the daemon's process. */
int harness_daemon_setenv(struct harness_daemon *d, const char *name,
    const char *value);
/* Adds one argument to the ferryd command line (e.g. "-v"). */
int harness_daemon_arg(struct harness_daemon *d, const char *arg);
/* Adds one word to a command prefix: from its next start, d runs as
 * "WORD... ferryd -c ...", e.g. under strace to see what it sends
 * (test_wire_marker). d->pid is then the prefix's process, and the
 * harness's SIGTERM goes to it: a prefix that does not pass it on
 * (strace does not) leaves the test to stop ferryd itself. */
int harness_daemon_wrap(struct harness_daemon *d, const char *word);
/* From its next start, runs the program at path (copied) in ferryd's
 * place with ferryd's command line: a test build of the daemon, such as
 * tests/tools/ferryd_hostile. */
int harness_daemon_program(struct harness_daemon *d, const char *path);
/* From its next start, runs d in a time namespace of its own whose
 * monotonic and boot clocks read HARNESS_BOOT_UPTIME_S seconds, as on a
 * machine that has just booted. -EPERM when this machine cannot make one
 * (it takes root and Linux 5.6); the test should then skip. */
int harness_daemon_fresh_boot(struct harness_daemon *d);
/* Whether harness_daemon_fresh_boot() can work here: 0, or -EPERM (not
 * root, Linux before 5.6, or a container that refuses the clock offsets,
 * as systemd-nspawn does). */
int harness_fresh_boot_probe(void);
/* Runs without -c and so without any configuration file; the test then
 * says where the socket will be (the path is copied). */
int harness_daemon_no_config(struct harness_daemon *d, const char *socket);

/* Writes the configuration and starts ferryd. -EALREADY if running. */
int harness_daemon_start(struct harness_daemon *d);
/* Waits until the daemon answers STATUS on its socket and records its
 * identity. -ECHILD if it exited instead (d->exit_status says how),
 * -ETIMEDOUT. */
int harness_daemon_wait_ready(struct harness_daemon *d, int timeout_ms);
/* harness_daemon_start() and _wait_ready() with the default timeout. */
int harness_daemon_start_ready(struct harness_daemon *d);
/* SIGTERM, then waits up to timeout_ms for the exit; SIGKILL after that
 * and -ETIMEDOUT. *ret_status (may be NULL) gets the exit status. */
int harness_daemon_stop(struct harness_daemon *d, int timeout_ms,
    int *ret_status);
/* SIGKILL and reap: a crash, leaving socket and lock files behind. */
int harness_daemon_kill(struct harness_daemon *d);
/* Waits for the daemon to exit by itself. -ETIMEDOUT (still running). */
int harness_daemon_wait_exit(struct harness_daemon *d, int timeout_ms,
    int *ret_status);
/* True while the process runs (reaps it if it has exited). */
bool harness_daemon_running(struct harness_daemon *d);
/* Writes the configuration again (with what the test added since) and
 * sends SIGHUP; returns once the daemon has logged the reload and answers
 * again, so the new settings are in force. -ESRCH if not running,
 * -ETIMEDOUT. */
int harness_daemon_reload(struct harness_daemon *d);
/* Stops (if running) and starts again with the same state. */
int harness_daemon_restart(struct harness_daemon *d);

/* A libferry connection to the daemon's socket; close it with
 * ferry_client_close(). */
int harness_daemon_client(const struct harness_daemon *d,
    struct ferry_client **ret);
/* The whole log so far, NUL-terminated (free it), or NULL. */
char *harness_daemon_log(const struct harness_daemon *d);
/* True if the log contains needle. */
bool harness_daemon_log_has(const struct harness_daemon *d, const char *needle);
/* Waits until the log contains needle. 0 or -ETIMEDOUT. */
int harness_daemon_wait_log(const struct harness_daemon *d, const char *needle,
    int timeout_ms);

/* Runs argv[0] (a path) with argv, feeding it stdin_data (NULL: empty
 * input), and captures its output. Killed after timeout_ms: -ETIMEDOUT.
 * Free *ret with harness_output_free(). */
int harness_run(char *const argv[], const char *stdin_data, int timeout_ms,
    struct harness_output *ret);
/* Runs the ferry CLI: "ferry --socket <d's socket> ARGS...", the list
 * ending with NULL; d NULL leaves the socket option out. 30 s timeout. */
int harness_run_cli(const struct harness_daemon *d, struct harness_output *ret,
    ...) __attribute__((sentinel));
void harness_output_free(struct harness_output *o);

/* Paths of the programs under test ($FERRYD, $FERRY_CLI, else the build
 * tree). */
const char *harness_ferryd_path(void);
const char *harness_cli_path(void);
/* A port on 127.0.0.1 free for both TCP and UDP now and not handed out
 * before by this process. */
int harness_free_port(uint16_t *ret);
/* The same on the IPv4 address ip ("127.0.0.12"). -EINVAL if ip is not
 * one. */
int harness_free_port_at(const char *ip, uint16_t *ret);
/* Fills *ret with ip ("127.0.0.12") and port. 0 or -EINVAL. */
int harness_sin(const char *ip, uint16_t port, struct sockaddr_in *ret);
/* True if a and b are the same IPv4 address and port. */
bool harness_sin_eq(const struct sockaddr_in *a, const struct sockaddr_in *b);
/* Monotonic milliseconds. */
uint64_t harness_now_ms(void);
/* Sleeps ms milliseconds. */
void harness_sleep_ms(unsigned ms);

#endif /* FERRY_TESTS_HARNESS_H */
