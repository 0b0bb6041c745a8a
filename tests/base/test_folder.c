/*
** test_folder.c -- base/folder.h: the XDG folders (a relative value
** ignored, an unset one falling back to HOME, neither set an error) and
** mkdir -p (nested, existing, a file in the way, the mode).
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/folder.h"
#include "tap.h"

static void test_xdg(const char *tmp) {
  char buf[PATH_MAX], want[PATH_MAX];
  Err err;
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_STATE_HOME", tmp, 1);
  snprintf(want, sizeof want, "%s/tielab", tmp);
  int n = folder_xdg(FOLDER_STATE, "tielab", buf, sizeof buf, &err);
  ok(n == (int)strlen(want) && strcmp(buf, want) == 0, "an absolute XDG_STATE_HOME is used: %s", buf);

  /* With HOME absolute, each kind's variable relative, unset or empty. */
  static const struct {
    FolderKind kind;
    const char *var, *value, *leaf, *want, *what;
  } cases[] = {
      {FOLDER_CACHE, "XDG_CACHE_HOME", "relative/cache", "tielab", "/home/someone/.cache/tielab",
       "a relative XDG_CACHE_HOME is ignored"},
      {FOLDER_CONFIG, "XDG_CONFIG_HOME", NULL, "tielab/init.lua", "/home/someone/.config/tielab/init.lua",
       "an unset XDG_CONFIG_HOME falls back to HOME"},
      {FOLDER_DATA, "XDG_DATA_HOME", "", "tielab", "/home/someone/.local/share/tielab",
       "so does an empty XDG_DATA_HOME"},
      {FOLDER_STATE, "XDG_STATE_HOME", NULL, "tielab", "/home/someone/.local/state/tielab",
       "the state folder's default"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (cases[i].value) setenv(cases[i].var, cases[i].value, 1);
    else unsetenv(cases[i].var);
    buf[0] = '\0';
    folder_xdg(cases[i].kind, cases[i].leaf, buf, sizeof buf, &err);
    ok(strcmp(buf, cases[i].want) == 0, "%s: %s", cases[i].what, buf);
  }

  setenv("HOME", "home", 1);
  n = folder_xdg(FOLDER_STATE, "tielab", buf, sizeof buf, &err);
  ok(n < 0 && strcmp(err.msg, "neither XDG_STATE_HOME nor HOME is set to an absolute path") == 0,
     "a relative HOME counts as none: %s", err.msg);
  unsetenv("HOME");
  n = folder_xdg(FOLDER_CACHE, "tielab", buf, sizeof buf, &err);
  ok(n < 0 && strcmp(err.msg, "neither XDG_CACHE_HOME nor HOME is set to an absolute path") == 0,
     "neither set: %s", err.msg);

  setenv("XDG_STATE_HOME", "/s", 1);
  n = folder_xdg(FOLDER_STATE, "tielab", buf, 8, &err);
  ok(n < 0 && strcmp(err.msg, "state folder path too long") == 0, "a path too long for the buffer: %s", err.msg);
}

static void test_make(const char *tmp) {
  char path[PATH_MAX], file[PATH_MAX];
  struct stat st;
  Err err;
  snprintf(path, sizeof path, "%s/a/b//c/", tmp);
  ok(folder_make_all(path, FOLDER_PRIVATE, &err) == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode),
     "nested folders are made, a doubled or final '/' aside");
  ok((st.st_mode & 0777) == 0700, "a private folder is the user's alone (%o)", (unsigned)(st.st_mode & 0777));
  ok(folder_make_all(path, FOLDER_PRIVATE, &err) == 0, "folders that are there already are no error");
  ok(folder_make(path, FOLDER_PRIVATE) == 0, "nor one folder");

  snprintf(file, sizeof file, "%s/a/file", tmp);
  FILE *f = fopen(file, "w");
  if (f) fclose(f);
  errno = 0;
  ok(folder_make(file, FOLDER_PRIVATE) < 0 && errno == ENOTDIR, "a file in the way of one folder: ENOTDIR");
  snprintf(path, sizeof path, "%s/a/file/deeper", tmp);
  int rc = folder_make_all(path, FOLDER_PRIVATE, &err);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "cannot create %s/a/file: %s", tmp, strerror(ENOTDIR));
  ok(rc < 0 && strcmp(err.msg, want) == 0, "a file in the way of mkdir -p names it: %s", err.msg);

  mode_t old = umask(022);
  snprintf(path, sizeof path, "%s/shared", tmp);
  ok(folder_make_all(path, FOLDER_SHARED, &err) == 0 && stat(path, &st) == 0 && (st.st_mode & 0777) == 0755,
     "a shared folder is 0777 less the umask (%o)", (unsigned)(st.st_mode & 0777));
  umask(old);
  ok(folder_make_all("", FOLDER_PRIVATE, &err) < 0, "no name, no folder: %s", err.msg);
}

int main(void) {
  char tmp[] = "/tmp/tielab-folder-XXXXXX";
  if (!mkdtemp(tmp)) return bail_out("cannot create a temporary folder in /tmp");
  test_xdg(tmp);
  test_make(tmp);
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  if (system(cmd) != 0) diag("could not remove %s", tmp);
  return tap_done();
}
