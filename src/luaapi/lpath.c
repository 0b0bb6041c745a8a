/*
** lpath.c -- where a sandboxed script may read and write: the rule every
** file a script names goes through (io.open, loadfile, require, lab.load,
** r:save, lab.mkdir, a run's corpus, ...), and a journal's files too. The
** rule, and why a name is checked by its letters first:
** docs/architecture.md, 'The files a script names'.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/folder.h"
#include "luaapi/linternal.h"

/* The folders of the rule, all real absolute names ("" for none). */
typedef struct Roots {
  const char *cwd, *script_dir, *data_dir;
} Roots;

static int under(const char *path, const char *root) {
  size_t n = strlen(root);
  if (n == 0 || strncmp(path, root, n) != 0) return 0;
  return path[n] == '/' || path[n] == '\0' || strcmp(root, "/") == 0;
}

static int allowed(const Roots *r, const char *path, int write) {
  if (under(path, r->cwd)) return 1;
  return !write && (under(path, r->script_dir) || under(path, r->data_dir));
}

/* 'path' made absolute against 'cwd', and "." , ".." and empty parts taken
** out by their letters alone, into 'out'; -1 when it is too long. */
static int lexical(const char *cwd, const char *path, char out[PATH_MAX]) {
  char full[PATH_MAX];
  int n = path[0] == '/' ? snprintf(full, sizeof full, "%s", path) : snprintf(full, sizeof full, "%s/%s", cwd, path);
  if (n < 0 || n >= PATH_MAX) return -1;
  size_t len = 0;
  char *rest;
  for (char *part = strtok_r(full, "/", &rest); part; part = strtok_r(NULL, "/", &rest)) {
    if (strcmp(part, ".") == 0) continue;
    if (strcmp(part, "..") == 0) {
      while (len > 0 && out[--len] != '/') {}
      continue;
    }
    len += (size_t)snprintf(out + len, PATH_MAX - len, "/%s", part);   /* fits: no longer than 'full' */
  }
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  return 0;
}

/* Resolve 'path' (which may not exist yet) to a real absolute name: every
** symbolic link in it followed, so that what is checked is what is opened.
** A name that does not exist is its real directory plus the name, but only
** if nothing is there at all: a dangling link would be followed by a later
** open for writing and create its target anywhere. */
static PathVerdict resolve(const char *cwd, const char *path, char real[PATH_MAX]) {
  char full[PATH_MAX];
  int n = path[0] == '/' ? snprintf(full, sizeof full, "%s", path) : snprintf(full, sizeof full, "%s/%s", cwd, path);
  if (n < 0 || n >= PATH_MAX) return PATH_BAD;
  if (realpath(full, real)) return PATH_OK;
  if (errno != ENOENT) return PATH_BAD;
  struct stat st;
  if (lstat(full, &st) == 0) return PATH_LINK;
  char *slash = strrchr(full, '/');
  const char *base = slash + 1;
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) return PATH_BAD;
  *slash = '\0';
  char dir[PATH_MAX];
  if (!realpath(full[0] ? full : "/", dir)) return PATH_BAD;
  n = snprintf(real, PATH_MAX, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, base);
  return n < 0 || n >= PATH_MAX ? PATH_BAD : PATH_OK;
}

/* Whether the folder 'dir' (resolved) is the folder 'name', or one above
** it. */
static int holds(const char *dir, const char *name) {
  char real[PATH_MAX];
  if (!name || !*name || !realpath(name, real)) return 0;
  size_t n = strlen(dir);
  return strncmp(real, dir, n) == 0 && (real[n] == '/' || real[n] == '\0' || strcmp(dir, "/") == 0);
}

/* The running script's folder as a root to read: none when it is "/",
** or the home folder or one above it (a script saved in ~ would read
** ~/.ssh), or one that holds the user's configuration folder (where
** folder_xdg says it is, the one init.lua is searched in). */
static const char *script_root(const LuaApi *api) {
  const char *d = api->script_dir;
  char config[PATH_MAX];
  int has_config = folder_xdg(FOLDER_CONFIG, "", config, sizeof config, NULL) >= 0;
  if (strcmp(d, "/") == 0 || holds(d, getenv("HOME")) || (has_config && holds(d, config))) return "";
  return d;
}

static PathVerdict verdict(const Roots *r, const char *path, int write, char real[PATH_MAX]) {
  char lex[PATH_MAX];
  if (!path || !*path || lexical(r->cwd, path, lex) < 0) return PATH_BAD;
  if (!allowed(r, lex, write)) return PATH_OUTSIDE;   /* nothing outside is looked at */
  PathVerdict v = resolve(r->cwd, path, real);
  if (v != PATH_OK) return v;
  return allowed(r, real, write) ? PATH_OK : PATH_OUTSIDE;
}

PathVerdict lapi_path_lexical(LuaApi *api, const char *path, int write, char lex[PATH_MAX]) {
  if (!path || !*path || strlen(path) >= PATH_MAX) return PATH_BAD;
  if (!api->opt.sandbox) {
    snprintf(lex, PATH_MAX, "%s", path);
    return PATH_OK;
  }
  Roots r = {api->cwd, script_root(api), api->data_dir};
  if (lexical(r.cwd, path, lex) < 0) return PATH_BAD;
  return allowed(&r, lex, write) ? PATH_OK : PATH_OUTSIDE;
}

PathVerdict lapi_path_resolve(LuaApi *api, const char *path, int write, char real[PATH_MAX]) {
  if (!path || !*path) return PATH_BAD;
  if (!api->opt.sandbox) {
    snprintf(real, PATH_MAX, "%s", path);
    return strlen(path) < PATH_MAX ? PATH_OK : PATH_BAD;
  }
  Roots r = {api->cwd, script_root(api), api->data_dir};
  return verdict(&r, path, write, real);
}

int lapi_path_ok(LuaApi *api, const char *path, int write) {
  char real[PATH_MAX];
  return lapi_path_resolve(api, path, write, real) == PATH_OK;
}

static const char *const path_refusals[] = {
  [PATH_OUTSIDE] = "is outside the working directory (sandbox)",
  [PATH_LINK] = "is a symbolic link to nothing (sandbox)",
  [PATH_BAD] = "cannot be resolved (sandbox)",
};

const char *lapi_path_refusal(PathVerdict v) { return v == PATH_OK ? "" : path_refusals[v]; }

int luaapi_sandbox_check(const char *path, int write, Err *err) {
  char cwd[PATH_MAX], data[PATH_MAX], real[PATH_MAX];
  if (!realpath(".", cwd)) return err_set(err, "the working directory cannot be resolved (sandbox)");
  if (!realpath(lapi_data_dir(), data)) data[0] = '\0';
  Roots r = {cwd, "", data};
  PathVerdict v = verdict(&r, path, write, real);
  return v == PATH_OK ? 0 : err_set(err, "'%.900s' %s", path ? path : "", path_refusals[v]);
}

int lapi_corpus_allowed(void *ctx, char *corpus, size_t cap) {
  LapiCorpusGuard *g = ctx;
  char real[PATH_MAX];
  /* The file checked is the one opened: its resolved name, kept. */
  if (lapi_path_resolve(g->api, corpus, 0, real) == PATH_OK && strlen(real) < cap) {
    memcpy(corpus, real, strlen(real) + 1);
    return 1;
  }
  g->refused = 1;
  snprintf(g->corpus, sizeof g->corpus, "%s", corpus);
  return 0;
}

const char *lapi_check_path(lua_State *L, const char *fname, const char *path, int write, char real[PATH_MAX]) {
  PathVerdict v = lapi_path_resolve(lapi_get(L), path, write, real);
  if (v != PATH_OK) luaL_error(L, "%s: '%s' %s", fname, path ? path : "", lapi_path_refusal(v));
  return real;
}

const char *lapi_name_arg(lua_State *L, int idx, const char *fname) {
  size_t n;
  const char *s = luaL_checklstring(L, idx, &n);   /* a number becomes its name, in place */
  if (strlen(s) != n) luaL_error(L, "%s: the name '%s\\0...' holds a NUL byte", fname, s);
  return s;
}

const char *luaapi_name_arg(lua_State *L, int idx, const char *fname) { return lapi_name_arg(L, idx, fname); }

const char *lapi_path_arg(lua_State *L, int idx, const char *fname, int write, char real[PATH_MAX]) {
  return lapi_check_path(L, fname, lapi_name_arg(L, idx, fname), write, real);
}

void lapi_set_script_dir(LuaApi *api, const char *script) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", script);
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
  else snprintf(buf, sizeof buf, ".");
  if (!realpath(buf[0] ? buf : "/", api->script_dir)) api->script_dir[0] = '\0';
}
