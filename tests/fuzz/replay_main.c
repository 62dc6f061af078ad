/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Corpus replay for builds without libFuzzer: runs a target's
 * LLVMFuzzerTestOneInput over every file named on the command line, and
 * every file in every directory named there (recursively, in name order).
 * Each input sits in a buffer of exactly its size, so ASan sees any read
 * past its end. Fails if an input cannot be read or there is none at all:
 * a target without seeds is a mistake.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The libFuzzer interface the targets implement. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

struct replay {
	size_t inputs;   /* run so far */
	size_t errors;   /* unreadable paths */
	size_t max_size; /* largest input */
};

static int
replay_file(struct replay *rp, const char *path, off_t size)
{
	uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
	FILE *f;
	size_t n;

	if (data == NULL) {
		fprintf(stderr, "replay: %s: out of memory\n", path);
		return -ENOMEM;
	}
	f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		free(data);
		return -errno;
	}
	n = fread(data, 1, (size_t)size, f);
	(void)fclose(f);
	if (n != (size_t)size) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(data);
		return -EIO;
	}
	(void)LLVMFuzzerTestOneInput(data, n);
	free(data);
	rp->inputs++;
	if (n > rp->max_size)
		rp->max_size = n;
	return 0;
}

static int
replay_skip_dots(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

static void
replay_path(struct replay *rp, const char *path, int depth)
{
	struct dirent **names;
	struct stat st;
	char child[4096];
	int n;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		rp->errors++;
		return;
	}
	if (S_ISREG(st.st_mode)) {
		if (replay_file(rp, path, st.st_size) < 0)
			rp->errors++;
		return;
	}
	if (!S_ISDIR(st.st_mode) || depth > 8) {
		fprintf(stderr, "replay: %s: not a file or directory\n", path);
		rp->errors++;
		return;
	}
	n = scandir(path, &names, replay_skip_dots, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		rp->errors++;
		return;
	}
	for (int i = 0; i < n; i++) {
		if (snprintf(child, sizeof(child), "%s/%s", path,
		        names[i]->d_name) < (int)sizeof(child))
			replay_path(rp, child, depth + 1);
		else
			rp->errors++;
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	struct replay rp = { 0, 0, 0 };

	if (LLVMFuzzerInitialize != NULL)
		(void)LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		replay_path(&rp, argv[i], 0);
	printf("replay: %zu input(s), largest %zu bytes, %zu error(s)\n",
	    rp.inputs, rp.max_size, rp.errors);
	if (rp.inputs == 0) {
		fprintf(stderr,
		    "replay: no inputs: every target needs seeds\n");
		return 1;
	}
	return rp.errors > 0 ? 1 : 0;
}
