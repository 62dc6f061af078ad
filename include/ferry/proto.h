/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry wire protocol: identities, message types and layouts shared by
 * ferryd, its transports, libferry and anything else that speaks to them.
 * Every integer on the wire is big-endian; every message starts with a
 * 16-bit size (including the 4-byte header) and a 16-bit type
 * (DESIGN.md, "Protocol decisions already taken"). ferry-protocol(7)
 * specifies the peer-to-peer protocol in full (key schedule, framing of
 * each transport, state machines, limits, test vectors), ferry-client(7)
 * the client protocol.
 */
#ifndef FERRY_PROTO_H
#define FERRY_PROTO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FERRY_HDR_SIZE		4	/* u16 size, u16 type */
#define FERRY_MSG_SIZE_MAX	65535	/* largest single framed message */

/* A peer identity: BLAKE2b-256 of the peer's Ed25519 public key. */
#define FERRY_PEER_ID_LEN	32
#define FERRY_PEER_ID_STRLEN	52	/* Crockford base32, no padding */
#define FERRY_PUBKEY_LEN	32
#define FERRY_SIG_LEN		64

struct ferry_peer_id {
	uint8_t bytes[FERRY_PEER_ID_LEN];
};

/* Transport protocol numbers (the paper's protocolNumber). */
#define FERRY_PROTO_UDP		1
#define FERRY_PROTO_TCP		2
#define FERRY_PROTO_SMTP	3
#define FERRY_PROTO_TEST	0xfff0	/* test plugins only */

/* Largest transport address a HELO may carry. */
#define FERRY_ADDR_MAX		512
/* Largest application message; larger ones are refused with -EMSGSIZE. */
#define FERRY_APP_MSG_MAX	(8u * 1024 * 1024)

/*
 * Peer-to-peer: what a transport carries is a "unit", one or more of the
 * outer messages below back to back, at most the transport's MTU.
 */
#define FERRY_P2P_HELO		0x0001
#define FERRY_P2P_PING		0x0002
#define FERRY_P2P_PONG		0x0003
#define FERRY_P2P_KX		0x0004
#define FERRY_P2P_ENC		0x0005

/*
 * HELO: one signed transport address of a peer.
 *   0 u16 size  2 u16 type
 *   4 u8  pubkey[32]   Ed25519 key of the advertised peer
 *  36 u16 protocol     FERRY_PROTO_*
 *  38 u16 addr_len
 *  40 u32 mtu
 *  44 u64 expiry       seconds since the Unix epoch
 *  52 u8  addr[addr_len]
 *     u8  sig[64]      Ed25519 over "ferry helo v1" NUL ||
 *                      bytes 0..52+addr_len
 */
#define FERRY_HELO_FIXED	(52 + FERRY_SIG_LEN)

/*
 * PING: asks the advertised peer to prove an address.
 *   4 u8  target[32]   peer id the address is claimed for
 *  36 u8  challenge[16]
 *  52 u16 protocol
 *  54 u16 addr_len
 *  56 u8  addr[addr_len]
 *     u8  pad[]        zeros, so that the PING is never smaller than the
 *                      PONG it asks for (no amplification)
 * At 96 + addr_len bytes a PING is smaller than the HELO that names its
 * address (116 + addr_len), so a forged HELO cannot amplify either.
 */
#define FERRY_PING_FIXED	56
#define FERRY_CHALLENGE_LEN	16

/*
 * PONG: the advertised peer's signed answer. It carries no key: the
 * pinger checks it against the key of the HELO it pinged for.
 *   4 u8  challenge[16]
 *  20 u16 protocol
 *  22 u16 addr_len
 *  24 u64 expiry       seconds since the epoch; the signer vouches until then
 *  32 u8  addr[addr_len]
 *     u8  sig[64]      Ed25519 over "ferry pong v1" NUL ||
 *                      bytes 0..32+addr_len
 */
#define FERRY_PONG_FIXED	(32 + FERRY_SIG_LEN)

/*
 * KX: one half of the authenticated ephemeral key exchange.
 *   4 u8  pubkey[32]     sender's identity key
 *  36 u8  receiver[32]   receiver's peer id
 *  68 u8  ephemeral[32]  sender's X25519 ephemeral public key
 * 100 u64 timestamp      µs since the epoch, strictly increasing per sender
 * 108 u32 sender_index   index the sender wants in ENC frames sent to it
 * 112 u32 flags          FERRY_KX_F_*
 * 116 u8  echo[16]       BLAKE2b-128 of the receiver's ephemeral key the
 *                        sender holds, zeros if none
 * 132 u8  sig[64]        Ed25519 over "ferry kx v1" NUL ||
 *                        bytes 0..132
 */
#define FERRY_KX_SIZE		196
#define FERRY_KX_ECHO_LEN	16
#define FERRY_KX_F_AESGCM	0x1	/* sender can do AES-256-GCM */

/*
 * ENC: an encrypted frame holding inner messages.
 *   4 u32 receiver_index
 *   8 u32 key_id          names the sending key (first 4 bytes of a
 *                         keyed BLAKE2b of it)
 *  12 u64 counter         nonce; counts the frames of one direction of a
 *                         link, across rekeys, and is never reused
 *  20 ciphertext || tag[16]
 * Associated data: bytes 0..20. Nonce: 4 zero bytes || counter.
 */
#define FERRY_ENC_HDR		20
#define FERRY_ENC_TAG		16
#define FERRY_ENC_OVERHEAD	(FERRY_ENC_HDR + FERRY_ENC_TAG)

/* Inner messages, inside ENC only. */
#define FERRY_MSG_HELO		0x0001	/* gossip; layout as FERRY_P2P_HELO */
#define FERRY_MSG_ACK		0x0010
#define FERRY_MSG_FRAG		0x0011
#define FERRY_MSG_ECHO_REQ	0x0012
#define FERRY_MSG_ECHO_RESP	0x0013
#define FERRY_MSG_KEEPALIVE	0x0014
#define FERRY_MSG_PAD		0x0015
#define FERRY_MSG_BYE		0x0016	/* the sender dropped the link */
#define FERRY_MSG_DHT_MIN	0x0100	/* 0x0100-0x01ff: DHT */
/* DHT requests, routed hop by hop toward their key (ferry-protocol(7)) */
#define FERRY_MSG_DHT_PUT	0x0101
#define FERRY_MSG_DHT_GET	0x0102
#define FERRY_MSG_DHT_FIND	0x0103
#define FERRY_MSG_DHT_RPUT	0x0104	/* a signed record at a topic */
#define FERRY_MSG_DHT_RGET	0x0105	/* the records at a topic */
/* DHT answers, to the requester directly or back along the path */
#define FERRY_MSG_DHT_RECEIPT	0x0110
#define FERRY_MSG_DHT_BLOCK	0x0111
#define FERRY_MSG_DHT_NODES	0x0112
#define FERRY_MSG_DHT_FAIL	0x0113
#define FERRY_MSG_DHT_ACK	0x0114	/* a large answer follows */
#define FERRY_MSG_DHT_RECORDS	0x0115	/* records, answering RGET */
#define FERRY_MSG_STORAGE_MIN	0x0200	/* 0x0200-0x02ff: storage */
#define FERRY_MSG_IMD_MIN	0x0300	/* 0x0300-0x03ff: intermediaries */
#define FERRY_MSG_IMD_MAX	0x03ff
/* The federation of intermediaries (ferry-protocol(7)) */
#define FERRY_MSG_IMD_HERE	0x0301	/* a client takes its receipts here */
#define FERRY_MSG_IMD_ENTRIES	0x0302	/* its queued entries, forwarded */
#define FERRY_MSG_IMD_ACK	0x0303	/* entries held up to a cursor */
#define FERRY_APP_TYPE_MIN	0x0400	/* applications: 0x0400-0xffff */

/*
 * BYE: no body. The sender dropped the link by its own choice (a layer
 * above chose its neighbours) and forgot the link's keys; the receiver
 * drops the link too and no longer wants it: it links again only when its
 * link policy decides so afresh. A peer that never hears it finds the
 * link dead by its silence, or links anew at its next key exchange.
 */

/*
 * ECHO_REQ / ECHO_RESP: core-level round trip, answered by the peer's core.
 *   4 u64 nonce  12 u8 payload[]   (the response echoes both)
 */
#define FERRY_ECHO_FIXED	12

/*
 * Client protocol, on the daemon's UNIX stream socket. Frames use the same
 * {u16 size, u16 type} header. Requests carry a client-chosen u32 req_id
 * right after the header, echoed by the reply. A request is answered by
 * its own reply type or by RESULT; list replies end with RESULT status 0.
 * Strings are UTF-8 without a terminating NUL; their length is what is left
 * of the frame unless a length field says otherwise.
 */
/* RESULT: u32 req_id, i32 status (0 or -errno), str message */
#define FERRY_C_RESULT		0x0001
#define FERRY_C_STATUS_REQ	0x0002	/* u32 req_id */
#define FERRY_C_STATUS		0x0003	/* see FERRY_C_STATUS_FIXED */
#define FERRY_C_SHUTDOWN	0x0004	/* u32 req_id */
#define FERRY_C_REGISTER	0x0005	/* u32 req_id, u16 types[] */
#define FERRY_C_SEND		0x0006	/* see FERRY_C_SEND_FIXED */
#define FERRY_C_RECEIVE		0x0007	/* see FERRY_C_RECEIVE_FIXED */
#define FERRY_C_PEERS_REQ	0x0008	/* u32 req_id */
#define FERRY_C_PEER		0x0009	/* see FERRY_C_PEER_FIXED */
#define FERRY_C_HELLO_REQ	0x000a	/* u32 req_id */
#define FERRY_C_HELLO		0x000b	/* u32 req_id, str uri */
#define FERRY_C_CONNECT		0x000c	/* u32 req_id, str uri */
#define FERRY_C_PING		0x000d	/* see FERRY_C_PING_FIXED */
#define FERRY_C_PONG		0x000e	/* see FERRY_C_PONG_SIZE */
#define FERRY_C_STATS_REQ	0x000f	/* u32 req_id */
#define FERRY_C_STAT		0x0010	/* u32 req_id, u64 value, str name */
/* The DHT (ferry-client(7)): requests and their replies */
#define FERRY_C_DHT_PUT		0x0011	/* see FERRY_C_DHT_PUT_FIXED */
#define FERRY_C_DHT_STORED	0x0012	/* see FERRY_C_DHT_STORED_FIXED */
#define FERRY_C_DHT_GET		0x0013	/* see FERRY_C_DHT_GET_SIZE */
#define FERRY_C_DHT_BLOCK	0x0014	/* see FERRY_C_DHT_BLOCK_FIXED */
#define FERRY_C_DHT_FIND	0x0015	/* see FERRY_C_DHT_FIND_SIZE */
#define FERRY_C_DHT_NODE	0x0016	/* see FERRY_C_DHT_NODE_SIZE */
#define FERRY_C_DHT_STATUS_REQ	0x0017	/* u32 req_id */
#define FERRY_C_DHT_STATUS	0x0018	/* see FERRY_C_DHT_STATUS_FIXED */
/* Files (ferry-client(7)): requests and their replies */
#define FERRY_C_FILE_PUT	0x0019	/* see FERRY_C_FILE_PUT_FIXED; + an fd */
#define FERRY_C_FILE_GET	0x001a	/* see FERRY_C_FILE_GET_FIXED; + an fd */
#define FERRY_C_FILE_PROGRESS	0x001b	/* see FERRY_C_FILE_PROGRESS_SIZE */
#define FERRY_C_FILE_DONE	0x001c	/* see FERRY_C_FILE_DONE_FIXED */
#define FERRY_C_TRANSFERS_REQ	0x001d	/* u32 req_id */
#define FERRY_C_TRANSFER	0x001e	/* see FERRY_C_TRANSFER_FIXED */
#define FERRY_C_CANCEL		0x001f	/* see FERRY_C_CANCEL_SIZE */

/*
 * STATUS:
 *   4 u32 req_id  8 u8 id[32]  40 u64 uptime_ms  48 u16 n_transports
 *  50 u16 version_len  52 u8 version[version_len]
 *  then n_transports times: u16 protocol, u16 name_len, u32 mtu, u32 cost,
 *  u8 name[name_len]
 */
#define FERRY_C_STATUS_FIXED	52
#define FERRY_C_STATUS_TRANSPORT_FIXED 12

/*
 * SEND (client to daemon) and RECEIVE (daemon to client):
 *   4 u32 req_id (SEND only; 0 asks for no RESULT)
 *   then: u8 peer[32], u16 app_type, u16 flags, u32 total_len, u32 offset,
 *   u8 data[]
 * A message longer than one frame travels as consecutive frames with equal
 * peer, app_type and total_len and offsets that add up; nothing else may be
 * interleaved on the same connection in the same direction until the last
 * piece (offset + data == total_len) has been sent.
 */
#define FERRY_C_SEND_FIXED	52
#define FERRY_C_RECEIVE_FIXED	48

/*
 * PEER: 4 u32 req_id  8 u8 id[32]  40 u64 age_ms  48 u16 protocol
 *  50 u16 transport_len  52 u8 transport[transport_len]  u8 address[]
 */
#define FERRY_C_PEER_FIXED	52

/*
 * PING: 4 u32 req_id  8 u8 peer[32]  40 u32 count  44 u16 payload_len
 *  46 u16 reserved  48 u32 timeout_ms
 * PONG: 4 u32 req_id  8 u32 count  12 u64 total_ns  20 u64 min_ns
 *  28 u64 max_ns
 */
#define FERRY_C_PING_FIXED	52
#define FERRY_C_PONG_SIZE	36

#define FERRY_C_STAT_FIXED	16

/*
 * DHT blocks are immutable and named by their key, BLAKE2b-256 of their
 * bytes, in the space of peer ids. A daemon may refuse blocks above its
 * own limit (its [dht] MAX_BLOCK); none is larger than FERRY_DHT_BLOCK_MAX.
 */
#define FERRY_DHT_KEY_LEN	32
#define FERRY_DHT_BLOCK_MAX	(4u * 1024 * 1024)
#define FERRY_DHT_REPL_MAX	16	/* storing peers a PUT may ask for */
#define FERRY_DHT_FIND_MAX	32	/* peers a FIND may ask for */
#define FERRY_DHT_HASH_LEN	32	/* a receipt's put_hash */

/*
 * DHT_PUT: stores a block at the peers closest to its key.
 *   4 u32 req_id  8 u8 replication (0: the daemon's default, at most
 *   FERRY_DHT_REPL_MAX)  9 u8 reserved (0)  10 u16 reserved (0)
 *  12 u64 expiry (seconds since the epoch; 0: the daemon's default
 *   lifetime)  20 u32 total_len (1..FERRY_DHT_BLOCK_MAX)  24 u32 offset
 *  28 u8 data[]
 * A block longer than one frame travels as consecutive pieces with equal
 * replication, expiry and total_len and offsets that add up, as SEND's
 * do; nothing else may be sent in between. Answered once, with the
 * req_id of the last piece.
 */
#define FERRY_C_DHT_PUT_FIXED	28

/*
 * DHT_STORED: the receipts a PUT got, before its RESULT (0 or -EIO).
 *   4 u32 req_id  8 u8 key[32]  40 u8 count  41 u8 replication (asked)
 *  42 u16 reserved (0), then count receipts of FERRY_C_DHT_RECEIPT_SIZE:
 *   u8 storer[32]  u64 expiry  u8 put_hash[32]  u8 storer_pk[32]
 *   u8 sig[64]
 * sig is Ed25519 by storer_pk, whose peer id is storer, over
 * "ferry dht receipt v1" NUL || key || storer_pk || expiry || put_hash
 * (ferry-protocol(7)).
 */
#define FERRY_C_DHT_STORED_FIXED 44
#define FERRY_C_DHT_RECEIPT_SIZE (32 + 8 + FERRY_DHT_HASH_LEN + \
				  FERRY_PUBKEY_LEN + FERRY_SIG_LEN)

/* DHT_GET: 4 u32 req_id  8 u8 key[32] */
#define FERRY_C_DHT_GET_SIZE	40

/*
 * DHT_BLOCK: the block a GET found, in pieces as RECEIVE's, before its
 * RESULT 0.
 *   4 u32 req_id  8 u32 total_len  12 u32 offset  16 u8 data[]
 */
#define FERRY_C_DHT_BLOCK_FIXED	16

/*
 * DHT_FIND: the peers closest to a key.
 *   4 u32 req_id  8 u8 key[32]  40 u16 want (1..FERRY_DHT_FIND_MAX)
 *  42 u16 reserved (0)
 * Answered by one DHT_NODE per peer, closest first, then RESULT 0.
 * DHT_NODE: 4 u32 req_id  8 u8 id[32]
 */
#define FERRY_C_DHT_FIND_SIZE	44
#define FERRY_C_DHT_NODE_SIZE	40

/*
 * DHT_STATUS:
 *   4 u32 req_id  8 u16 k  10 u16 replication  12 u32 entries
 *  16 u32 cached  20 u32 buckets_used  24 u64 blocks  32 u64 bytes
 *  40 u64 quota  48 u16 n  50 u16 reserved (0)
 *  then n times: u16 prefix (the bucket), u16 entries
 */
#define FERRY_C_DHT_STATUS_FIXED 52
#define FERRY_C_DHT_BUCKET_SIZE	4
/*
 * After the buckets, DHT_STATUS may carry sections, each
 *   u16 kind  u16 len  then len bytes
 * that a client skips when it does not know its kind. Kinds:
 * FERRY_C_DHT_SECTION_BPCC, present when [dht] CONGESTION = bpcc:
 *   0 u32 queue  4 u32 block_max_ms  8 u32 depth  12 u32 blocked
 *  16 u32 held  20 u32 reserved (0)  24 u64 holds  32 u64 releases
 *  40 u64 block_timeouts  48 u64 failed_over  56 u64 fails
 *  64 u64 overflow  72 u16 m  74 u16 reserved (0)
 *  then m times: u8 id[32]  u32 depth  u32 blocked_ms  u8 flags
 *  (FERRY_DHT_BPCC_*)  u8 reserved[3] (0)
 * FERRY_C_DHT_SECTION_CC, always: the congestion control of the daemon's
 * requests ([dht] CONGESTION); a scheme's figures it does not keep are 0:
 *   0 u8 scheme (FERRY_DHT_CC_*)  1 u8 reserved (0)  2 u16 reserved (0)
 *   4 u32 waiting  8 u32 in_flight  12 u32 credits (thousandths)
 *  16 u32 ssthresh (thousandths)  20 u32 rtt_us  24 u32 rto_us
 *  28 u32 reserved (0)  32 u64 retransmits  40 u64 losses  48 u64 drops
 *  56 u64 duplicates  64 u64 refused
 */
#define FERRY_C_DHT_SECTION_HDR	4
#define FERRY_C_DHT_SECTION_BPCC 0x0001
#define FERRY_C_DHT_SECTION_CC	0x0002
#define FERRY_C_DHT_CC_SIZE	72
#define FERRY_DHT_CC_NONE	0	/* [dht] CONGESTION = none */
#define FERRY_DHT_CC_CSCC	1	/* cscc */
#define FERRY_DHT_CC_BPCC	2	/* bpcc */
#define FERRY_C_DHT_BPCC_FIXED	76
#define FERRY_C_DHT_BPCC_PEER_SIZE 44
#define FERRY_C_DHT_BPCC_PEERS_MAX 1024 /* neighbours listed at most */
#define FERRY_DHT_BPCC_BLOCKED	0x01 /* its last send was refused */
#define FERRY_DHT_BPCC_STALLED	0x02 /* given up at BPCC_BLOCK_MAX */
#define FERRY_DHT_BPCC_HELD	0x04 /* the daemon holds it */

/*
 * Files: a file put into the DHT as sealed chunks under a manifest, named
 * by a URI "ferry:f1...." (ferry-storage(7)), and got back from it. The
 * daemon never opens a path: FILE_PUT and FILE_GET each carry one open
 * file descriptor (SCM_RIGHTS ancillary data on the sendmsg(2) that
 * writes the frame's first byte). FILE_PUT's is the file, open for
 * reading; FILE_GET's is the file to fill (the client's "NAME.part"),
 * open for reading and writing, not O_APPEND, which the client renames
 * only once told of success.
 *
 * FILE_PUT: 4 u32 req_id  8 u8 replication (0: the daemon's)
 *   9 u8 reserved (0)  10 u16 reserved (0)  12 u32 progress_ms (0: no
 *   FILE_PROGRESS)  16 u8 label[] (a name for TRANSFERS, at most 255
 *   bytes; not sent to any peer)
 * FILE_GET: 4 u32 req_id  8 u32 progress_ms  12 u32 reserved (0)
 *   16 u8 uri[]
 * Answered by FILE_PROGRESS frames every progress_ms while it runs, then
 * FILE_DONE and RESULT 0, or RESULT -errno with a sentence.
 */
#define FERRY_C_FILE_PUT_FIXED	16
#define FERRY_C_FILE_GET_FIXED	16
#define FERRY_C_FILE_LABEL_MAX	255
#define FERRY_C_FILE_URI_MAX	1024

/*
 * FILE_PROGRESS: 4 u32 req_id  8 u64 id (the transfer)  16 u64 bytes_done
 *  24 u64 bytes_total  32 u64 blocks_done  40 u64 blocks_total (so far
 *  known)  48 u64 rate (bytes/s)  56 u32 in_flight  60 u32 window
 *  64 u32 peers  68 u32 reserved (0)
 */
#define FERRY_C_FILE_PROGRESS_SIZE 72

/*
 * FILE_DONE: 4 u32 req_id  8 u64 id  16 u64 size  24 u64 blocks_sent
 *  32 u64 blocks_skipped  40 u8 xxh128[16]  56 u8 uri[]
 */
#define FERRY_C_FILE_DONE_FIXED	56

/*
 * TRANSFER: one per transfer the client may see (its own; an admin's:
 * all), then RESULT 0.
 *   4 u32 req_id  8 u64 id  16 u8 kind (1 put, 2 get)  17 u8 state
 *  (1 running, 2 resumable)  18 u16 reserved (0)  20 u32 uid
 *  24 u64 bytes_done  32 u64 bytes_total  40 u64 updated (s since the
 *  epoch)  48 u8 label[]
 */
#define FERRY_C_TRANSFER_FIXED	48
#define FERRY_XFER_PUT		1
#define FERRY_XFER_GET		2
#define FERRY_XFER_RUNNING	1
#define FERRY_XFER_RESUMABLE	2

/* CANCEL: 4 u32 req_id  8 u64 id. RESULT 0, -ENOENT. */
#define FERRY_C_CANCEL_SIZE	16

#ifdef __cplusplus
}
#endif

#endif /* FERRY_PROTO_H */
