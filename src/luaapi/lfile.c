/*
** lfile.c -- files opened for Lua without ever blocking: a chunk loaded
** from a file (loadfile, dofile, require), a script named on the command
** line (which may be a pipe: waited for while Ctrl-C is listened to) and a
** Lua file handle (the sandbox's io.open). Both go through base/safeopen,
** so a FIFO or a device a script names is refused at once instead of
** hanging the lab or feeding it an endless file. How they match Lua's own:
** docs/architecture.md, 'Files for Lua'.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "luaapi/linternal.h"

/* Why opening 'path' failed, without the name: the system's words for an
** errno, else (a file refused for its kind) safeopen's after "PATH: ". */
static void why_not(const Err *err, const char *path, int e, char *why, size_t cap) {
  size_t n = strlen(path);
  const char *text = err->msg;
  if (e) text = strerror(e);
  else if (strncmp(text, path, n) == 0 && text[n] == ':') text += n + 2;
  snprintf(why, cap, "%s", text);
}

/* ------------------------------------------------------------ chunks */

typedef struct LoadF {
  int n;              /* bytes of 'buf' read ahead, not yet handed to Lua */
  FILE *f;
  char buf[BUFSIZ];
} LoadF;

static const char *read_chunk(lua_State *L, void *ud, size_t *size) {
  LoadF *lf = ud;
  (void)L;
  if (lf->n > 0) {
    *size = (size_t)lf->n;
    lf->n = 0;
    return lf->buf;
  }
  if (feof(lf->f)) return NULL;
  *size = fread(lf->buf, 1, sizeof lf->buf, lf->f);
  return lf->buf;
}

/* A UTF-8 byte order mark and a first line starting with '#' (a "#!"
** line) are skipped, as lua does; '*c' gets the first character after
** them. Returns whether a line was skipped. */
static int skip_start(FILE *f, int *c) {
  *c = getc(f);
  if (*c == 0xEF && getc(f) == 0xBB && getc(f) == 0xBF) *c = getc(f);
  if (*c != '#') return 0;
  while ((*c = getc(f)) != EOF && *c != '\n') {}
  *c = getc(f);
  return 1;
}

/* Load the chunk of the open stream 'f' (closed here), named 'name'. */
static int load_stream(lua_State *L, FILE *f, const char *name, const char *mode) {
  LoadF lf = {0, f, {0}};
  int c;
  /* a skipped line stays a line, so that line numbers hold; a binary chunk has none */
  if (skip_start(lf.f, &c) && c != LUA_SIGNATURE[0]) lf.buf[lf.n++] = '\n';
  if (c != EOF) lf.buf[lf.n++] = (char)c;
  lua_pushfstring(L, "@%s", name);
  int status = lua_load(L, read_chunk, &lf, lua_tostring(L, -1), mode);
  lua_remove(L, -2);
  int bad = ferror(lf.f);
  fclose(lf.f);
  if (bad) {
    lua_pop(L, 1);
    lua_pushfstring(L, "cannot read %s", name);
    return LUA_ERRFILE;
  }
  return status;
}

int lapi_load_file(lua_State *L, const char *path, const char *name, const char *mode) {
  Err err;
  char why[256];
  /* Under the sandbox 'path' is the name it checked: a link swapped in since is refused. */
  FILE *f = safeopen_fread(path, lapi_get(L)->opt.sandbox ? SAFEOPEN_NOFOLLOW : 0, NULL, &err);
  if (!f) {
    why_not(&err, path, errno, why, sizeof why);
    lua_pushfstring(L, "cannot open %s: %s", name, why);
    return LUA_ERRFILE;
  }
  return load_stream(L, f, name, mode);
}

static int stop_asked(void *api) { return lapi_stop_pending(api); }

int lapi_load_script(lua_State *L, const char *path, const char *mode) {
  Cancel stop = {stop_asked, lapi_get(L)};
  Err err;
  FILE *f = safeopen_fstream(path, &stop, &err);
  if (!f) {
    lua_pushfstring(L, "cannot open %s", err.msg);
    return LUA_ERRFILE;
  }
  return load_stream(L, f, path, mode);
}

/* ------------------------------------------------------------ file handles */

/* io.open's modes, as open(2) flags and the stdio mode of the stream ('b'
** changes nothing on POSIX). */
static const struct {
  const char *mode, *stdio;
  int flags;
} modes[] = {
  {"r", "r", O_RDONLY},
  {"r+", "r+", O_RDWR},
  {"w", "w", O_WRONLY | O_CREAT | O_TRUNC},
  {"w+", "w+", O_RDWR | O_CREAT | O_TRUNC},
  {"a", "a", O_WRONLY | O_CREAT | O_APPEND},
  {"a+", "a+", O_RDWR | O_CREAT | O_APPEND},
};

int lapi_file_mode(const char *mode) {
  size_t n = mode[0] && mode[1] == '+' ? 2 : 1;
  if (strspn(mode + n, "b") != strlen(mode + n)) return -1;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strncmp(mode, modes[i].mode, n) == 0 && modes[i].mode[n] == '\0') return (int)i;
  return -1;
}

int lapi_mode_writes(int mode) { return modes[mode].flags != O_RDONLY; }

static int close_file(lua_State *L) {
  luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  errno = 0;
  return luaL_fileresult(L, fclose(p->f) == 0, NULL);
}

/* A new handle, closed until 'f' is given to it, so that a memory error
** half-way leaves nothing behind. */
static luaL_Stream *new_handle(lua_State *L) {
  luaL_Stream *p = lua_newuserdatauv(L, sizeof *p, 0);
  p->f = NULL;
  p->closef = NULL;
  luaL_setmetatable(L, LUA_FILEHANDLE);
  return p;
}

/* Give 'f' to the handle on top, or (f NULL) take it off the stack. */
static int adopt(lua_State *L, luaL_Stream *p, FILE *f) {
  if (!f) {
    lua_pop(L, 1);
    return 0;
  }
  p->f = f;
  p->closef = close_file;
  return 1;
}

int lapi_open_handle(lua_State *L, const char *path, int mode, char *why, size_t cap) {
  luaL_Stream *p = new_handle(L);
  Err err;
  int fd = safeopen_open(path, modes[mode].flags, SAFEOPEN_NOFOLLOW, NULL, &err);
  if (fd < 0) {
    int e = errno;
    why_not(&err, path, e, why, cap);
    lua_pop(L, 1);
    errno = e;
    return 0;
  }
  FILE *f = fdopen(fd, modes[mode].stdio);
  if (!f) {
    snprintf(why, cap, "%s", strerror(errno));
    close(fd);
  }
  return adopt(L, p, f);
}

int lapi_open_null(lua_State *L) {
  luaL_Stream *p = new_handle(L);
  return adopt(L, p, fopen("/dev/null", "we"));
}

void lapi_close_handle(lua_State *L, int idx) {
  luaL_Stream *p = luaL_checkudata(L, idx, LUA_FILEHANDLE);
  if (p->closef != close_file) return;   /* closed already, or not one of ours */
  p->closef = NULL;
  fclose(p->f);
}
