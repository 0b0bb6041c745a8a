/*
** test_textesc.c -- a model's bytes escaped for display: whole printable
** characters pass, every other byte is a visible \xNN, never U+FFFD, and
** a full output is cut between pieces.
*/
#include <locale.h>
#include <string.h>
#include <wchar.h>

#include "tap.h"
#include "ui/textesc.h"

/* A text (its bytes, a 0 among them counted), what it shows on a UTF-8
** terminal with "|" for the newline, and why. */
#define CASE(in, want, what) {in, sizeof in - 1, want, what}
static const struct {
  const char *in;
  size_t n;
  const char *want, *what;
} cases[] = {
    CASE("plain text", "plain text", "ASCII passes"),
    CASE("a\nb", "a|b", "a newline becomes the mark"),
    CASE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "two, three and four byte characters pass"),
    CASE("e\xcc\x81", "e\xcc\x81", "a combining accent passes"),
    /* bytes that are not UTF-8 */
    CASE("a\x80z", "a\\x80z", "a lone continuation byte"),
    CASE("\xe2\x82z", "\\xe2\\x82z", "a sequence cut short by a plain byte"),
    CASE("ab\xe2\x82", "ab\\xe2\\x82", "a sequence cut short by the end"),
    CASE("\xc0\xaf", "\\xc0\\xaf", "an overlong slash"),
    CASE("\xe0\x80\xaf", "\\xe0\\x80\\xaf", "an overlong three-byte form"),
    CASE("\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate"),
    CASE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "above U+10FFFF"),
    CASE("\xff\xfe", "\\xff\\xfe", "bytes that begin nothing"),
    CASE("\xe2\x82\xe2\x82\xac", "\\xe2\\x82\xe2\x82\xac", "a cut start, then the whole character"),
    /* controls */
    CASE("a\tb\rc", "a\\x09b\\x0dc", "tab and carriage return are escaped"),
    CASE("\x1b[2J", "\\x1b[2J", "ESC cannot clear the screen"),
    CASE("x\x7f", "x\\x7f", "DEL"),
    CASE("\xc2\x85", "\\xc2\\x85", "a C1 control (NEL)"),
    CASE("a\0b", "a\\x00b", "a 0 byte is shown, not the end"),
    CASE("\xef\xbf\xbd", "\\xef\\xbf\\xbd", "a U+FFFD the model wrote is escaped too"),
    CASE("a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb", "a right-to-left override cannot reorder the screen"),
    CASE("a\xe2\x80\x8b" "b\xef\xbb\xbf", "a\\xe2\\x80\\x8bb\\xef\\xbb\\xbf", "a zero width space and a BOM are shown"),
};

static void table(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[256];
    size_t k = textesc(cases[i].in, cases[i].n, "|", 1, out, sizeof out);
    ok(strcmp(out, cases[i].want) == 0 && k == strlen(cases[i].want), "%s: got '%s', want '%s'",
       cases[i].what, out, cases[i].want);
  }
}

static void ascii_terminal(void) {
  char out[64];
  textesc("caf\xc3\xa9\n", 6, "\\n", 0, out, sizeof out);
  ok(strcmp(out, "caf\\xc3\\xa9\\n") == 0, "without UTF-8 every non-ASCII byte is escaped: '%s'", out);
  textesc("a\nb", 3, NULL, 1, out, sizeof out);
  ok(strcmp(out, "a\nb") == 0, "no mark: the newline stays");
}

static void capacity(void) {
  char out[16];
  memset(out, 'z', sizeof out);
  size_t k = textesc("\x80\x81\x82", 3, "|", 1, out, 10);
  ok(k == 8 && strcmp(out, "\\x80\\x81") == 0, "an escape that does not fit is left out whole: '%s'", out);
  k = textesc("ab\xe2\x82\xac", 5, "|", 1, out, 5);
  ok(k == 2 && strcmp(out, "ab") == 0, "a character that does not fit is left out whole: '%s'", out);
  k = textesc("abc", 3, "|", 1, out, 1);
  ok(k == 0 && out[0] == '\0', "room for the NUL alone");
  ok(textesc("abc", 3, "|", 1, out, 0) == 0 && out[0] == '\0', "no room: nothing written");
  char big[TEXTESC_CAP(4)];
  k = textesc("\x80\x81\x82\x83", 4, "|", 1, big, sizeof big);
  ok(k == 16, "TEXTESC_CAP holds every byte escaped");
}

/* Every byte value at every position of a short text: the output never
** holds U+FFFD, a control character or a byte that is not UTF-8. */
static void never_replaced(void) {
  int bad = 0;
  for (int a = 0; a < 256 && !bad; a++)
    for (int b = 0; b < 256 && !bad; b++) {
      char in[4] = {(char)a, (char)b, '\xa9', '\xc3'}, out[64];
      size_t k = textesc(in, sizeof in, "|", 1, out, sizeof out);
      for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f) bad = 1;
      }
      if (strstr(out, "\xef\xbf\xbd")) bad = 1;
      mbstate_t st;
      memset(&st, 0, sizeof st);
      const char *p = out;
      if (mbsrtowcs(NULL, &p, 0, &st) == (size_t)-1) bad = 1;
      if (bad) diag("bytes %02x %02x gave '%s'", a, b, out);
    }
  ok(!bad, "every pair of bytes gives valid UTF-8 with no control and no U+FFFD");
}

int main(void) {
  if (!setlocale(LC_ALL, "C.UTF-8")) return skip_all("no C.UTF-8 locale");
  table();
  ascii_terminal();
  capacity();
  never_replaced();
  return tap_done();
}
