/*
** panels.c -- the columns of the panel table that draw: for each panel
** the function that draws it and, for a chart the present view shows, the
** figures in big digits above it. The names and flags of the same rows are
** in layout.c, which must do without curses and the Ui; here each row is
** keyed by its PanelId, and tests/ui/test_panels checks that every panel has
** one.
*/
#include "ui/repl.h"
#include "ui/uistate.h"

static void draw_scroll(Ui *ui, WINDOW *w, int h, int wd) { scroll_draw(ui->scroll, &ui->term, w, h, wd); }

static void draw_input(Ui *ui, WINDOW *w, int h, int wd) {
  (void)h;
  repl_draw(&ui->term, w, wd, ui->focus, ": or Enter to type Lua");
}

static const UiPanel panels[P_COUNT] = {
    [P_STATUS] = {panel_status, NULL},
    [P_BIG] = {panel_big, NULL},
    [P_LOSS] = {panel_loss, figures_loss},
    [P_RATIO] = {panel_ratio, figures_ratio},
    [P_EXTRA] = {panel_extra, figures_series},   /* a script's own series, shown alone */
    [P_LENS] = {panel_lens, figures_lens},
    [P_LENSHIST] = {panel_lens_history, NULL},
    [P_ALIGN] = {panel_align, NULL},
    [P_SAMPLE] = {panel_sample, NULL},
    [P_SCATTER] = {panel_scatter, figures_scatter},
    [P_CAPTION] = {panel_caption, NULL},
    [P_ALIGNCHART] = {panel_align_chart, figures_align},
    [P_RESULTS] = {panel_results, NULL},
    [P_SCROLL] = {draw_scroll, NULL},
    [P_INPUT] = {draw_input, NULL},
    [P_HINT] = {panel_hint, NULL},
};

const UiPanel *ui_panel(int id) { return id >= 0 && id < P_COUNT ? &panels[id] : NULL; }
