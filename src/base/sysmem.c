/* sysmem.c -- see sysmem.h. Every file is small and read with a bound. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/num.h"
#include "base/sysmem.h"

/* The first 'cap'-1 bytes of 'path' as a string, or -1. */
static int read_small(const char *root, const char *path, char *buf, size_t cap) {
  char full[4096];
  snprintf(full, sizeof full, "%s%s", root, path);
  FILE *f = fopen(full, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return 0;
}

/* "Key:   123 kB" in a /proc file, in bytes. */
static int proc_field(const char *root, const char *path, const char *key, uint64_t *out) {
  char buf[8192];
  if (read_small(root, path, buf, sizeof buf) < 0) return -1;
  size_t klen = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
      unsigned long long kb;
      if (sscanf(line + klen + 1, "%llu", &kb) != 1) return -1;
      *out = (uint64_t)kb * 1024;
      return 0;
    }
  return -1;
}

static void tighter(SysMem *m, uint64_t headroom, const char *limit) {
  if (headroom < m->headroom) {
    m->headroom = headroom;
    m->limit = limit;
    m->limit_shared = 0;
  }
}

/* A limit the machine's processes share: each of m->shared_by gets its part. */
static void tighter_shared(SysMem *m, uint64_t headroom, const char *limit) {
  uint64_t part = headroom / (uint64_t)m->shared_by;
  if (part >= m->headroom) return;
  tighter(m, part, limit);
  m->limit_shared = m->shared_by > 1;
}

/* A number in a cgroup file; "max" (no limit) gives UINT64_MAX. */
static int cgroup_value(const char *root, const char *dir, const char *file, uint64_t *out) {
  char path[4096], buf[64];
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", dir, file);
  if (read_small(root, path, buf, sizeof buf) < 0) return -1;
  if (strncmp(buf, "max", 3) == 0) {
    *out = UINT64_MAX;
    return 0;
  }
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (end == buf) return -1;
  *out = v;
  return 0;
}

/* Page cache the kernel gives back under pressure: counted in a group's
** use, but not in the way of an allocation. */
static uint64_t reclaimable(const char *root, const char *dir, const char *stat, const char *key) {
  char path[4096], buf[8192];
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", dir, stat);
  if (read_small(root, path, buf, sizeof buf) < 0) return 0;
  size_t klen = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') return strtoull(line + klen + 1, NULL, 10);
  return 0;
}

static void group_left(SysMem *m, const char *root, const char *dir, const char *limit, const char *usage,
                       const char *stat, const char *key) {
  uint64_t max, cur;
  if (cgroup_value(root, dir, limit, &max) < 0 || max >= (UINT64_MAX >> 2) || cgroup_value(root, dir, usage, &cur) < 0)
    return;
  uint64_t cache = reclaimable(root, dir, stat, key);
  cur = cur > cache ? cur - cache : 0;
  tighter_shared(m, max > cur ? max - cur : 0, "cgroup memory limit");
}

/* The process's memory group (cgroup v2 "0::/path", or v1's "N:memory:/path")
** and each one above it may set a limit; what is left is the limit less
** what the group uses, page cache aside. */
static void cgroup_limits(SysMem *m, const char *root) {
  char buf[4096];
  if (read_small(root, "/proc/self/cgroup", buf, sizeof buf) < 0) return;
  char *v2 = strstr(buf, "0::"), *v1 = strstr(buf, ":memory:");
  if (v1) {
    char dir[4096];
    snprintf(dir, sizeof dir, "/memory%s", v1 + 8);
    dir[strcspn(dir, "\n")] = '\0';
    group_left(m, root, dir, "memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat", "total_inactive_file");
  }
  if (!v2) return;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", v2 + 3);
  dir[strcspn(dir, "\n")] = '\0';
  for (;;) {
    group_left(m, root, dir, "memory.max", "memory.current", "memory.stat", "inactive_file");
    char *slash = strrchr(dir, '/');
    if (!slash || dir[0] == '\0' || strcmp(dir, "/") == 0) break;
    *slash = '\0';
  }
}

static void rlimit_left(SysMem *m, const char *root, uint64_t limit, const char *field, const char *name) {
  uint64_t used;
  if (limit == UINT64_MAX || proc_field(root, "/proc/self/status", field, &used) < 0) return;
  tighter(m, limit > used ? limit - used : 0, name);
}

int sysmem_read_at(SysMem *m, const char *root, uint64_t as_limit, uint64_t data_limit, int processes) {
  m->headroom = UINT64_MAX;
  m->limit = "unknown";
  m->limit_shared = 0;
  m->total = 0;
  m->shared_by = processes > 1 ? processes : 1;
  int rc = proc_field(root, "/proc/meminfo", "MemTotal", &m->total);
  uint64_t avail;
  if (proc_field(root, "/proc/meminfo", "MemAvailable", &avail) == 0) tighter_shared(m, avail, "MemAvailable");
  cgroup_limits(m, root);
  rlimit_left(m, root, as_limit, "VmSize", "RLIMIT_AS");
  rlimit_left(m, root, data_limit, "VmData", "RLIMIT_DATA");
  return rc;
}

static uint64_t soft_limit(int resource) {
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return (uint64_t)rl.rlim_cur;
}

int sysmem_read_shared(SysMem *m, int processes) {
  return sysmem_read_at(m, "", soft_limit(RLIMIT_AS), soft_limit(RLIMIT_DATA), processes);
}

int sysmem_read(SysMem *m) { return sysmem_read_shared(m, 1); }

int sysmem_check_in(const SysMem *m, uint64_t need, const char *what, Err *err) {
  if (need <= m->headroom) return 0;
  char want[NUM_TEXT_MAX], room[NUM_TEXT_MAX];
  return err_set(err, "%s needs %s, more than the %s this process can still allocate (limit: %s)", what,
                 num_bytes(want, sizeof want, need), num_bytes(room, sizeof room, m->headroom),
                 m->limit ? m->limit : "unknown");
}

int sysmem_check(uint64_t need, const char *what, Err *err) {
  SysMem m;
  sysmem_read(&m);
  return sysmem_check_in(&m, need, what, err);
}
