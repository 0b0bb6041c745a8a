/*
** sysmem.h -- how much more memory this process can really get.
**
** The machine's total is the wrong number to compare a new model with: other
** programs hold some of it, a container's cgroup may allow far less, and
** `ulimit -v` (RLIMIT_AS) or RLIMIT_DATA can stop an allocation long before
** the machine runs out. Each of these is read where Linux publishes it; the
** smallest wins.
*/
#ifndef TIELAB_BASE_SYSMEM_H
#define TIELAB_BASE_SYSMEM_H

#include <stdint.h>

#include "base/err.h"

typedef struct SysMem {
  uint64_t headroom;     /* bytes the process can still allocate, by the tightest limit */
  const char *limit;     /* which limit that is: "MemAvailable", "cgroup memory limit", ... */
  uint64_t total;        /* the machine's memory */
  int shared_by;         /* the processes MemAvailable and the cgroup's limit were divided among */
  int limit_shared;      /* 'limit' is one of those, divided among more than one */
} SysMem;

/* Fill 'm'; a limit that cannot be read is left out. Returns 0, or -1 when
** not even the machine's memory is known (m->headroom is then UINT64_MAX). */
int sysmem_read(SysMem *m);

/* The same for one of 'processes' processes that share this machine alike
** (the ranks of one job on it): each may have its part of MemAvailable and
** of the cgroup's limit; a limit of its own (RLIMIT_AS, RLIMIT_DATA) it
** has whole. */
int sysmem_read_shared(SysMem *m, int processes);

/* The same from files under 'root' instead of "/" ("/proc/meminfo",
** "/proc/self/cgroup", "/sys/fs/cgroup/..."), for tests; the resource
** limits are then taken from 'as_limit' and 'data_limit' (UINT64_MAX: none)
** against the process's own sizes in 'root'/proc/self/status, for one of
** 'processes' (sysmem_read_shared). */
int sysmem_read_at(SysMem *m, const char *root, uint64_t as_limit, uint64_t data_limit, int processes);

/* The one refusal of an allocation too large: 0 when 'need' more bytes fit
** in m->headroom, else -1 and "<what> needs 390.6 MiB, more than the
** 149.1 MiB this process can still allocate (limit: RLIMIT_AS)" in 'err'.
** A caller that keeps part of the headroom for something else lowers
** m->headroom first. */
int sysmem_check_in(const SysMem *m, uint64_t need, const char *what, Err *err);

/* The same against what sysmem_read finds now. */
int sysmem_check(uint64_t need, const char *what, Err *err);

#endif
