/*
** test_sha256.c -- SHA-256 against the FIPS 180-4 examples (NIST's "abc",
** the two-block message, a million 'a') and across every cut into pieces.
*/
#include <string.h>

#include "base/sha256.h"
#include "tap.h"

static void hex(const uint8_t d[32], char out[SHA256_HEX]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) out[2 * i] = digits[d[i] >> 4], out[2 * i + 1] = digits[d[i] & 15];
  out[64] = '\0';
}

int main(void) {
  static const struct { const char *text, *digest; } vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char out[SHA256_HEX];
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++)
    ok(strcmp(sha256_hex(vectors[i].text, strlen(vectors[i].text), out), vectors[i].digest) == 0,
       "%zu bytes: %s", strlen(vectors[i].text), out);

  static char million[1000000];
  memset(million, 'a', sizeof million);
  ok(strcmp(sha256_hex(million, sizeof million, out),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
     "a million 'a': %s", out);

  /* Every length from 0 to 200 cut at every point gives the one-piece digest. */
  char text[200];
  for (int i = 0; i < 200; i++) text[i] = (char)(i * 7 + 3);
  int bad = 0;
  for (size_t n = 0; n <= sizeof text; n++) {
    char whole[SHA256_HEX], cut[SHA256_HEX];
    sha256_hex(text, n, whole);
    for (size_t at = 0; at <= n; at += 13) {
      Sha256 s;
      uint8_t d[32];
      sha256_begin(&s);
      sha256_add(&s, text, at);
      sha256_add(&s, text + at, n - at);
      sha256_end(&s, d);
      hex(d, cut);
      bad += strcmp(whole, cut) != 0;
    }
  }
  ok(bad == 0, "pieces give the digest of the whole, at every padding boundary (%d differ)", bad);
  return tap_done();
}
