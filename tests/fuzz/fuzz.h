/*
** fuzz.h -- what every libFuzzer harness in tests/fuzz/ shares: a private
** temporary folder that holds every file a harness writes and is the XDG
** cache and state homes (so nothing writes anywhere else; it is removed at
** exit), and a memory file that readers taking a path read the
** input from ("/proc/self/fd/N" of a memfd: a regular file to stat and fopen).
*/
#ifndef TIELAB_FUZZ_H
#define TIELAB_FUZZ_H

#include "config.h"

#include <errno.h>   /* program_invocation_short_name (_GNU_SOURCE, from config.h) */

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[4096];

static int fuzz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void fuzz_cleanup(void) {
  if (fuzz_dir[0]) nftw(fuzz_dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Make the private folder and point the XDG homes at it. */
static inline void fuzz_setup(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(fuzz_dir, sizeof fuzz_dir, "%s/tielab-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(fuzz_dir)) {
    perror("fuzz: temporary folder");
    abort();
  }
  atexit(fuzz_cleanup);
  char path[4200];
  snprintf(path, sizeof path, "%s/cache", fuzz_dir);
  setenv("XDG_CACHE_HOME", path, 1);
  snprintf(path, sizeof path, "%s/state", fuzz_dir);
  setenv("XDG_STATE_HOME", path, 1);
}

/* A property the input broke: say which, and crash so libFuzzer keeps it. */
static inline void fuzz_check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
    abort();
  }
}

/* The path of 'name' in the private folder, into 'path'. */
static inline const char *fuzz_path(const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", fuzz_dir, name);
  return path;
}

/* Put 'data' in the memory file (made on first use); its path in 'path'. */
static inline void fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t cap) {
  static int fd = -1;
  if (fd < 0 && (fd = memfd_create("fuzz-input", 0)) < 0) {
    perror("fuzz: memfd_create");
    abort();
  }
  if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
    perror("fuzz: memory file");
    abort();
  }
  snprintf(path, cap, "/proc/self/fd/%d", fd);
}

#endif
