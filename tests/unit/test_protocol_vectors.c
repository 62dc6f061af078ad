/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The test vectors of ferry-protocol(7), built by the real code from fixed
 * identity seeds, ephemeral keys, clocks and challenge: the peer ids and
 * their base32 form, a HELO and its ferry:// URI, a PING and its PONG, the
 * two KX of a first exchange, the key schedule and the first ENC frame,
 * under AES-256-GCM and under ChaCha20-Poly1305, an ACK, a FRAG and the
 * TCP welcome. Each is compared with the hex below and with the block the
 * page prints under the same name (a roff comment ".\" vector: NAME" before
 * its display), so that neither the code nor the page can drift alone. On
 * a mismatch the code's bytes are printed as the page lays them out;
 * FERRY_VECTORS_PRINT=1 prints them all and checks nothing, for when the
 * protocol changes on purpose.
 * The TCP framing is built into its plugin, which unit tests do not link,
 * so its one source file is compiled in here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include <ferry/proto.h>

#include "lib/base32.h"
#include "lib/wire.h"
#include "core/ack.h"
#include "core/batch.h"
#include "core/frag.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/link.h"
#include "core/pingpong.h"
#include "core/rx.h"
#include "core/sendq.h"
#include "dht/dhtmsg.h"
#include "intermediary/imdwire.h"
#include "intermediary/fedmsg.h"
#include "unit.h"
#include "vector_page.h"

#include "../../plugins/tcp/tcp_frame.c"

#define PAGE "man/ferry-protocol.7"

/* The clocks of the example: 2026-01-01 00:00:00 UTC. */
#define NOW_S       1767225600ull
#define HELO_EXPIRY (NOW_S + 12 * 3600) /* HELO_LIFETIME */
#define PONG_EXPIRY (NOW_S + 3600)      /* VALIDATION_LIFETIME */
#define KX_A_TS     (NOW_S * 1000000)
#define KX_B_TS     (KX_A_TS + 250000)
#define KX_A2_TS    (KX_B_TS + 250000)
#define MONO0       1000000000ull
#define A_INDEX     0x1a2b3c4du
#define B_INDEX     0x5e6f7081u
#define APP_TYPE    0x0400
#define APP_BODY    "hello"
#define ADDR_V4     "\x04\x7f\x00\x00\x01\x08\x26" /* 127.0.0.1:2086 */
#define ADDR_LEN    7
#define UDP_MTU     1452

/*
 * The expected bytes, as hex. The page prints the same bytes; a vector
 * that changes here must change there (and the code's change be one the
 * protocol means to make).
 */
static const struct vector vectors[] = {
	{ "id_a",
	    "9d24e2eeaf27c2a088a564a32fc03a882dcd9804dbc0d03a"
	    "119491e54ba0c933",
	    false },
	{ "id_b",
	    "25843b3a196efcefbf5b1390d78db52babc290f100cb8455"
	    "508ebcfb9923ba58",
	    false },
	{ "id_a_base32",
	    "KMJE5VNF4Z1A1255CJHJZG1TH0PWV604VF0D0EGHJJ8YAJX0"
	    "S4SG",
	    true },
	{ "id_b_base32",
	    "4P23PEGSDVYEZFTV2E8DF3DN5ENW547H035R8NAGHTYFQ693"
	    "Q9C0",
	    true },
	{ "helo_a",
	    "007b000103a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b800010007000005ac00000000"
	    "695661c0047f00000108266d0c5b601ecfc80dbac2ba00be"
	    "26b5c3a6b7bfba4b9848d30efcb0baefc3a414a021f388c7"
	    "aa8d7cc7d19833e0027aec8f6866c6ac07f6608331dfde74"
	    "448508",
	    false },
	{ "uri_a",
	    "ferry://KMJE5VNF4Z1A1255CJHJZG1TH0PWV604VF0D0EGH"
	    "JJ8YAJX0S4SG/01XG0083M43VZWYE22Z1TW6X33KMQG4SCZJ"
	    "DCC4VMM6NY7EWGSJ14N9HQ00020070000BB0000000TAPC70"
	    "08ZR0000GG9KD1HDP07PFS06VNGNT02Z2DDE3MTVVZEJBK14"
	    "D63QWP2XEZGX42JG23WW8RYN8TZ67T6C37R02FBP8YT36RTP"
	    "0FXK0GCRXZQKM8J2GG",
	    true },
	{ "ping_b",
	    "006700029d24e2eeaf27c2a088a564a32fc03a882dcd9804"
	    "dbc0d03a119491e54ba0c933808182838485868788898a8b"
	    "8c8d8e8f00010007047f0000010826000000000000000000"
	    "000000000000000000000000000000000000000000000000"
	    "00000000000000",
	    false },
	{ "pong_a",
	    "00670003808182838485868788898a8b8c8d8e8f00010007"
	    "000000006955c710047f0000010826d0c6930467b47c1347"
	    "92ffc438995a2ab065ea3a9d7fe8e0b897e1c7d2d84e5176"
	    "e59af79253eb4fb1c100f847bfafd5fc268291e60354c069"
	    "2ff5c6294ba605",
	    false },
	{ "eph_a",
	    "79a631eede1bf9c98f12032cdeadd0e7a079398fc786b88c"
	    "c846ec89af85a51a",
	    false },
	{ "eph_b",
	    "675dd574ed7789310b3d2e7681f3790b466c773b1521fecf"
	    "36577958371ea52f",
	    false },
	{ "gcm_kx_a",
	    "00c4000403a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b825843b3a196efcefbf5b1390"
	    "d78db52babc290f100cb8455508ebcfb9923ba5879a631ee"
	    "de1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89"
	    "af85a51a00064748462040001a2b3c4d0000000100000000"
	    "0000000000000000000000006204ff7bb3340dba5495e52e"
	    "328d35f4e5c6bf101f483f08938b99c49f5a40e4afc6bed7"
	    "390603c51c7c189cf87e95a5a77b01eae5afb339569b442b"
	    "b1bb9901",
	    false },
	{ "gcm_kx_b",
	    "00c4000429acbae141bccaf0b22e1a94d34d0bc7361e526d"
	    "0bfe12c89794bc9322966dd79d24e2eeaf27c2a088a564a3"
	    "2fc03a882dcd9804dbc0d03a119491e54ba0c933675dd574"
	    "ed7789310b3d2e7681f3790b466c773b1521fecf36577958"
	    "371ea52f00064748462410905e6f70810000000169e7a057"
	    "162c5799cbe4de4acee8467ee4e4d792930e487ac6b5eda3"
	    "7ac3f26c96b55527e732039640179450a7e52ee59b0519fc"
	    "aa729d485c4299bb404b10ec43c4d9358765088abb9df4b7"
	    "ad0aa900",
	    false },
	{ "gcm_kx_a2",
	    "00c4000403a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b825843b3a196efcefbf5b1390"
	    "d78db52babc290f100cb8455508ebcfb9923ba5879a631ee"
	    "de1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89"
	    "af85a51a000647484627e1201a2b3c4d00000001330a35fa"
	    "81e7e852b9c27b6418e05026741315cd9423c9c1f76a205c"
	    "04d0c5c04d59a66997c3a03bc450eabd7b93eec1203d4302"
	    "92c5b1b27a673e3472c2b878c453df4be4babc2f523cdb1f"
	    "e8eb6c0e",
	    false },
	{ "gcm_dh",
	    "d6fb939511b2381bc8599b4b8edc5968829450dfd7a87aeb"
	    "e78a703cd04cd54e",
	    false },
	{ "gcm_okm",
	    "ce29a78e3187d7374c1154a7bff7bf64c314e6f7f33c5678"
	    "d921a53a8f1a1e69c846bfb36703987918daaff4f47252c8"
	    "d199b3819bc110ab8d1fa2c73bdce0a6",
	    false },
	{ "gcm_key_ids", "362d1a04a5b068a7", false },
	{ "gcm_enc_a",
	    "003100055e6f7081362d1a0400000000000000003f014ddd"
	    "b4662e393cab8eda29544f6f7d8eb8bd640a99462c0ed55a"
	    "1a",
	    false },
	{ "chacha_kx_a",
	    "00c4000403a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b825843b3a196efcefbf5b1390"
	    "d78db52babc290f100cb8455508ebcfb9923ba5879a631ee"
	    "de1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89"
	    "af85a51a00064748462040001a2b3c4d0000000000000000"
	    "000000000000000000000000ed0bc45f2d86fb230301a0e9"
	    "a4925dfffe284f6782cd85bb22c8a63fbe1c105b83f8c235"
	    "d0ccd7d9c000c05076dd07f1ad93d1f52a6633b52b81b125"
	    "1efc6208",
	    false },
	{ "chacha_kx_b",
	    "00c4000429acbae141bccaf0b22e1a94d34d0bc7361e526d"
	    "0bfe12c89794bc9322966dd79d24e2eeaf27c2a088a564a3"
	    "2fc03a882dcd9804dbc0d03a119491e54ba0c933675dd574"
	    "ed7789310b3d2e7681f3790b466c773b1521fecf36577958"
	    "371ea52f00064748462410905e6f70810000000069e7a057"
	    "162c5799cbe4de4acee8467e51bc589380f65045b12d28f4"
	    "4e1208b589c327363e38a7767aced51418fdbe254c912be4"
	    "ee8c401d07b0c50f585672ce9b1ad12e411a49674e18cb37"
	    "56a31807",
	    false },
	{ "chacha_okm",
	    "36fedc0e007aa26a872935c9ce9fdd80e1a81238eb65eab0"
	    "864a87daad969c3a9b2db564eae8ce86c023ba57b07ae1ed"
	    "c256e22d497512a41f6d7e6df6bf88ac",
	    false },
	{ "chacha_key_ids", "f0bb5383aa07d017", false },
	{ "chacha_enc_a",
	    "003100055e6f7081f0bb53830000000000000000e1967c6a"
	    "45809847a116be089fce18822ecb2f0ea0f57d0f0f91628b"
	    "b0",
	    false },
	{ "ack_b",
	    "0024001000200000000003e8000000000000000300000001"
	    "000100000000000100000002",
	    false },
	{ "frag_a",
	    "0024001101020304000186a0000000000400000000010203"
	    "0405060708090a0b0c0d0e0f",
	    false },
	{ "dht_put_a",
	    "010014000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93300000300000000006b49d20003a107bff3ce10be"
	    "1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"
	    "55615e6bf4c5a44ea59d4d838884fd2e6d269b7b319a07e7"
	    "e7a91529d9d7fc5f869f11558e6910dc97e2bd742cb2db37"
	    "dbe4a73535ef5cf2d106512fe68d6c040000000566657272"
	    "79",
	    false },
	{ "dht_put_candidate_a",
	    "010213010102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93300000300000000006b49d20003a107bff3ce10be"
	    "1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"
	    "55615e6bf4c5a44ea59d4d838884fd2e6d269b7b319a07e7"
	    "e7a91529d9d7fc5f869f11558e6910dc97e2bd742cb2db37"
	    "dbe4a73535ef5cf2d106512fe68d6c040000000566657272"
	    "79",
	    false },
	{ "dht_put_hash",
	    "201167a88ac7764a14c4db56285188216d831e7d19131f61"
	    "a92589e62d5a056b",
	    false },
	{ "dht_receipt_b",
	    "010000000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93325843b3a196efcefbf5b1390d78db52babc290f1"
	    "00cb8455508ebcfb9923ba58000000006b49d200201167a8"
	    "8ac7764a14c4db56285188216d831e7d19131f61a92589e6"
	    "2d5a056b29acbae141bccaf0b22e1a94d34d0bc7361e526d"
	    "0bfe12c89794bc9322966dd72349782983afa5bb34c891d2"
	    "03769ffaefca8f5c79249f599e41df5ca77ca63c1a248ba1"
	    "c283f1426f7c9914804b9b24ecd0fa4110ed1a3972e35904"
	    "362c040d",
	    false },
	{ "dht_fail_rate_b",
	    "010000000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93325843b3a196efcefbf5b1390d78db52babc290f1"
	    "00cb8455508ebcfb9923ba580004",
	    false },
	{ "dht_fail_busy_b",
	    "010000000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93325843b3a196efcefbf5b1390d78db52babc290f1"
	    "00cb8455508ebcfb9923ba580008",
	    false },
	{ "dht_ack_b",
	    "010000000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93325843b3a196efcefbf5b1390d78db52babc290f1"
	    "00cb8455508ebcfb9923ba58",
	    false },
	{ "dht_rput_a",
	    "010014000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c9330000030003a107bff3ce10be1d70dd18e74bc099"
	    "67e4d6309ba50d5f1ddc8664125531b80006651728988000"
	    "000000006b49e0100009612e6578616d706c65ab65af67da"
	    "1b9ff7f10267581975849c97e23384e6fef07a26c6a4e6dd"
	    "bd93fa902acf97c832d6bc3e94561b10bbf5a333c0eff4aa"
	    "bc6673ab1846a32301fc07",
	    false },
	{ "dht_rput_hash",
	    "ac70a742b7a5ee4a041e899c09a45100b637ceb3fbd77d50"
	    "a6208e545b7b6947",
	    false },
	{ "dht_records_b",
	    "010000000102030405060708be586f7d12901bd697879b26"
	    "d53a79b7e535106d4f1dfe4390352f7f59bb62d19d24e2ee"
	    "af27c2a088a564a32fc03a882dcd9804dbc0d03a119491e5"
	    "4ba0c93325843b3a196efcefbf5b1390d78db52babc290f1"
	    "00cb8455508ebcfb9923ba58000103a107bff3ce10be1d70"
	    "dd18e74bc09967e4d6309ba50d5f1ddc8664125531b80006"
	    "651728988000000000006b49e0100009612e6578616d706c"
	    "65ab65af67da1b9ff7f10267581975849c97e23384e6fef0"
	    "7a26c6a4e6ddbd93fa902acf97c832d6bc3e94561b10bbf5"
	    "a333c0eff4aabc6673ab1846a32301fc07",
	    false },
	{ "imd_topic",
	    "c1e2241ca3e723262731c81c338dd73005a1ca500dd8e37c"
	    "a9098a09d24d7b5e",
	    false },
	{ "imd_announce_a", "011168747470733a2f2f612e6578616d706c65", false },
	{ "imd_here_b",
	    "0100001c03a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b8000000006955b90000010203"
	    "0405060708090a0b0c0d0e0fbe6bee4a63f9e49d906fcf14"
	    "38e00175f056b54482a8ddf18784091aedc0983d6694d863"
	    "15ffbe23904782df9eb9345146464ee029862e235f927f94"
	    "760559042f76312f72656365697074733f61667465723d30"
	    "26776169743d3330",
	    false },
	{ "imd_entries_a",
	    "0100000103a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b80000000000000001be586f7d"
	    "12901bd697879b26d53a79b7e535106d4f1dfe4390352f7f"
	    "59bb62d11111111111111111111111111111111111111111"
	    "11111111111111111111111129acbae141bccaf0b22e1a94"
	    "d34d0bc7361e526d0bfe12c89794bc9322966dd700000000"
	    "6b49d200ee6c02d635ccc57dd11985244a0d3f430efd8068"
	    "4abd10d398b36c50c2326cd025977df9207c88322bd8bf39"
	    "f2038ca9958a69858b10b5fd62d78b4429c1a403",
	    false },
	{ "imd_ack_b",
	    "0100000003a107bff3ce10be1d70dd18e74bc09967e4d630"
	    "9ba50d5f1ddc8664125531b80000000000000001",
	    false },
	{ "tcp_welcome_a",
	    "4645525259544350000100009d24e2eeaf27c2a088a564a3"
	    "2fc03a882dcd9804dbc0d03a119491e54ba0c933",
	    false },
};

#define N_VECTORS (sizeof(vectors) / sizeof(vectors[0]))

static struct vector_page page = { PAGE, vectors, N_VECTORS, false, NULL };

static struct identity *id_a, *id_b;

static void
test_setup(void)
{
	uint8_t seed[32];

	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)i;
	ck_assert_int_eq(identity_from_seed(seed, &id_a), 0);
	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(0x20 + i);
	ck_assert_int_eq(identity_from_seed(seed, &id_b), 0);
	vector_page_load(&page);
}

static void
test_teardown(void)
{
	identity_free(id_a);
	identity_free(id_b);
	vector_page_done(&page);
	id_a = id_b = NULL;
}

/* Checks what the code made against the test's hex and the page's. */
static void
check_vector(const char *name, const void *got, size_t len)
{
	vector_page_check(&page, name, got, len);
}

static void
check_text(const char *name, const char *text)
{
	check_vector(name, text, strlen(text));
}

START_TEST(test_identities)
{
	char s[FERRY_PEER_ID_STRLEN + 1];
	struct ferry_peer_id back;

	check_vector("id_a", id_a->id.bytes, FERRY_PEER_ID_LEN);
	check_vector("id_b", id_b->id.bytes, FERRY_PEER_ID_LEN);
	check_text("id_a_base32", id_a->id_str);
	check_text("id_b_base32", id_b->id_str);
	/* The spellings a reader must accept too: lower case, O for 0, I
	 * and L for 1. */
	memcpy(s, id_a->id_str, sizeof(s));
	for (char *c = s; *c != '\0'; c++) {
		if (*c == '0')
			*c = 'o';
		else if (*c == '1')
			*c = (c - s) % 2 ? 'I' : 'l';
		else
			*c = (char)tolower((unsigned char)*c);
	}
	ck_assert_int_eq(peer_id_parse(s, &back), 0);
	ck_assert_int_eq(peer_id_cmp(&back, &id_a->id), 0);
}
END_TEST

/* A's UDP HELO for 127.0.0.1:2086. */
static int
make_helo_a(uint8_t *out, size_t max)
{
	return helo_build(id_a, FERRY_PROTO_UDP, UDP_MTU, HELO_EXPIRY, ADDR_V4,
	    ADDR_LEN, out, max);
}

START_TEST(test_helo_uri)
{
	uint8_t helo[FERRY_HELO_FIXED + ADDR_LEN], *back = NULL;
	struct helo h;
	char *uri = NULL;
	size_t len;
	int n = make_helo_a(helo, sizeof(helo));

	ck_assert_int_eq(n, (int)sizeof(helo));
	check_vector("helo_a", helo, sizeof(helo));
	ck_assert_int_eq(helo_decode(helo, sizeof(helo), &h), 0);
	ck_assert_int_eq(helo_verify(&h, NOW_S), 0);
	ck_assert_int_eq(helo_uri_encode(&id_a->id, helo, sizeof(helo), &uri),
	    0);
	check_text("uri_a", uri);
	ck_assert_int_eq(helo_uri_decode(uri, &back, &len), 0);
	ck_assert_uint_eq(len, sizeof(helo));
	ck_assert_mem_eq(back, helo, len);
	free(back);
	free(uri);
}
END_TEST

START_TEST(test_ping_pong)
{
	uint8_t challenge[FERRY_CHALLENGE_LEN];
	uint8_t ping[FERRY_PONG_FIXED + ADDR_LEN];
	uint8_t pong[FERRY_PONG_FIXED + ADDR_LEN];
	struct ping pi;
	struct pong po;

	for (size_t i = 0; i < sizeof(challenge); i++)
		challenge[i] = (uint8_t)(0x80 + i);
	ck_assert_int_eq(ping_build(ping, sizeof(ping), &id_a->id, challenge,
	                     FERRY_PROTO_UDP, ADDR_V4, ADDR_LEN),
	    (int)sizeof(ping));
	check_vector("ping_b", ping, sizeof(ping));
	ck_assert_int_eq(ping_decode(ping, sizeof(ping), &pi), 0);
	ck_assert_int_eq(pong_build(pong, sizeof(pong), id_a, pi.challenge,
	                     pi.protocol, PONG_EXPIRY, pi.addr, pi.addr_len),
	    (int)sizeof(pong));
	check_vector("pong_a", pong, sizeof(pong));
	ck_assert_int_eq(pong_decode(pong, sizeof(pong), &po), 0);
	ck_assert_int_eq(pong_verify(&po, id_a->pk, NOW_S), 0);
}
END_TEST

/* Our side of the example exchange. */
struct side {
	struct identity *ident;
	struct link l;
	uint8_t eph_sk[KX_EPH_LEN];
};

static void
side_start(struct side *s, struct identity *me, const struct identity *peer,
    uint32_t index, uint8_t sk_first, uint32_t flags)
{
	memset(s, 0, sizeof(*s));
	s->ident = me;
	for (size_t i = 0; i < KX_EPH_LEN; i++)
		s->eph_sk[i] = (uint8_t)(sk_first + i);
	ck_assert_int_eq(link_init(&s->l, me, &peer->id, index, MONO0), 0);
	ck_assert_int_eq(link_rotate_to(&s->l, s->eph_sk, MONO0), 0);
	/* What link_init reads from the CPU, fixed: both AEADs are tried
	 * whatever this machine has. */
	s->l.my_flags = flags;
}

/* Hands a KX to s as handshake_on_kx does; returns the LINK_KX_* bits. */
static int
side_take_kx(struct side *s, const uint8_t msg[FERRY_KX_SIZE],
    uint64_t now_real)
{
	struct kx_msg m;

	ck_assert_int_eq(kx_decode(msg, FERRY_KX_SIZE, &m), 0);
	ck_assert_int_eq(kx_verify(msg, FERRY_KX_SIZE), 0);
	ck_assert_int_eq(link_kx_fresh(&s->l, &m, now_real, 3600000000ull), 0);
	return link_on_kx(&s->l, &m, MONO0);
}

/* The plaintext of A's first frame as the send path packs it: the
 * keepalive that tx_link_up queues, then an application message. */
static size_t
first_plaintext(uint8_t *buf, size_t max, struct batch_iov *iov)
{
	struct sendq q;
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t msg_id = 0;
	size_t n;

	memset(&sf, 0, sizeof(sf));
	memset(&cnt, 0, sizeof(cnt));
	memset(iov, 0, sizeof(*iov));
	sendq_init(&q);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, FERRY_MSG_KEEPALIVE, NULL,
	                     0, false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, APP_TYPE, APP_BODY,
	                     strlen(APP_BODY), false, 0),
	    0);
	n = batch_fill(&q, buf, max, UDP_MTU - FERRY_ENC_OVERHEAD, &msg_id, &sf,
	    &cnt, iov, false);
	ck_assert(sendq_empty(&q));
	sendq_done(&q);
	return n;
}

/* Checks the vector "<prefix>_<what>". */
static void
check_named(const char *prefix, const char *what, const void *got, size_t len)
{
	char name[64];

	(void)snprintf(name, sizeof(name), "%s_%s", prefix, what);
	check_vector(name, got, len);
}

/*
 * The first exchange: A's KX (no echo yet); B's answer, echoing A's
 * ephemeral key, which gives A its keys; A's answer to B's new ephemeral
 * key, which confirms the keys to B. The page prints A's second KX for
 * one AEAD only.
 */
static void
exchange_kx(const char *prefix, struct side *a, struct side *b, bool aesgcm)
{
	uint8_t kx_a[FERRY_KX_SIZE], kx_b[FERRY_KX_SIZE], kx_a2[FERRY_KX_SIZE];

	link_build_kx(&a->l, KX_A_TS, kx_a);
	check_named(prefix, "kx_a", kx_a, sizeof(kx_a));
	ck_assert_int_eq(side_take_kx(b, kx_a, KX_A_TS), LINK_KX_REPLY);
	ck_assert(!link_ready(&b->l));

	link_build_kx(&b->l, KX_B_TS, kx_b);
	check_named(prefix, "kx_b", kx_b, sizeof(kx_b));
	ck_assert_int_eq(side_take_kx(a, kx_b, KX_B_TS),
	    LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert(link_ready(&a->l));

	link_build_kx(&a->l, KX_A2_TS, kx_a2);
	if (aesgcm)
		check_vector("gcm_kx_a2", kx_a2, sizeof(kx_a2));
	ck_assert_int_eq(side_take_kx(b, kx_a2, KX_A2_TS), LINK_KX_NEWKEYS);
	ck_assert(link_ready(&b->l));
}

/* The key schedule step by step, as both sides compute it. */
static void
exchange_keys(const char *prefix, struct side *a, struct side *b,
    uint32_t flags, bool aesgcm)
{
	uint8_t dh[crypto_scalarmult_BYTES], ids[8], okm[2 * KX_KEY_LEN];
	struct kx_keys ka, kb;

	ck_assert_int_eq(crypto_scalarmult(dh, a->eph_sk, b->l.my_eph), 0);
	if (aesgcm)
		check_vector("gcm_dh", dh, sizeof(dh));
	ck_assert_int_eq(kx_derive(a->eph_sk, a->l.my_eph, flags, &id_a->id,
	                     b->l.my_eph, flags, &id_b->id, &ka),
	    0);
	ck_assert_int_eq(kx_derive(b->eph_sk, b->l.my_eph, flags, &id_b->id,
	                     a->l.my_eph, flags, &id_a->id, &kb),
	    0);
	ck_assert_mem_eq(ka.tx, kb.rx, KX_KEY_LEN);
	ck_assert_mem_eq(ka.rx, kb.tx, KX_KEY_LEN);
	ck_assert(ka.aesgcm == aesgcm && kb.aesgcm == aesgcm);
	/* okm = key(lower id to higher id) || key(higher to lower) */
	if (memcmp(id_a->id.bytes, id_b->id.bytes, FERRY_PEER_ID_LEN) < 0) {
		memcpy(okm, ka.tx, KX_KEY_LEN);
		memcpy(okm + KX_KEY_LEN, ka.rx, KX_KEY_LEN);
	} else {
		memcpy(okm, ka.rx, KX_KEY_LEN);
		memcpy(okm + KX_KEY_LEN, ka.tx, KX_KEY_LEN);
	}
	check_named(prefix, "okm", okm, sizeof(okm));
	/* A's sending key's id, then B's */
	wire_put32(ids, ka.tx_id);
	wire_put32(ids + 4, ka.rx_id);
	check_named(prefix, "key_ids", ids, sizeof(ids));
	ck_assert_uint_eq(a->l.cur->tx_id, ka.tx_id);
	ck_assert_uint_eq(a->l.cur->rx_id, ka.rx_id);
	sodium_memzero(&ka, sizeof(ka));
	sodium_memzero(&kb, sizeof(kb));
	sodium_memzero(okm, sizeof(okm));
}

/* A's first frame, and what B reads from it. */
static void
exchange_frame(const char *prefix, struct side *a, struct side *b)
{
	uint8_t scratch[256], frame[256], pt[256];
	struct batch_iov iov;
	size_t ptlen, off = 0, size;
	const uint8_t *msg;
	uint64_t ctr;
	uint16_t type;
	int r;

	ptlen = first_plaintext(scratch, sizeof(scratch), &iov);
	ck_assert_uint_eq(ptlen,
	    FERRY_HDR_SIZE + FERRY_HDR_SIZE + strlen(APP_BODY));
	r = link_sealv(&a->l, iov.v, iov.n, frame, &ctr);
	ck_assert_int_eq(r, (int)(ptlen + FERRY_ENC_OVERHEAD));
	ck_assert_uint_eq(ctr, 0);
	check_named(prefix, "enc_a", frame, (size_t)r);

	ck_assert_int_eq(link_open_to(&b->l, frame, (size_t)r, pt, MONO0,
	                     &ptlen, &ctr),
	    0);
	ck_assert_int_eq(rx_next(pt, ptlen, &off, &type, &msg, &size), 1);
	ck_assert_uint_eq(type, FERRY_MSG_KEEPALIVE);
	ck_assert_uint_eq(size, FERRY_HDR_SIZE);
	ck_assert_int_eq(rx_next(pt, ptlen, &off, &type, &msg, &size), 1);
	ck_assert_uint_eq(type, APP_TYPE);
	ck_assert_mem_eq(msg + FERRY_HDR_SIZE, APP_BODY, strlen(APP_BODY));
	ck_assert_int_eq(rx_next(pt, ptlen, &off, &type, &msg, &size), 0);
}

/* The whole example under one AEAD; prefix names its vectors. */
static void
run_exchange(const char *prefix, uint32_t flags, bool aesgcm)
{
	uint8_t eph[KX_EPH_LEN];
	struct side a, b;

	side_start(&a, id_a, id_b, A_INDEX, 0x40, flags);
	side_start(&b, id_b, id_a, B_INDEX, 0x60, flags);
	if (aesgcm) {
		check_vector("eph_a", a.l.my_eph, KX_EPH_LEN);
		check_vector("eph_b", b.l.my_eph, KX_EPH_LEN);
	}
	kx_eph_public(a.eph_sk, eph);
	ck_assert_mem_eq(eph, a.l.my_eph, KX_EPH_LEN);
	exchange_kx(prefix, &a, &b, aesgcm);
	exchange_keys(prefix, &a, &b, flags, aesgcm);
	exchange_frame(prefix, &a, &b);
	link_done(&a.l);
	link_done(&b.l);
}

START_TEST(test_exchange_aesgcm)
{
	run_exchange("gcm", FERRY_KX_F_AESGCM, true);
}
END_TEST

START_TEST(test_exchange_chacha)
{
	run_exchange("chacha", 0, false);
}
END_TEST

START_TEST(test_ack)
{
	struct acktrack at;
	struct ack_msg m;
	uint8_t out[ACK_MAX_SIZE];
	size_t n;

	/* B got A's frames 0, 1 and 3; 2 is missing. */
	acktrack_init(&at);
	acktrack_on_frame(&at, 0, true, MONO0, 5000);
	acktrack_on_frame(&at, 1, true, MONO0 + 100, 5000);
	acktrack_on_frame(&at, 3, true, MONO0 + 200, 5000);
	n = acktrack_write(&at, out, sizeof(out), 2 * 1024 * 1024,
	    MONO0 + 1200);
	ck_assert_uint_eq(n, ACK_FIXED + 8);
	check_vector("ack_b", out, n);
	ck_assert_int_eq(ack_decode(out, n, &m), 0);
	ck_assert_uint_eq(m.n, 2);
	ck_assert(m.lo[0] == 3 && m.hi[0] == 3 && m.lo[1] == 0 && m.hi[1] == 1);
}
END_TEST

START_TEST(test_frag)
{
	uint8_t data[16], out[FRAG_HDR + sizeof(data)];
	struct frag f;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	/* The first piece of a 100000-byte application message. */
	ck_assert_uint_eq(frag_write(out, 0x01020304, 100000, 0, APP_TYPE, data,
	                      sizeof(data)),
	    sizeof(out));
	check_vector("frag_a", out, sizeof(out));
	ck_assert_int_eq(frag_decode(out, sizeof(out), &f), 0);
}
END_TEST

START_TEST(test_tcp_welcome)
{
	uint8_t w[TCP_FRAME_WELCOME_LEN];
	struct tcp_frame parser;
	struct tcp_frame_event ev;

	tcp_frame_put_welcome(w, &id_a->id);
	check_vector("tcp_welcome_a", w, sizeof(w));
	tcp_frame_init(&parser, 65535, true);
	ck_assert_uint_eq(tcp_frame_next(&parser, w, sizeof(w), &ev),
	    sizeof(w));
	ck_assert_int_eq(ev.kind, TCP_FRAME_WELCOME);
}
END_TEST

/*
 * A's PUT of the 5-byte block "ferry" to 3 peers until 1800000000,
 * routed with 20 hops to go, without HELOs; B's receipt for it, sent
 * straight to A; and the FAIL B sends instead when A is over its
 * REQUEST_RATE there, or when B's queue toward the next hop is at its
 * bound (busy).
 */
START_TEST(test_dht_put_receipt)
{
	static const uint8_t block[] = { 'f', 'e', 'r', 'r', 'y' };
	uint8_t hash[DHTMSG_HASH_LEN];
	struct dhtmsg_req put, back;
	struct dhtmsg_ans rcpt, fail;
	struct buf out;

	memset(&put, 0, sizeof(put));
	put.type = FERRY_MSG_DHT_PUT;
	put.hops_left = 20;
	put.req_id = 0x0102030405060708ull;
	dhtkey_of_block(block, sizeof(block), &put.key);
	dhtkey_from_peer(&id_a->id, &put.requester);
	put.put.replication = 3;
	put.put.expiry = 1800000000;
	put.put.block = block;
	put.put.block_len = sizeof(block);
	dhtmsg_put_sign(id_a, &put.key, &put.put);
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&put, &out), 0);
	check_vector("dht_put_a", buf_head(&out), buf_size(&out));
	ck_assert_int_eq(dhtmsg_req_decode(put.type, buf_head(&out),
	                     buf_size(&out), &back),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&back.key, &back.put), 0);
	/* Its first hop, sent as a candidate: the same signed PUT. */
	put.flags = DHTMSG_F_CANDIDATE;
	put.hops_left = 19;
	put.hops = 1;
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&put, &out), 0);
	check_vector("dht_put_candidate_a", buf_head(&out), buf_size(&out));
	ck_assert_int_eq(dhtmsg_req_decode(put.type, buf_head(&out),
	                     buf_size(&out), &back),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&back.key, &back.put), 0);
	put.flags = 0;
	put.hops_left = 20;
	put.hops = 0;
	dhtmsg_put_hash(&put.key, &put.put, hash);
	check_vector("dht_put_hash", hash, sizeof(hash));
	memset(&rcpt, 0, sizeof(rcpt));
	rcpt.type = FERRY_MSG_DHT_RECEIPT;
	rcpt.req_id = put.req_id;
	rcpt.key = put.key;
	rcpt.requester = put.requester;
	dhtkey_from_peer(&id_b->id, &rcpt.responder);
	dhtmsg_receipt_sign(id_b, &put.key, hash, put.put.expiry,
	    &rcpt.receipt);
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&rcpt, &out), 0);
	check_vector("dht_receipt_b", buf_head(&out), buf_size(&out));
	ck_assert_int_eq(dhtmsg_receipt_verify(&rcpt.key, &rcpt.responder, hash,
	                     &rcpt.receipt),
	    0);
	/* B over its REQUEST_RATE for A: FAIL 4, straight to A. */
	memset(&fail, 0, sizeof(fail));
	fail.type = FERRY_MSG_DHT_FAIL;
	fail.req_id = put.req_id;
	fail.key = put.key;
	fail.requester = put.requester;
	fail.responder = rcpt.responder;
	fail.code = DHTMSG_RATE;
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&fail, &out), 0);
	check_vector("dht_fail_rate_b", buf_head(&out), buf_size(&out));
	/* B's queue toward its next hop at its bound: FAIL 8. */
	fail.code = DHTMSG_BUSY;
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&fail, &out), 0);
	check_vector("dht_fail_busy_b", buf_head(&out), buf_size(&out));
	/* B's ACK, ahead of a large answer: the header alone. */
	fail.type = FERRY_MSG_DHT_ACK;
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&fail, &out), 0);
	check_vector("dht_ack_b", buf_head(&out), buf_size(&out));
	ck_assert_uint_eq(buf_size(&out), DHTMSG_ANS_FIXED);
	buf_done(&out);
}
END_TEST

/*
 * A's record "a.example" at the topic BLAKE2b-256("ferry"), seq
 * 1800000000000000, until 1800003600, put to 3 peers with 20 hops to go
 * and no HELOs; the hash B's receipt names; and B's RECORDS answering an
 * RGET of A's with it, straight to A.
 */
START_TEST(test_dht_records)
{
	static const uint8_t value[] = "a.example";
	uint8_t hash[DHTREC_HASH_LEN];
	struct dhtmsg_req rput, back;
	struct dhtmsg_ans ans, aback;
	struct buf out, recs;
	struct dhtrec r;
	size_t off = 0;

	memset(&rput, 0, sizeof(rput));
	rput.type = FERRY_MSG_DHT_RPUT;
	rput.hops_left = 20;
	rput.req_id = 0x0102030405060708ull;
	dhtkey_of_block("ferry", 5, &rput.key);
	dhtkey_from_peer(&id_a->id, &rput.requester);
	rput.replication = 3;
	rput.rec.topic = rput.key;
	rput.rec.seq = 1800000000000000ull;
	rput.rec.expiry = 1800003600;
	rput.rec.value = value;
	rput.rec.value_len = sizeof(value) - 1;
	dhtrec_sign(id_a, &rput.rec);
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&rput, &out), 0);
	check_vector("dht_rput_a", buf_head(&out), buf_size(&out));
	ck_assert_int_eq(dhtmsg_req_decode(rput.type, buf_head(&out),
	                     buf_size(&out), &back),
	    0);
	ck_assert_int_eq(dhtrec_verify(&back.rec), 0);
	dhtrec_hash(&rput.rec, rput.replication, hash);
	check_vector("dht_rput_hash", hash, sizeof(hash));
	memset(&ans, 0, sizeof(ans));
	ans.type = FERRY_MSG_DHT_RECORDS;
	ans.req_id = rput.req_id;
	ans.key = rput.key;
	ans.requester = rput.requester;
	dhtkey_from_peer(&id_b->id, &ans.responder);
	buf_init(&recs);
	ck_assert_int_eq(dhtmsg_records_put(&recs, &rput.rec), 0);
	ans.count = 1;
	ans.records = buf_head(&recs);
	ans.records_len = buf_size(&recs);
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&ans, &out), 0);
	check_vector("dht_records_b", buf_head(&out), buf_size(&out));
	ck_assert_int_eq(dhtmsg_ans_decode(ans.type, buf_head(&out),
	                     buf_size(&out), &aback),
	    0);
	ck_assert_int_eq(dhtmsg_records_next(&aback, &off, &r), 1);
	ck_assert_int_eq(dhtrec_verify(&r), 0);
	ck_assert_int_eq(dhtmsg_records_next(&aback, &off, &r), 0);
	buf_done(&recs);
	buf_done(&out);
}
END_TEST

/*
 * The federation of intermediaries: the topic; A's announcement of
 * "https://a.example" without HELOs; B's HERE telling A that the client
 * whose key is A's took "/v1/receipts?after=0&wait=30" at B at NOW_S
 * with the nonce 00..0f; A's ENTRIES forwarding that client's receipt
 * by B for the key BLAKE2b-256("ferry") and put_hash 32 bytes of 0x11
 * (cursor 1, expiry 1800000000); B's ACK up to cursor 1.
 */
START_TEST(test_imd_federation)
{
	static const char target[] = "/v1/receipts?after=0&wait=30";
	uint8_t topic[32], msg[FEDMSG_ENTRIES_SIZE_MAX], signed_[128], *q;
	struct rqueue_entry e[1], back[FEDMSG_ENTRIES_MAX];
	uint8_t client[IMDWIRE_KEY_LEN];
	struct fedmsg_announce an;
	struct fedmsg_here here, hb;
	struct fedmsg_ack ack, ab;
	size_t len, n;
	int r;

	fedmsg_topic(topic);
	check_vector("imd_topic", topic, sizeof(topic));
	r = fedmsg_announce_encode("https://a.example", NULL, 0, msg,
	    DHTREC_VALUE_MAX);
	ck_assert_int_gt(r, 0);
	check_vector("imd_announce_a", msg, (size_t)r);
	ck_assert_int_eq(fedmsg_announce_decode(msg, (size_t)r, &an), 0);
	ck_assert_str_eq(an.url, "https://a.example");

	memset(&here, 0, sizeof(here));
	memcpy(here.auth.client, id_a->pk, IMDWIRE_KEY_LEN);
	here.auth.time = NOW_S;
	for (int i = 0; i < IMDWIRE_NONCE_LEN; i++)
		here.auth.nonce[i] = (uint8_t)i;
	memcpy(here.target, target, sizeof(target));
	q = signed_;
	memcpy(q, id_b->id.bytes, IMDWIRE_ID_LEN);
	q += IMDWIRE_ID_LEN;
	memcpy(q, "GET", 4);
	q += 4;
	memcpy(q, target, sizeof(target));
	q += sizeof(target);
	wire_put64(q, here.auth.time);
	memcpy(q + 8, here.auth.nonce, IMDWIRE_NONCE_LEN);
	q += 8 + IMDWIRE_NONCE_LEN;
	identity_sign(id_a, IMDWIRE_AUTH_PREFIX, signed_, (size_t)(q - signed_),
	    here.auth.sig);
	len = fedmsg_here_encode(&here, msg);
	check_vector("imd_here_b", msg, len);
	ck_assert_int_eq(fedmsg_here_decode(msg, len, &hb), 0);
	ck_assert_int_eq(imdwire_auth_verify(&hb.auth, id_b->id.bytes, "GET",
	                     hb.target),
	    0);
	ck_assert_int_eq(imdwire_auth_verify(&hb.auth, id_a->id.bytes, "GET",
	                     hb.target),
	    -EBADMSG);

	memset(e, 0, sizeof(e));
	e[0].cursor = 1;
	e[0].type = RQUEUE_RECEIPT;
	dhtkey_of_block("ferry", 5, &e[0].key);
	memset(e[0].put_hash, 0x11, sizeof(e[0].put_hash));
	dhtmsg_receipt_sign(id_b, &e[0].key, e[0].put_hash, 1800000000,
	    &e[0].receipt);
	len = fedmsg_entries_encode(id_a->pk, e, 1, msg);
	check_vector("imd_entries_a", msg, len);
	ck_assert_int_eq(fedmsg_entries_decode(msg, len, client, back, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(client, id_a->pk, IMDWIRE_KEY_LEN);
	ck_assert_mem_eq(&back[0].receipt, &e[0].receipt, sizeof(e[0].receipt));

	memset(&ack, 0, sizeof(ack));
	ack.status = FEDMSG_ACK_HELD;
	memcpy(ack.client, id_a->pk, IMDWIRE_KEY_LEN);
	ack.cursor = 1;
	fedmsg_ack_encode(&ack, msg);
	check_vector("imd_ack_b", msg, FEDMSG_ACK_LEN);
	ck_assert_int_eq(fedmsg_ack_decode(msg, FEDMSG_ACK_LEN, &ab), 0);
	ck_assert_uint_eq(ab.cursor, 1);
}
END_TEST

/* Every vector block of the page is one the test checks. */
START_TEST(test_page_has_no_other)
{
	vector_page_check_all(&page);
}
END_TEST

static Suite *
vectors_suite(void)
{
	Suite *s = suite_create("protocol_vectors");
	TCase *tc = tcase_create("vectors");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_identities);
	tcase_add_test(tc, test_helo_uri);
	tcase_add_test(tc, test_ping_pong);
	tcase_add_test(tc, test_exchange_aesgcm);
	tcase_add_test(tc, test_exchange_chacha);
	tcase_add_test(tc, test_ack);
	tcase_add_test(tc, test_frag);
	tcase_add_test(tc, test_tcp_welcome);
	tcase_add_test(tc, test_dht_put_receipt);
	tcase_add_test(tc, test_dht_records);
	tcase_add_test(tc, test_imd_federation);
	tcase_add_test(tc, test_page_has_no_other);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(vectors_suite());
}
