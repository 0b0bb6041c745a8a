/*
** test_sysmem.c -- the memory this process can still get: MemAvailable,
** a cgroup v2 memory.max at any level above the process, RLIMIT_AS and
** RLIMIT_DATA against the process's own sizes, the smallest winning; read
** from a made-up /proc and /sys under a temporary root.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/sysmem.h"
#include "tap.h"

static char root[64];

static void put(const char *path, const char *text) {
  char full[512], dir[512];
  snprintf(full, sizeof full, "%s%s", root, path);
  /* make every directory on the way */
  for (char *p = strchr(full + strlen(root) + 1, '/'); p; p = strchr(p + 1, '/')) {
    snprintf(dir, sizeof dir, "%.*s", (int)(p - full), full);
    mkdir(dir, 0755);
  }
  FILE *f = fopen(full, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

#define GIB (1ULL << 30)

int main(void) {
  strcpy(root, "/tmp/tielab-sysmem-XXXXXX");
  if (!mkdtemp(root)) return printf("Bail out! no temporary directory\n"), 1;
  put("/proc/meminfo", "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   8388608 kB\n");
  put("/proc/self/status", "Name:\ttielab\nVmSize:\t 1048576 kB\nVmData:\t  524288 kB\n");
  put("/proc/self/cgroup", "0::/user.slice/session-1\n");

  SysMem m;
  ok(sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1) == 0 && m.headroom == 8 * GIB &&
         strcmp(m.limit, "MemAvailable") == 0 && m.total == 24000000ULL * 1024,
     "no limits: MemAvailable (%.2f GiB, %s)", m.headroom / (double)GIB, m.limit);

  put("/sys/fs/cgroup/user.slice/session-1/memory.max", "max\n");
  put("/sys/fs/cgroup/user.slice/session-1/memory.current", "1000\n");
  put("/sys/fs/cgroup/user.slice/memory.max", "4294967296\n");
  put("/sys/fs/cgroup/user.slice/memory.current", "1073741824\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == 3 * GIB && strcmp(m.limit, "cgroup memory limit") == 0,
     "a memory.max above the process's own group: limit less current (%.2f GiB, %s)", m.headroom / (double)GIB,
     m.limit);
  put("/sys/fs/cgroup/user.slice/memory.stat", "anon 100\ninactive_file 1073741824\nactive_file 5\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == 4 * GIB, "page cache the group could give back is not in the way (%.2f GiB)",
     m.headroom / (double)GIB);
  put("/sys/fs/cgroup/user.slice/memory.stat", "anon 100\n");
  put("/sys/fs/cgroup/user.slice/memory.current", "5368709120\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == 0, "a group already over its limit leaves nothing");
  put("/sys/fs/cgroup/user.slice/memory.current", "1073741824\n");

  sysmem_read_at(&m, root, 2 * GIB, UINT64_MAX, 1);
  ok(m.headroom == GIB && strcmp(m.limit, "RLIMIT_AS") == 0, "RLIMIT_AS less VmSize (%.2f GiB, %s)",
     m.headroom / (double)GIB, m.limit);
  sysmem_read_at(&m, root, UINT64_MAX, GIB, 1);
  ok(m.headroom == GIB / 2 && strcmp(m.limit, "RLIMIT_DATA") == 0, "RLIMIT_DATA less VmData (%.2f GiB, %s)",
     m.headroom / (double)GIB, m.limit);

  /* Ranks of one job on this machine share MemAvailable and the cgroup's
  ** limit, each its part, but have a limit of their own whole: the shared
  ** ones are divided before the smallest is taken. */
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 2);
  ok(m.headroom == 3 * GIB / 2 && strcmp(m.limit, "cgroup memory limit") == 0 && m.shared_by == 2,
     "2 processes: half the cgroup's 3 GiB each (%.2f GiB, %s)", m.headroom / (double)GIB, m.limit);
  sysmem_read_at(&m, root, 3 * GIB, UINT64_MAX, 4);
  ok(m.headroom == 3 * GIB / 4 && strcmp(m.limit, "cgroup memory limit") == 0,
     "4 processes with 2 GiB of RLIMIT_AS each left: a quarter of the cgroup's 3 GiB is tighter (%.2f GiB, %s)",
     m.headroom / (double)GIB, m.limit);
  sysmem_read_at(&m, root, 2 * GIB, UINT64_MAX, 2);
  ok(m.headroom == GIB && strcmp(m.limit, "RLIMIT_AS") == 0,
     "2 processes with 1 GiB of RLIMIT_AS left: their own limit, whole, is tighter (%.2f GiB, %s)",
     m.headroom / (double)GIB, m.limit);

  put("/proc/self/cgroup", "12:memory:/old\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == 8 * GIB, "a cgroup v1 group without its files: only MemAvailable counts");
  put("/sys/fs/cgroup/memory/old/memory.limit_in_bytes", "2147483648\n");
  put("/sys/fs/cgroup/memory/old/memory.usage_in_bytes", "1610612736\n");
  put("/sys/fs/cgroup/memory/old/memory.stat", "cache 9\ntotal_inactive_file 536870912\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == GIB && strcmp(m.limit, "cgroup memory limit") == 0,
     "cgroup v1: limit_in_bytes less usage, page cache aside (%.2f GiB)", m.headroom / (double)GIB);
  put("/sys/fs/cgroup/memory/old/memory.limit_in_bytes", "9223372036854771712\n");
  sysmem_read_at(&m, root, UINT64_MAX, UINT64_MAX, 1);
  ok(m.headroom == 8 * GIB, "cgroup v1's 'no limit' (a huge number) is no limit");

  ok(sysmem_read_at(&m, "/nonexistent-root", UINT64_MAX, UINT64_MAX, 1) < 0 && m.headroom == UINT64_MAX,
     "nothing readable: unknown, no limit invented");
  Err e = {""};
  ok(sysmem_check_in(&m, UINT64_MAX - 1, "anything", &e) == 0, "and no limit refuses nothing");

  /* The one refusal: the estimate and the headroom each in the unit that
  ** shows it, and the limit that set the headroom named. */
  sysmem_read_at(&m, root, 2 * GIB, UINT64_MAX, 1);
  ok(sysmem_check_in(&m, GIB, "a model", &e) == 0, "all of the headroom may be asked for");
  ok(sysmem_check_in(&m, 3 * GIB / 2, "a model", &e) < 0 &&
         strcmp(e.msg, "a model needs 1.5 GiB, more than the 1.0 GiB this process can still allocate "
                       "(limit: RLIMIT_AS)") == 0,
     "past it: %s", e.msg);
  m.headroom = 3 << 19;   /* what a caller keeps for something else is taken off first */
  ok(sysmem_check_in(&m, 409600000, "reading wte as float32", &e) < 0 &&
         strcmp(e.msg, "reading wte as float32 needs 390.6 MiB, more than the 1.5 MiB this process can still "
                       "allocate (limit: RLIMIT_AS)") == 0,
     "each number in its own unit: %s", e.msg);
  m.headroom = 1000;
  ok(sysmem_check_in(&m, 1001, "x", &e) < 0 && strstr(e.msg, "x needs 1001 bytes, more than the 1000 bytes"),
     "below a KiB, bytes: %s", e.msg);

  ok(sysmem_read(&m) == 0 && m.headroom > 0 && m.headroom <= m.total, "this machine: %.2f GiB more (%s) of %.2f",
     m.headroom / (double)GIB, m.limit, m.total / (double)GIB);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) diag("could not remove %s", root);
  return tap_done();
}
