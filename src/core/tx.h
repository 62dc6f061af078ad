/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The send side of a peer link, core layer: queues messages, packs them
 * into encrypted frames on the best path as the congestion window and the
 * transport allow, keeps frames sent over unreliable transports in flight
 * until acknowledged, resends lost fragments, and times acknowledgements,
 * probes and keepalives. A message for an idle link leaves at the end of
 * the current event-loop turn; messages queued meanwhile share frames.
 */
#ifndef FERRY_CORE_TX_H
#define FERRY_CORE_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "core/sendq.h"

struct core;
struct path;
struct peer;
struct transport;

/* Creates the peer's events and congestion state. 0 or -ENOMEM. */
int tx_peer_init(struct peer *p);
/* Frees the queue, the frames in flight and the events. */
void tx_peer_done(struct peer *p);
/* The class of a peer's queue that holds the layers' class qclass. */
enum sendq_class tx_lane(enum core_class qclass);
/* Queues a message of the layers above in class qclass: 0, -EAGAIN
 * (that class is full; a drain notification for it follows), -ENOMEM. */
int tx_queue_data(struct peer *p, enum core_class qclass, uint16_t type,
    const void *data, size_t len);
/* Queues a control message ahead of data. 0 or -ENOMEM. */
int tx_queue_ctrl(struct peer *p, uint16_t type, const void *data,
    size_t len);
/* Asks for a flush at the end of this event-loop turn (or after CORK). */
void tx_schedule(struct peer *p);
/* Sends p a frame holding BYE alone, at once, past the queue and the
 * window: the link's keys go right after. Nothing waits for its ACK; a
 * BYE lost is a link found dead later. 0, -ENOTCONN (no keys or path),
 * or what sealing or the transport said. */
int tx_send_bye(struct peer *p);
/* Keys and a path became available. */
void tx_link_up(struct peer *p);
/* The peer restarted (new session, new keys): gives up what it had of
 * messages sent in fragments, which its new session cannot put together,
 * without sending any of it again. */
void tx_peer_restarted(struct peer *p);
/* The best path changed. */
void tx_path_changed(struct peer *p);
/* An ACK message arrived from p. */
void tx_on_ack(struct peer *p, const uint8_t *msg, size_t len);
/* A frame arrived over transport t; counter as decrypted. Schedules our
 * ACK if t is unreliable, whether or not the frame came on a path (mail
 * comes without a session: its ACK goes back over the best path). */
void tx_on_frame(struct peer *p, const struct transport *t, uint64_t counter,
    bool eliciting);
/* The layers' backlog fell: peers not held that were told a window
 * smaller by a quarter of RECV_WINDOW or more than the one we have now
 * get an ACK with it. */
void tx_window_opened(struct core *core);
/* The hold on p ended: it gets an ACK with the open window if its last
 * said less (by a quarter of RECV_WINDOW, or closed). */
void tx_peer_window_opened(struct peer *p);
/* Keepalives and link timeouts, from the maintenance tick. */
void tx_peer_tick(struct peer *p, uint64_t now_us);
/* The core's scratch for building one unit (free with free()). */
struct tx_unit *tx_unit_new(void);

#endif /* FERRY_CORE_TX_H */
