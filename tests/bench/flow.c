/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One-way flows of messages through a daemon pair (see flow.h). */
#include "flow.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Shared between sender and receiver; arrival[] and seen[] follow. */
struct flow_shared {
	volatile uint64_t send_end_ns; /* set by the sender when done */
	volatile int ready;            /* the receiver is registered */
	volatile int failed;           /* its client broke: errno */
	volatile uint64_t received;
	volatile uint64_t bytes;
	volatile uint64_t bad;
	volatile uint64_t first_ns;
	volatile uint64_t last_ns;
	volatile uint64_t cpu_ns; /* the receiver's CPU time */
};

struct flow {
	pid_t pid;
	size_t size;
	uint64_t count;
	struct flow_shared *sh;
	uint64_t *arrival; /* count entries, in the shared mapping */
	uint8_t *seen;     /* count bits, likewise */
	size_t map_len;
	uint8_t *buf; /* the sender's message */
};

static void
flow_note(struct flow *f, const struct ferry_message *m, uint64_t now)
{
	struct flow_shared *sh = f->sh;
	uint32_t idx = 0;

	memcpy(&idx, m->data, m->len < 4 ? m->len : 4);
	if (m->len != f->size || idx >= f->count ||
	    (f->seen[idx / 8] & (1u << (idx % 8))) != 0) {
		sh->bad++;
		return;
	}
	f->seen[idx / 8] |= (uint8_t)(1u << (idx % 8));
	if (sh->received == 0)
		sh->first_ns = now;
	f->arrival[sh->received] = now;
	sh->bytes += m->len;
	sh->last_ns = now;
	sh->received++;
}

static _Noreturn void
flow_receiver(struct flow *f, const struct harness_daemon *d, int cpu,
    unsigned drain_ms, uint64_t max_ns)
{
	struct flow_shared *sh = f->sh;
	uint64_t born = bench_now_ns();
	struct ferry_client *c;
	struct ferry_message m;
	int r;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (cpu != FLOW_CPU_KEEP)
		(void)bench_pin(0, cpu);
	r = bench_client(d, true, &c);
	if (r < 0) {
		sh->failed = -r;
		_exit(1);
	}
	sh->ready = 1;
	while (sh->received < f->count) {
		uint64_t now;

		r = ferry_receive(c, &m, 20);
		now = bench_now_ns();
		if (r == 0) {
			flow_note(f, &m, now);
			continue;
		}
		if (r != -ETIMEDOUT) {
			sh->failed = -r;
			_exit(2);
		}
		if ((sh->send_end_ns != 0 &&
		        now > sh->send_end_ns + drain_ms * 1000000ull) ||
		    now - born > max_ns)
			break;
	}
	ferry_client_close(c);
	sh->cpu_ns = bench_cpu_ns(0);
	_exit(0);
}

int
flow_new(const struct harness_daemon *d, int cpu, size_t size, uint64_t count,
    unsigned drain_ms, uint64_t max_ns, struct flow **ret)
{
	struct flow *f = calloc(1, sizeof(*f));
	uint8_t *p;

	if (f == NULL)
		return -ENOMEM;
	f->size = size;
	f->count = count;
	f->map_len = sizeof(*f->sh) + count * sizeof(uint64_t) + count / 8 + 1;
	f->buf = calloc(1, size > 4 ? size : 4);
	p = f->buf != NULL ? bench_shared(f->map_len) : NULL;
	if (p == NULL) {
		free(f->buf);
		free(f);
		return -ENOMEM;
	}
	f->sh = (struct flow_shared *)p;
	f->arrival = (uint64_t *)(p + sizeof(*f->sh));
	f->seen = p + sizeof(*f->sh) + count * sizeof(uint64_t);
	(void)fflush(NULL);
	f->pid = fork();
	if (f->pid == 0)
		flow_receiver(f, d, cpu, drain_ms, max_ns);
	if (f->pid < 0) {
		int r = -errno;

		flow_free(f);
		return r;
	}
	while (!f->sh->ready && !f->sh->failed)
		(void)usleep(1000);
	if (f->sh->failed) {
		int r = -f->sh->failed;

		flow_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

int
flow_run(struct flow *f, struct ferry_client *c,
    const struct ferry_peer_id *peer, struct flow_result *ret)
{
	int r = flow_send(f, c, peer, 0, ret);
	int w = flow_wait(f, ret);

	return r != 0 ? r : w;
}

int
flow_send(struct flow *f, struct ferry_client *c,
    const struct ferry_peer_id *peer, uint64_t deadline_ns,
    struct flow_result *ret)
{
	uint32_t i;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	ret->count = f->count;
	ret->start_ns = bench_now_ns();
	for (i = 0; i < f->count; i++) {
		if (deadline_ns != 0 && bench_now_ns() > deadline_ns) {
			ret->cut = true;
			break;
		}
		memcpy(f->buf, &i, f->size < 4 ? f->size : 4);
		r = ferry_send(c, peer, BENCH_APP_TYPE, f->buf, f->size);
		if (r != 0)
			break;
	}
	ret->sent = i;
	if (r == 0)
		r = ferry_flush(c);
	if (r == -ETIMEDOUT && deadline_ns != 0) {
		ret->cut = true;
		r = 0;
	}
	ret->send_end_ns = f->sh->send_end_ns = bench_now_ns();
	return r;
}

int
flow_wait(struct flow *f, struct flow_result *ret)
{
	int r = 0;

	if (bench_wait_child(f->pid) < 0)
		r = f->sh->failed ? -f->sh->failed : -ECHILD;
	f->pid = 0;
	ret->received = f->sh->received;
	ret->bytes = f->sh->bytes;
	ret->bad = f->sh->bad;
	ret->first_ns = f->sh->first_ns;
	ret->last_ns = f->sh->last_ns;
	ret->recv_cpu_ns = f->sh->cpu_ns;
	ret->arrival_ns = f->arrival;
	return r;
}

void
flow_free(struct flow *f)
{
	if (f == NULL)
		return;
	if (f->pid > 0) {
		(void)kill(f->pid, SIGKILL);
		(void)bench_wait_child(f->pid);
	}
	bench_shared_free(f->sh, f->map_len);
	free(f->buf);
	free(f);
}

void
flow_series(const uint64_t *arrival_ns, uint64_t received, uint64_t count,
    uint64_t start_ns, unsigned points, double (*ret)[2])
{
	for (unsigned k = 0; k <= points; k++) {
		uint64_t i = received * k / points;

		if (arrival_ns == NULL || received == 0) {
			ret[k][0] = NAN;
			continue;
		}
		if (i >= received)
			i = received - 1;
		ret[k][0] = (double)(arrival_ns[i] - start_ns) / 1e6;
		ret[k][1] = (double)(i + 1) / (double)count;
	}
}
