/*
** test_safeopen.c -- a file a user names is opened for reading only when
** it is a regular file: a FIFO (with no writer), a device, a folder or,
** when asked, a symbolic link is refused at once with a message that says
** what it is; a regular file comes back blocking and close-on-exec. Opened
** to write, a FIFO with no reader and a device are refused the same way,
** and a regular file is truncated only when asked. A stream (a script) may
** be a FIFO: it is read once a writer wrote, and a Cancel ends the wait for
** one. An alarm ends the test if an open ever blocks.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "tap.h"

static char dir[256];

/* DIR/LEAF in 'path' (PATH_LEN bytes). */
enum { PATH_LEN = 300 };
static const char *in_dir(char path[PATH_LEN], const char *leaf) {
  snprintf(path, PATH_LEN, "%s/%s", dir, leaf);
  return path;
}

/* 'path' opened with 'flags' is refused with a message holding 'want'. */
static void refused(const char *path, int flags, const char *want, const char *what) {
  Err err = {{0}};
  int fd = safeopen_read(path, flags, NULL, &err);
  if (fd >= 0) close(fd);
  ok(fd < 0 && strstr(err.msg, want) && strstr(err.msg, path), "%s is refused: %s", what, err.msg);
}

/* A Cancel that says stop at its third question. */
static int third(void *ctx) { return ++*(int *)ctx >= 3; }

/* Streams to read (a script) and to write (a recording) on a FIFO. */
static void test_fifo_streams(const char *fifo, const char *file) {
  Err err = {{0}};
  int asked = 0;
  Cancel stop = {third, &asked};
  FILE *f = safeopen_fstream(fifo, &stop, &err);
  ok(!f && strstr(err.msg, "interrupted while waiting for a writer") && asked == 3,
     "a FIFO with no writer is waited for until the Cancel says stop: %s", err.msg);
  if (f) fclose(f);
  f = safeopen_fwrite(fifo, &err);
  ok(!f && strstr(err.msg, "a FIFO with no reader") && strstr(err.msg, fifo),
     "writing to a FIFO with no reader is refused at once: %s", err.msg);
  if (f) fclose(f);
  pid_t child = fork();
  if (child == 0) {   /* the writer, as a shell's echo into the FIFO */
    int w = open(fifo, O_WRONLY);
    _exit(w >= 0 && write(w, "print(1)\n", 9) == 9 ? 0 : 1);
  }
  char line[32] = "";
  f = safeopen_fstream(fifo, NULL, &err);
  ok(f && fgets(line, sizeof line, f) && strcmp(line, "print(1)\n") == 0, "with a writer, the stream reads what it wrote");
  if (f) fclose(f);
  if (child > 0) waitpid(child, NULL, 0);
  f = safeopen_fstream(dir, NULL, &err);
  ok(!f && strstr(err.msg, "is a folder"), "a folder is no stream: %s", err.msg);
  f = safeopen_fwrite(file, &err);
  ok(f && fputs("again\n", f) >= 0 && fclose(f) == 0 && (f = safeopen_fread(file, 0, NULL, &err)) &&
         fgets(line, sizeof line, f) && strcmp(line, "again\n") == 0,
     "a regular file is emptied and written");
  if (f) fclose(f);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tielab-safeopen-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return bail_out("cannot create a temporary folder in %s", dir);
  alarm(20);   /* an open that blocks is a failure, not a hang */

  char file[PATH_LEN], fifo[PATH_LEN], missing[PATH_LEN], link[PATH_LEN], to_fifo[PATH_LEN];
  in_dir(file, "plain.txt");
  FILE *w = fopen(file, "w");
  fputs("hello\n", w);
  fclose(w);
  Err err = {{0}};
  struct stat st;
  int fd = safeopen_read(file, 0, &st, &err);
  ok(fd >= 0 && st.st_size == 6, "a regular file opens, its size given (%lld)", (long long)st.st_size);
  ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
     "it reads blocking, as usual, and closes on exec");
  if (fd >= 0) close(fd);

  FILE *f = safeopen_fread(file, 0, NULL, &err);
  char line[16] = "";
  ok(f && fgets(line, sizeof line, f) && strcmp(line, "hello\n") == 0, "as a stream it reads the file");
  if (f) fclose(f);

  in_dir(fifo, "fifo");
  if (mkfifo(fifo, 0600) == 0) {
    refused(fifo, 0, "is a FIFO, not a regular file", "a FIFO with no writer");
    test_fifo_streams(fifo, file);
  } else {
    for (int i = 0; i < 6; i++) skip("mkfifo is not allowed here");
  }
  refused("/dev/zero", 0, "is a character device, not a regular file", "/dev/zero");
  refused(dir, 0, "is a folder, not a regular file", "a folder");
  refused(in_dir(missing, "missing"), 0, "no such file", "a missing file");
  refused("", 0, "an empty name", "an empty name");

  in_dir(link, "link");
  in_dir(to_fifo, "to-fifo");
  if (symlink(file, link) == 0 && symlink(fifo, to_fifo) == 0) {
    fd = safeopen_read(link, 0, NULL, &err);
    ok(fd >= 0, "a symbolic link to a regular file is followed");
    if (fd >= 0) close(fd);
    refused(link, SAFEOPEN_NOFOLLOW, "is a symbolic link, refused here", "a symbolic link under SAFEOPEN_NOFOLLOW");
    refused(to_fifo, 0, "is a FIFO", "a symbolic link to a FIFO");
  } else {
    skip("symbolic links are not allowed here");
    skip("symbolic links are not allowed here");
    skip("symbolic links are not allowed here");
  }

  /* Writing: created, truncated only when asked, never a FIFO or a device. */
  fd = safeopen_open(file, O_WRONLY | O_APPEND, 0, NULL, &err);
  ok(fd >= 0 && write(fd, "more\n", 5) == 5, "a regular file opens to append");
  if (fd >= 0) close(fd);
  ok(stat(file, &st) == 0 && st.st_size == 11, "and keeps what it held (%lld bytes)", (long long)st.st_size);
  fd = safeopen_open(file, O_WRONLY | O_TRUNC, 0, NULL, &err);
  ok(fd >= 0 && stat(file, &st) == 0 && st.st_size == 0, "O_TRUNC empties a regular file");
  if (fd >= 0) close(fd);
  char made[PATH_LEN];
  fd = safeopen_open(in_dir(made, "made.txt"), O_WRONLY | O_CREAT, 0, NULL, &err);
  ok(fd >= 0 && stat(made, &st) == 0 && S_ISREG(st.st_mode), "O_CREAT makes a missing file");
  if (fd >= 0) close(fd);
  unlink(made);
  errno = 0;
  fd = safeopen_open(fifo, O_WRONLY | O_TRUNC, 0, NULL, &err);
  if (access(fifo, F_OK) == 0)
    ok(fd < 0 && strstr(err.msg, "is a FIFO, not a regular file") && errno == 0,
       "a FIFO with no reader is refused to write, not waited for: %s", err.msg);
  else
    skip("mkfifo is not allowed here");
  if (fd >= 0) close(fd);
  fd = safeopen_open("/dev/null", O_WRONLY, 0, NULL, &err);
  ok(fd < 0 && strstr(err.msg, "is a character device"), "a device is refused to write: %s", err.msg);
  if (fd >= 0) close(fd);
  fd = safeopen_open(missing, O_RDONLY, 0, NULL, &err);
  ok(fd < 0 && errno == ENOENT, "a missing file leaves errno ENOENT for the caller's message");

  unlink(to_fifo);
  unlink(link);
  unlink(fifo);
  unlink(file);
  rmdir(dir);
  return tap_done();
}
