/*
** test_panels.c -- the panel table's columns that draw (src/ui/panels.c)
** against its names and flags (layout.c): every panel has its draw
** function, and every chart the present view names its figures.
*/
#include "tap.h"
#include "ui/uistate.h"

int main(void) {
  int drawn = 0, figures = 1;
  for (int p = 0; p < P_COUNT; p++) {
    const UiPanel *u = ui_panel(p);
    if (u && u->draw) drawn++;
    else diag("%s has no draw function", layout_name(p, NAME_PANEL));
    /* A script's own series is shown in the third chart, with figures of its own. */
    int want = layout_name(p, NAME_PRESENT) || p == P_EXTRA;
    if (u && (u->figures != NULL) != want) {
      figures = 0;
      diag("%s: figures %s", layout_name(p, NAME_PANEL), want ? "missing" : "for a chart the present view does not name");
    }
  }
  ok(drawn == P_COUNT && !ui_panel(-1) && !ui_panel(P_COUNT), "a draw function for each of %d panels", P_COUNT);
  ok(figures, "figures for each chart ui.present names, and for a script's series");
  return tap_done();
}
