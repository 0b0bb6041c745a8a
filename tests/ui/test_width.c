/*
** test_width.c -- ui/width.h in a UTF-8 locale: a wide character takes two
** columns, an accent none, and bad UTF-8 is one '?' a column per maximal
** ill-formed subsequence, as base/utf8.h counts it.
*/
#include <locale.h>
#include <string.h>

#include "tap.h"
#include "ui/width.h"

#define S(lit) lit, sizeof lit - 1

int main(void) {
  if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) return skip_all("no UTF-8 locale here");
  ok(width_cols(S("ab\xe6\x97\xa5")) == 4, "a wide character takes two columns");
  ok(width_cols(S("e\xcc\x81")) == 1, "an accent after its letter none");
  wchar_t wc;
  int cols;
  size_t k = width_char(S("\xe2\x82!"), &wc, &cols);
  ok(k == 2 && wc == '?' && cols == 1, "a character cut short is one '?' in one column (%zu bytes)", k);
  k = width_char(S("\xf0\x9f\x98"), &wc, &cols);
  ok(k == 3 && wc == '?' && cols == 1, "cut short by the end of the text too (%zu bytes)", k);
  ok(width_cols(S("\xff\xfe")) == 2 && width_cols(S("\xc0\xaf")) == 2, "a byte that begins nothing is one each, an overlong form too");
  ok(width_cols(S("\xed\xa0\x80")) == 3, "a surrogate is three bad bytes, as base/utf8.h reads it");
  ok(width_prefix(S("\xe2\x82xy"), 1) == 2, "a cut never falls inside a bad character");
  return tap_done();
}
