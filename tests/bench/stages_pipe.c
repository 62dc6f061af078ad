/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The machine's own limit for the upload pipeline (issue 13, benchmark
 * 3): read a chunk from the file, storage_seal() it (SHA-512, PBKDF2,
 * AEAD, block key: the real code) and write the sealed block to an
 * output file (into the page cache, no fsync: the DHT store's disk is
 * bench_store's subject), on one thread and on several, each taking every
 * T-th chunk with its own buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "storage/chunk.h"
#include "stages_bench.h"

struct sg_worker {
	pthread_t thread;
	const struct sg_file *in;
	const struct storage_codec *codec;
	int out_fd;
	unsigned size, index, threads, passes;
	int error;
};

static void *
sg_work(void *arg)
{
	struct sg_worker *w = arg;
	uint64_t n_chunks = (w->in->size + w->size - 1) / w->size;
	uint8_t *buf = malloc(w->size);
	uint8_t *sealed = malloc(storage_sealed_len(w->size));
	size_t slen = storage_sealed_len(w->size);
	struct storage_ref ref;

	if (buf == NULL || sealed == NULL)
		w->error = -ENOMEM;
	for (unsigned p = 0; p < w->passes && w->error == 0; p++) {
		for (uint64_t i = w->index; i < n_chunks && w->error == 0;
		     i += w->threads) {
			uint64_t off = i * w->size;
			size_t len = w->in->size - off < w->size
			    ? (size_t)(w->in->size - off)
			    : w->size;

			if (pread(w->in->fd, buf, len, (off_t)off) !=
			    (ssize_t)len)
				w->error = -EIO;
			else if (storage_seal_pad(w->codec, buf, len, w->size,
			             sealed, &ref) != 0)
				w->error = -EIO;
			else if (pwrite(w->out_fd, sealed, slen,
			             (off_t)(i * slen)) != (ssize_t)slen)
				w->error = -EIO;
		}
	}
	free(buf);
	free(sealed);
	return NULL;
}

double
sg_pipeline(const struct sg_file *in, const struct storage_codec *c,
    unsigned size, unsigned threads, unsigned passes)
{
	struct sg_worker w[SG_MAX_THREADS];
	char path[4200];
	uint64_t t0;
	double secs;
	int fd, err = 0;

	(void)snprintf(path, sizeof(path), "%s.out", in->path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	(void)unlink(path);
	t0 = bench_now_ns();
	for (unsigned t = 0; t < threads; t++) {
		w[t] = (struct sg_worker){ .in = in,
			.codec = c,
			.out_fd = fd,
			.size = size,
			.index = t,
			.threads = threads,
			.passes = passes };
		if (pthread_create(&w[t].thread, NULL, sg_work, &w[t]) != 0) {
			threads = t;
			err = -EAGAIN;
		}
	}
	for (unsigned t = 0; t < threads; t++) {
		(void)pthread_join(w[t].thread, NULL);
		if (w[t].error < 0)
			err = w[t].error;
	}
	secs = (double)(bench_now_ns() - t0) / 1e9;
	(void)close(fd);
	if (err < 0)
		return err;
	return (double)in->size * passes / secs / 1e6;
}
