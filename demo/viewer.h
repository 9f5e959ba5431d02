/* demo/viewer.h: kcc-demo's interactive viewer (GLFW window, legacy OpenGL): walk the level with the
 * controller, retune it live, draw its debug data, record and replay traces. */
#ifndef KCC_DEMO_VIEWER_H
#define KCC_DEMO_VIEWER_H

#include <stdint.h>

/// demo_viewer_run's answer when there is no display (no $DISPLAY, or GLFW cannot start).
#define DEMO_VIEWER_NO_DISPLAY 100

typedef struct demo_viewer_opts {
    const char *level;        ///< NULL: "showcase"
    const char *trace;        ///< the trace P replays (NULL: the last one recorded)
    const char *record;       ///< where F5 records; NULL: DEMO_OUTPUT_DIR/LEVEL-TIME.trace (app.h)
    const char *screenshot;   ///< save a screenshot after a few frames and quit
    uint32_t width, height;   ///< window pixels
    uint32_t spawn;           ///< the spawn point to start at (modulo the level's count)
    uint32_t bots;            ///< wandering characters of the demo's game (demo/game.h); default 0
} demo_viewer_opts;

/// The defaults (1280 x 720, spawn 0, no trace, no screenshot); defined in app.c, window-free.
demo_viewer_opts demo_viewer_default_opts(void);
/// Runs the viewer until the window closes. Returns 0, 2 when the level cannot be opened (kcc-demo's
/// DEMO_EXIT_ERROR), or DEMO_VIEWER_NO_DISPLAY.
int demo_viewer_run(const demo_viewer_opts *o);

#endif
