/*
** test_memory.c -- the lab's memory estimate counts every buffer a run
** makes (what a tied and an untied run really take, all instruments on and
** their lenses fitted, is
** not more than the estimate with the fitted lenses added, nor far less), and a run that would not fit
** in what the process can still get is refused before anything is
** allocated, with the estimate and the memory left in GiB; ranks of one
** job on one machine each check against their share of its memory.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lab/run.h"
#include "live_set.h"
#include "tap.h"


static RunOptions opts(const char *name, const char *tie, const char *vocab, const char *dim) {
  RunOptions o;
  Err err;
  run_options_default(&o);
  const char *kv[][2] = {{"vocab", vocab},      {"dim", dim},         {"layers", "2"},      {"heads", "4"},
                         {"ctx", "64"},         {"batch", "16"},      {"tie", tie},         {"threads", "1"},
                         {"lens_every", "1"},   {"eval_every", "1"},  {"align_every", "1"}, {"name", name}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (run_options_set_text(&o, kv[i][0], kv[i][1], &err) < 0) diag("setting %s: %s", kv[i][0], err.msg);
  return o;
}

/* Resident bytes of this process now. */
static double rss(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

#define MIB (1024.0 * 1024.0)

static void test_estimate_covers_the_run(void) {
  Err err;
  Lab *lab = lab_new(&err);
  /* A first small pair so that OpenBLAS's and the allocator's own buffers
  ** exist before the measurement. */
  RunOptions wt = opts("warm-t", "tied", "512", "64"), wu = opts("warm-u", "untied", "512", "64");
  lab_add_run(lab, &wt, &err);
  lab_add_run(lab, &wu, &err);
  lab_step(lab, &err);
  lab_step(lab, &err);
  double before = rss();
  RunOptions t = opts("t", "tied", "4096", "192"), u = opts("u", "untied", "4096", "192");
  t.corpus_seed = u.corpus_seed = 7;   /* a corpus of their own, counted too */
  Run *rt = lab_add_run(lab, &t, &err), *ru = lab_add_run(lab, &u, &err);
  ok(rt && ru, "a tied and an untied run: %s", rt && ru ? "made" : err.msg);
  int steps_ok = 1;
  for (int i = 0; i < 3; i++) steps_ok = steps_ok && lab_step(lab, &err) == 0;
  ok(steps_ok && run_metrics(rt)->align.step >= 1 && run_metrics(rt)->lens.step >= 1,
     "three steps with every instrument at every step (alignment at step %ld)", run_metrics(rt)->align.step);
  /* The fitted lens too: one lens step over a whole batch of positions. */
  LensFitOptions fo;
  lensfit_default_options(&fo);
  fo.steps = 1;
  fo.tokens_per_step = 16 * 64;
  LensFitPoint curve[4];
  LensFitResult fr = {.curve = curve, .curve_cap = 4};
  ok(run_fit_lens(rt, &fo, &fr, &err) == 0 && run_fit_lens(ru, &fo, &fr, &err) == 0, "a fitted lens for each: %s",
     rt->lens_fit && ru->lens_fit ? "made" : err.msg);
  double used = rss() - before;
  /* The fitted lens is not in a run's reservation (it is made, when it
  ** fits, at the first fit): add it. */
  double est = (double)run_memory_bytes(&t) + (double)run_memory_bytes(&u) + (double)data_memory_bytes(&t) +
               2.0 * (double)lensfit_memory_bytes(&t.model);
  ok(used <= est, "what they hold (%.1f MiB) is within the estimate (%.1f MiB)", used / MIB, est / MIB);
  ok(est <= 1.5 * used + 16 * MIB, "and the estimate is not far above it");
  lab_free(lab);
}

static void test_refused_before_allocating(void) {
  struct rlimit old;
  Err err = {""};
  getrlimit(RLIMIT_AS, &old);
  Lab *lab = lab_new(&err);
  /* Room for the lab as it is plus 1 GiB: a 2 GiB run must not start. */
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (!f || fscanf(f, "%ld", &pages) != 1) pages = 0;
  if (f) fclose(f);
  struct rlimit lim = old;
  lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1UL << 30);
  if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) lim.rlim_cur = old.rlim_max;
  setrlimit(RLIMIT_AS, &lim);
  RunOptions big = opts("big", "untied", "65536", "1024");
  double est = (double)run_memory_bytes(&big);
  Run *r = lab_add_run(lab, &big, &err);
  ok(!r && strstr(err.msg, "RLIMIT_AS") && strstr(err.msg, "GiB") && strstr(err.msg, "run 'big' needs ") &&
         strstr(err.msg, "this process can still allocate (limit: RLIMIT_AS)"),
     "a %.1f GiB run under RLIMIT_AS of 1 GiB more: %s", est / (1 << 30), err.msg);
  ok(lab_n_runs(lab) == 0, "and the lab is as it was");
  RunOptions small = opts("small", "tied", "512", "64");
  ok(lab_add_run(lab, &small, &err) != NULL, "a small run still fits");
  ok(lab_check_memory(lab, &small, 1000, &err) < 0 && strstr(err.msg, "more than the 1000 bytes it may have") &&
         strstr(err.msg, "needs about ") && strstr(err.msg, " MiB,"),
     "a budget below the estimate refuses, in units that show both numbers: %s", err.msg);
  ok(lab_check_memory(lab, &small, 3 << 19, &err) < 0 && strstr(err.msg, "more than the 1.5 MiB it may have"),
     "a budget of megabytes is said in MiB: %s", err.msg);
  setrlimit(RLIMIT_AS, &old);
  lab_free(lab);
}

/* A live change is checked for what it adds: a scale asks nothing, an
** alignment turned on asks for its workspace, and one that does not fit
** leaves the run as it was. */
static void test_live_change(void) {
  struct rlimit old;
  Err err = {""};
  getrlimit(RLIMIT_AS, &old);
  Lab *lab = lab_new(&err);
  RunOptions o = opts("live", "untied", "65536", "256");
  run_options_set_text(&o, "align_every", "0", &err);
  Run *r = lab_add_run(lab, &o, &err);
  o.align_every = 1;
  size_t more = run_memory_bytes(&o) - run_memory_bytes(run_options(r));
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (!f || fscanf(f, "%ld", &pages) != 1) pages = 0;
  if (f) fclose(f);
  struct rlimit lim = old;   /* room for half the workspace */
  lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + more / 2;
  if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) lim.rlim_cur = old.rlim_max;
  if (!r || setrlimit(RLIMIT_AS, &lim) != 0) {
    skip("no run to change, or no RLIMIT_AS (%s)", err.msg);
    skip("(the same)");
  } else {
    ok(live_text(r, "in_scale", "2", &err) == 0, "a change of in_scale asks nothing of the memory: %s", err.msg);
    int rc = live_text(r, "align_every", "10", &err);
    ok(rc < 0 && strstr(err.msg, "the change align_every=10 of run 'live' needs ") &&
           strstr(err.msg, "this process can still allocate (limit: RLIMIT_AS)") &&
           run_options(r)->align_every == 0,
       "an alignment turned on that does not fit is refused, the run as it was: %s", err.msg);
  }
  setrlimit(RLIMIT_AS, &old);
  lab_free(lab);
}

/* Two ranks on one machine share its memory: each checks a run against
** its half of MemAvailable (or the cgroup's limit), but not of a limit of
** its own (RLIMIT_AS). The check allocates nothing: a run of about three
** quarters of what a process may get is sized, and only checked. */
static void test_shared_by_ranks(void) {
  Err err = {""};
  Lab *lab = lab_new(&err);
  Reducer two = {.rank = 0, .world = 2, .node_ranks = 2};
  SysMem plain, shared;
  sysmem_read(&plain);
  int halved = strcmp(plain.limit, "MemAvailable") == 0 || strcmp(plain.limit, "cgroup memory limit") == 0;
  lab_set_reducer(lab, &two);
  lab_headroom(lab, &shared);
  double ratio = (double)shared.headroom / (double)plain.headroom;
  if (halved)
    ok(ratio > 0.45 && ratio < 0.55 && strstr(shared.limit, "shared by the 2 ranks on this machine"),
       "2 ranks on this machine: each may have half the %s (%.3f of it: %s)", plain.limit, ratio, shared.limit);
  else
    ok(ratio > 0.9 && ratio < 1.1 && !strstr(shared.limit, "shared"),
       "2 ranks under %s, a limit of each process's own: all of it each (%.3f)", plain.limit, ratio);
  RunOptions o = opts("wide", "tied", "4096", "64");
  for (int dim = 64; dim <= 8192 && (double)run_memory_bytes(&o) < 0.75 * (double)plain.headroom; dim += 64) {
    char text[16];
    snprintf(text, sizeof text, "%d", dim);
    run_options_set_text(&o, "dim", text, &err);
  }
  double est = (double)run_memory_bytes(&o);
  if (est < 0.6 * (double)plain.headroom || est > 0.9 * (double)plain.headroom || !halved) {
    skip("no run of 0.6-0.9 of the %.1f GiB the process may get (%.1f GiB), or the limit is its own",
         plain.headroom / 1073741824.0, est / 1073741824.0);
    skip("(the same)");
  } else {
    ok(lab_check_memory(lab, &o, 0, &err) < 0 && strstr(err.msg, "shared by the 2 ranks"),
       "a run of %.1f GiB is refused to each of 2 ranks: %s", est / 1073741824.0, err.msg);
    lab_set_reducer(lab, NULL);
    ok(lab_check_memory(lab, &o, 0, &err) == 0, "and fits one process (%.1f GiB of %.1f)", est / 1073741824.0,
       plain.headroom / 1073741824.0);
  }
  lab_free(lab);
}

int main(void) {
  if (TAP_UNDER_ASAN) return skip_all("resident memory and RLIMIT_AS mean nothing under AddressSanitizer");
  test_estimate_covers_the_run();
  test_refused_before_allocating();
  test_live_change();
  test_shared_by_ranks();
  return tap_done();
}
