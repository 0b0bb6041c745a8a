/*
** host.c -- the Trainer as the Host of luaapi/host.h: the Lua layer's
** acquire, tickets, jobs, reading and handover, each a trainer call.
*/
#include "trainer/trainer.h"


/* ------------------------------------------------------------ the Host */

static Lab *host_acquire(Host *h) { return trainer_acquire(h->ud); }
static void host_release(Host *h) { trainer_release(h->ud); }
static long host_submit(Host *h, int id, long n, Err *err) { return trainer_submit(h->ud, id, n, err); }
static int host_poll(Host *h, long ticket, Err *err) { return trainer_poll(h->ud, ticket, err); }
static void host_cancel(Host *h) { trainer_cancel(h->ud); }
static long host_submit_job(Host *h, HostJobFn fn, void *arg, HostJobFree free_arg, Err *err) {
  return trainer_submit_job(h->ud, fn, arg, free_arg, err);
}
static void host_drop_job(Host *h, long ticket) { trainer_drop_job(h->ud, ticket); }
static int host_post(Host *h, HostPostFn fn, const void *arg, size_t n, Err *err) {
  return trainer_post(h->ud, fn, arg, n, err);
}
static int host_view(Host *h, int id, HostViewFn fn, void *ctx) { return trainer_view(h->ud, id, fn, ctx); }
static void host_handover(Host *h, int on) { trainer_set_handover(h->ud, on); }
static void host_hold(Host *h, int on) { trainer_hold(h->ud, on); }

/* The callbacks of the step handed over, if one waits, on the calling
** (the Lua) thread; then the trainer goes on. */
static void host_serve(Host *h) {
  trainer_serve_call(h->ud);
  long step, seq = trainer_handover(h->ud, &step);
  if (!seq) return;
  if (h->after_step) h->after_step(h->after_step_ctx, step);
  trainer_handover_done(h->ud, seq);
}

static int host_call(Host *h, HostCallFn fn, void *arg) { return trainer_call(h->ud, fn, arg); }
static int host_stepping(Host *h, int id) { return trainer_stepping(h->ud, id); }

void trainer_host(Trainer *t, Host *h) {
  trainer_set_lua_thread(t);
  *h = (Host){.acquire = host_acquire, .release = host_release, .submit = host_submit, .poll = host_poll,
              .cancel = host_cancel, .submit_job = host_submit_job, .drop_job = host_drop_job,
              .post = host_post, .view = host_view, .handover = host_handover, .hold = host_hold,
              .serve = host_serve, .call = host_call, .stepping = host_stepping, .inline_steps = 0, .ud = t};
}
