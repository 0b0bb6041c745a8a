/*
** tap_selftest.c -- tests/lib/tap.h's helpers, for tests/lib/test_tap.sh to read
** through automake's TAP driver: each argument is one call, in order.
**
**   tap_selftest ok skip skip done    a pass and two skips
**   tap_selftest skip_all             the whole test skipped
**   tap_selftest ok skip_all          skip_all after a check: a failure
**   tap_selftest ok bail_out          an error, never a skip
*/
#include <string.h>

#include "tap.h"

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *call = argv[i];
    if (strcmp(call, "ok") == 0) ok(1, "a check that holds");
    else if (strcmp(call, "fail") == 0) ok(0, "a check that fails");
    else if (strcmp(call, "skip") == 0) skip("a tool is missing");
    else if (strcmp(call, "skip_all") == 0) return skip_all("a tool is missing");
    else if (strcmp(call, "bail_out") == 0) return bail_out("the machine refused");
    else if (strcmp(call, "done") == 0) return tap_done();
  }
  return tap_done();
}
