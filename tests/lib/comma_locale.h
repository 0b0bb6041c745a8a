/*
** comma_locale.h -- switch LC_NUMERIC to a locale whose decimal point is a
** comma, as a Lua script's os.setlocale("de_DE.UTF-8") does.
**
** Tries the usual names first. When none is installed and 'localedef' and
** the locale's sources are (Debian's 'locales' package), compiles
** de_DE.UTF-8 once into $XDG_CACHE_HOME/tielab-locales and points LOCPATH
** there, so no system file changes. Returns 1 when the comma locale is in
** force; 0 when the machine has no way to it (the caller skips its
** checks); -1 when it has one and it failed (the caller fails).
*/
#ifndef TIELAB_COMMA_LOCALE_H
#define TIELAB_COMMA_LOCALE_H

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int comma_locale_try(void) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
                                      "nl_NL.UTF-8", "it_IT.UTF-8", "es_ES.UTF-8", "ru_RU.UTF-8"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (setlocale(LC_NUMERIC, names[i]) && strcmp(localeconv()->decimal_point, ",") == 0) return 1;
  setlocale(LC_NUMERIC, "C");
  return 0;
}

static int comma_locale_on(void) {
  if (comma_locale_try()) return 1;
  const char *cache = getenv("XDG_CACHE_HOME");
  char dir[600], cmd[2400];
  snprintf(dir, sizeof dir, "%s/tielab-locales", cache && *cache ? cache : "/tmp");
  struct stat sb;
  char made[700];
  snprintf(made, sizeof made, "%s/de_DE.UTF-8/LC_NUMERIC", dir);
  if (stat(made, &sb) != 0) {
    if (system("command -v localedef >/dev/null 2>&1") != 0 || stat("/usr/share/i18n/locales/de_DE", &sb) != 0)
      return 0;
    /* Built aside and renamed into place: tests running at once never see
    ** a half-written locale. */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && t='%s/build.%ld' && "
             "{ localedef -i de_DE -f UTF-8 \"$t\" >/dev/null 2>&1; "
             "mv -T \"$t\" '%s/de_DE.UTF-8' 2>/dev/null; rm -rf \"$t\"; }",
             dir, dir, (long)getpid(), dir);
    if (system(cmd) != 0 && stat(made, &sb) != 0) return -1;
    if (stat(made, &sb) != 0) return -1;
  }
  setenv("LOCPATH", dir, 1);
  return comma_locale_try() ? 1 : -1;
}

static void comma_locale_off(void) { setlocale(LC_NUMERIC, "C"); }

#endif
