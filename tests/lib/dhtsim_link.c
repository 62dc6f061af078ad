/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The links of the fake DHT network (dhtsim.h): each node's records of
 * its peers, links coming up and going down, and each way of a link as a
 * FIFO of messages with a delay, a rate and a cap, which its peer takes
 * unless it holds the sender (env.hold), is stopped or is busy with the
 * one before (cfg.proc_us), and the drains owed to the senders a full
 * way refused.
 */
#include "dhtsim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"

struct dhtsim_link *
dhtsim_link_rec(const struct dhtsim *s, int a, int b, bool create)
{
	struct dhtsim_node *n = &s->nodes[a];
	struct dhtsim_link *l = map_get(n->links, &b, sizeof(b));

	if (l != NULL || !create)
		return l;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->peer = b;
	l->cfg = s->cfg.link;
	if (map_put(n->links, &l->peer, sizeof(l->peer), l) < 0) {
		free(l);
		return NULL;
	}
	l->next = n->link_list;
	n->link_list = l;
	return l;
}

static bool
sim_pair_valid(const struct dhtsim *s, int a, int b)
{
	return a != b && a >= 0 && b >= 0 && a < s->n && b < s->n;
}

bool
dhtsim_linked(const struct dhtsim *s, int a, int b)
{
	const struct dhtsim_link *l = dhtsim_link_rec(s, a, b, false);

	return l != NULL && l->up;
}

struct dhtsim_link
dhtsim_link_get(const struct dhtsim *s, int a, int b)
{
	const struct dhtsim_link *l = dhtsim_link_rec(s, a, b, false);
	struct dhtsim_link none = { .peer = b, .cfg = s->cfg.link };

	return l != NULL ? *l : none;
}

int
dhtsim_pin(struct dhtsim *s, int a, int b, bool pinned)
{
	struct dhtsim_link *l = dhtsim_link_rec(s, a, b, true);

	if (l == NULL)
		return -ENOMEM;
	l->pinned = pinned;
	return 0;
}

/* An event of kind (a link's coming up or going down) for a about b,
 * then for b about a. */
static int
sim_push_pair(struct dhtsim *s, enum dhtsim_kind kind, int a, int b)
{
	struct dhtsim_event e = { .kind = kind, .from = a, .to = b };
	int r = dhtsim_q_push(s, &e);

	e.from = b;
	e.to = a;
	return r < 0 ? r : dhtsim_q_push(s, &e);
}

int
dhtsim_link(struct dhtsim *s, int a, int b)
{
	struct dhtsim_link *la, *lb;
	struct dhtsim_node *na, *nb;
	int r;

	if (!sim_pair_valid(s, a, b))
		return -EINVAL;
	na = &s->nodes[a];
	nb = &s->nodes[b];
	la = dhtsim_link_rec(s, a, b, true);
	lb = dhtsim_link_rec(s, b, a, true);
	if (la == NULL || lb == NULL)
		return -ENOMEM;
	if (la->up) {
		la->asked = true;
		return 0;
	}
	if (!na->alive || !nb->alive || na->unreachable || nb->unreachable)
		return 0; /* asked in vain, as of a peer that never answers */
	/* An event that made it alone finds the link down: nothing. */
	r = sim_push_pair(s, SIM_UP, a, b);
	if (r < 0)
		return r;
	la->asked = true;
	la->up = lb->up = true;
	la->known = lb->known = true;
	la->born_us = lb->born_us = s->now_us;
	return 0;
}

void
dhtsim_cut(struct dhtsim *s, int a, int b, bool tell)
{
	struct dhtsim_link *la = dhtsim_link_rec(s, a, b, false);
	struct dhtsim_link *lb = dhtsim_link_rec(s, b, a, false);

	if (la == NULL || lb == NULL || !la->up)
		return;
	la->up = lb->up = false;
	la->asked = lb->asked = false;
	if (!tell)
		return;
	/* Without memory a side does not hear of it: as a lost message. */
	(void)sim_push_pair(s, SIM_DOWN, a, b);
}

void
dhtsim_cut_all(struct dhtsim *s, int i, bool tell)
{
	for (struct dhtsim_link *l = s->nodes[i].link_list; l != NULL;
	     l = l->next)
		dhtsim_cut(s, i, l->peer, tell);
}

/* The heap of the turns not due yet: earliest first, then in the order
 * of their sends, so that ties keep one order from run to run. */

static bool
due_before(const struct dhtsim_due *x, const struct dhtsim_due *y)
{
	return x->at_us < y->at_us || (x->at_us == y->at_us && x->seq < y->seq);
}

static int
due_push(struct dhtsim *s, uint64_t at_us, int from, int to)
{
	struct dhtsim_due d = { at_us, s->due_seq++, from, to };
	size_t i;

	if (s->n_due == s->cap_due) {
		size_t cap = s->cap_due ? s->cap_due * 2 : 256;
		struct dhtsim_due *h = realloc(s->due, cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		s->due = h;
		s->cap_due = cap;
	}
	for (i = s->n_due++; i > 0 && due_before(&d, &s->due[(i - 1) / 2]);
	     i = (i - 1) / 2)
		s->due[i] = s->due[(i - 1) / 2];
	s->due[i] = d;
	return 0;
}

static void
due_pop(struct dhtsim *s)
{
	struct dhtsim_due last = s->due[--s->n_due];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < s->n_due) {
		if (c + 1 < s->n_due && due_before(&s->due[c + 1], &s->due[c]))
			c++;
		if (!due_before(&s->due[c], &last))
			break;
		s->due[i] = s->due[c];
		i = c;
	}
	if (s->n_due > 0)
		s->due[i] = last;
}

void
dhtsim_link_due(struct dhtsim *s)
{
	while (s->n_due > 0 && s->due[0].at_us <= s->now_us) {
		struct dhtsim_event e = { .kind = SIM_MSG,
			.from = s->due[0].from,
			.to = s->due[0].to };

		if (dhtsim_q_push(s, &e) < 0)
			return; /* the next step tries again */
		due_pop(s);
	}
}

uint64_t
dhtsim_link_next_us(const struct dhtsim *s)
{
	return s->n_due > 0 ? s->due[0].at_us : UINT64_MAX;
}

/* The way l of node a to its peer: at its cap for a message of type. */
static bool
link_full(const struct dhtsim_link *l, uint16_t type)
{
	uint64_t room = dhtmsg_is_answer(type) ? l->cfg.answer_room : 0;

	return l->cfg.cap != DHTSIM_NO_CAP && l->n_msgs >= l->cfg.cap + room;
}

/* Puts a copy of body on the way l of node a, due once sent at its rate
 * after those before it and carried for its delay, and gives it its
 * turn: in the queue now if it is due, else when it is. 0 or -ENOMEM. */
static int
link_put(struct dhtsim *s, struct dhtsim_link *l, int a, uint16_t type,
    const void *body, size_t len)
{
	const struct dhtsim_link_cfg *c = &l->cfg;
	struct dhtsim_msg *m = malloc(sizeof(*m) + len);
	struct dhtsim_event e = { .kind = SIM_MSG, .from = a, .to = l->peer };
	uint64_t start = l->free_us > s->now_us ? l->free_us : s->now_us;
	uint64_t sent = start + (c->rate > 0 ? len * 1000000 / c->rate : 0);
	uint64_t at = sent + c->delay_us;
	int r;

	if (m == NULL)
		return -ENOMEM;
	/* A way keeps its order, even when its delay shrinks. */
	if (at < l->last_us)
		at = l->last_us;
	r = at <= s->now_us ? dhtsim_q_push(s, &e)
	                    : due_push(s, at, a, l->peer);
	if (r < 0) {
		free(m);
		return r;
	}
	m->next = NULL;
	m->at_us = at;
	m->sent_us = s->now_us;
	m->seq = s->send_seq++;
	m->type = type;
	m->len = len;
	if (len > 0)
		memcpy(m->body, body, len);
	if (l->tail != NULL)
		l->tail->next = m;
	else
		l->head = m;
	l->tail = m;
	l->n_msgs++;
	l->free_us = sent;
	l->last_us = at;
	return 0;
}

/* If the way l of node a fell to half its cap after refusing a send, a
 * hears of it (not while it is stopped: once it goes on). */
static void
link_drain(struct dhtsim *s, struct dhtsim_link *l, int a)
{
	struct dhtsim_node *n = &s->nodes[a];

	if (!l->owed ||
	    (l->cfg.cap != DHTSIM_NO_CAP && l->n_msgs > l->cfg.cap / 2))
		return;
	if (!n->alive || n->stopped)
		return;
	l->owed = false;
	s->c.drains++;
	dht_drained(n->dht, &s->nodes[l->peer].id);
}

/* Whether node b, which holds a (back, its record of a), leaves m, a's
 * message to it. With hold latency a hold is a notice that takes the
 * way's delay to reach a: what a sent before then is under way, and b
 * takes it, as ferryd's core delivers the frames in flight when it
 * closes its window to a held peer. */
static bool
link_held(const struct dhtsim *s, const struct dhtsim_link *back,
    const struct dhtsim_msg *m)
{
	if (back == NULL || !back->holds)
		return false;
	if (!s->cfg.hold_latency)
		return true;
	return m->sent_us > back->hold_from_us ||
	    (m->sent_us == back->hold_from_us && m->seq >= back->hold_seq);
}

/* The messages left on the way l of node a get their turns again. */
static void
link_unstall(struct dhtsim *s, struct dhtsim_link *l, int a)
{
	struct dhtsim_event e = { .kind = SIM_MSG, .from = a, .to = l->peer };

	while (l->n_stalled > 0 && dhtsim_q_push(s, &e) == 0)
		l->n_stalled--;
}

int
dhtsim_send(struct dhtsim *s, int a, int b, uint16_t type, const void *body,
    size_t len)
{
	struct dhtsim_link *l = dhtsim_link_rec(s, a, b, false);
	struct dhtsim_event e = { .kind = SIM_MSG,
		.from = a,
		.to = b,
		.type = type,
		.len = len };
	enum dhtsim_verdict v = DHTSIM_DELIVER;
	int r;

	if (l == NULL || !l->up)
		return -ENOTCONN;
	if (s->filter != NULL)
		v = s->filter(s->filter_arg, a, b, type, len);
	if (v == DHTSIM_FULL) {
		s->c.full++;
		return -EAGAIN;
	}
	if (v == DHTSIM_DROP) {
		s->c.dropped++;
		return 0;
	}
	if (v == DHTSIM_HOLD) {
		e.body = malloc(len ? len : 1);
		if (e.body == NULL)
			return -ENOMEM;
		memcpy(e.body, body, len);
		r = dhtsim_keep(&s->held, &s->n_held, &s->cap_held, &e);
		if (r < 0)
			free(e.body);
		s->c.held += r == 0;
		return r;
	}
	if (link_full(l, type)) {
		l->owed = true;
		s->c.refused++;
		return -EAGAIN;
	}
	return link_put(s, l, a, type, body, len);
}

void
dhtsim_release(struct dhtsim *s)
{
	for (size_t i = 0; i < s->n_held; i++) {
		struct dhtsim_event *e = &s->held[i];
		struct dhtsim_link *l =
		    dhtsim_link_rec(s, e->from, e->to, false);

		/* What does not fit is lost on the way. */
		if (l == NULL ||
		    link_put(s, l, e->from, e->type, e->body, e->len) < 0)
			s->c.dropped++;
		free(e->body);
	}
	s->n_held = 0;
}

void
dhtsim_link_turn(struct dhtsim *s, int a, int b)
{
	struct dhtsim_link *l = dhtsim_link_rec(s, a, b, false);
	struct dhtsim_link *back = dhtsim_link_rec(s, b, a, false);
	struct dhtsim_node *to = &s->nodes[b];
	struct dhtsim_msg *m;

	if (l == NULL || l->head == NULL)
		return;
	if (to->alive && (to->stopped || link_held(s, back, l->head))) {
		l->n_stalled++;
		return;
	}
	/* Busy with the one before: its turn comes again then, behind
	 * those that came before it. */
	if (to->alive && to->busy_us > s->now_us) {
		if (due_push(s, to->busy_us, a, b) < 0)
			l->n_stalled++; /* the next to hold or stop frees it */
		return;
	}
	m = l->head;
	l->head = m->next;
	if (l->head == NULL)
		l->tail = NULL;
	l->n_msgs--;
	if (to->alive && back != NULL && back->up) {
		to->busy_us = s->now_us + s->cfg.proc_us;
		back->heard_us = s->now_us;
		s->c.delivered++;
		/* FNV-1a's step over what makes this delivery this one. */
		s->c.trace = (s->c.trace ^ s->now_us) * 0x100000001b3ull;
		s->c.trace = (s->c.trace ^ ((uint64_t)a << 32 | (uint32_t)b)) *
		    0x100000001b3ull;
		s->c.trace = (s->c.trace ^ ((uint64_t)m->type << 48 | m->len)) *
		    0x100000001b3ull;
		dht_receive(to->dht, &s->nodes[a].id, m->type, m->body, m->len);
	} else {
		s->c.dropped++; /* to a dead node, or the link went down */
	}
	free(m);
	link_drain(s, l, a);
}

int
dhtsim_link_set(struct dhtsim *s, int a, int b,
    const struct dhtsim_link_cfg *cfg)
{
	struct dhtsim_link *l;

	if (!sim_pair_valid(s, a, b) || cfg == NULL)
		return -EINVAL;
	l = dhtsim_link_rec(s, a, b, true);
	if (l == NULL)
		return -ENOMEM;
	l->cfg = *cfg;
	link_drain(s, l, a);
	return 0;
}

const struct dhtsim_msg *
dhtsim_link_msgs(const struct dhtsim *s, int a, int b)
{
	const struct dhtsim_link *l = dhtsim_link_rec(s, a, b, false);

	return l != NULL ? l->head : NULL;
}

int
dhtsim_hold(struct dhtsim *s, int a, int b, bool hold)
{
	struct dhtsim_link *l, *back;

	if (!sim_pair_valid(s, a, b))
		return -EINVAL;
	l = dhtsim_link_rec(s, a, b, true);
	back = dhtsim_link_rec(s, b, a, true);
	if (l == NULL || back == NULL)
		return -ENOMEM;
	if (hold && !l->holds) {
		/* b hears of it one delay of the way to it later. */
		l->hold_from_us = s->now_us + l->cfg.delay_us;
		l->hold_seq = s->send_seq;
	}
	l->holds = hold;
	if (!hold && !s->nodes[a].stopped)
		link_unstall(s, back, b);
	return 0;
}

void
dhtsim_link_resume(struct dhtsim *s, int i)
{
	for (int a = 0; a < s->n; a++) {
		struct dhtsim_link *l, *back;

		if (a == i || (l = dhtsim_link_rec(s, a, i, false)) == NULL)
			continue;
		back = dhtsim_link_rec(s, i, a, false);
		if (back == NULL || !back->holds)
			link_unstall(s, l, a);
	}
	for (struct dhtsim_link *l = s->nodes[i].link_list; l != NULL;
	     l = l->next)
		link_drain(s, l, i);
}

void
dhtsim_links_free(struct dhtsim_node *n)
{
	struct dhtsim_link *l, *ln;
	struct dhtsim_msg *m, *mn;

	for (l = n->link_list; l != NULL; l = ln) {
		ln = l->next;
		for (m = l->head; m != NULL; m = mn) {
			mn = m->next;
			free(m);
		}
		free(l);
	}
	n->link_list = NULL;
	map_free(n->links);
	n->links = NULL;
}
