/* demo/main.c: kcc-demo's command line: the interactive viewer (viewer.c) when a display is there,
 * otherwise (or with --headless) the headless showcase / trace picture (app.c). */
#include "app.h"
#include "viewer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kcc-demo [options]\n"
            "  --level L         level: a generator spec (default \"showcase\"; also \"arena seed=3\" ...),\n"
            "                    an .obj file (with its .spawns) or a Quake 3 .bsp file\n"
            "  --headless        no window: run wandering characters (or --trace) and print a summary\n"
            "  --trace T         headless: replay trace T and draw its path; viewer: the trace P replays\n"
            "  --png OUT.png     headless: write the picture (also used when no display is available)\n"
            "  --record T        viewer: the trace file F5 records to (default kcc-demo.trace)\n"
            "  --spawn N         viewer: start at spawn point N\n"
            "  --screenshot OUT  viewer: walk forward 90 frames, save OUT.png and quit (docs, checks)\n"
            "  --characters N    headless wanderers (default 24)\n"
            "  --frames N        headless frames per wanderer at 60 Hz (default 1800 = 30 s)\n"
            "  --seed N          headless random seed (default 1)\n"
            "  --size WxH        picture or window size (default 960x600 / 1280x720)\n"
            "  --view YAW,PITCH  headless camera, degrees (default 30,50)\n"
            "  --cut M           headless: hide geometry higher than M above the highest path point\n"
            "  --quiet           headless: no summary\n");
}

int main(int argc, char **argv)
{
    demo_headless_opts h = demo_headless_default_opts();
    demo_viewer_opts v = demo_viewer_default_opts();
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--headless") == 0) {
            headless = true;
        } else if (strcmp(a, "--quiet") == 0) {
            h.quiet = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (!val) {
            fprintf(stderr, "kcc-demo: %s needs a value (or is unknown)\n", a);
            usage(stderr);
            return 2;
        } else if (strcmp(a, "--level") == 0) {
            h.level = v.level = argv[++i];
        } else if (strcmp(a, "--trace") == 0) {
            h.trace = v.trace = argv[++i];
        } else if (strcmp(a, "--png") == 0) {
            h.png = argv[++i];
        } else if (strcmp(a, "--record") == 0) {
            v.record = argv[++i];
        } else if (strcmp(a, "--spawn") == 0) {
            v.spawn = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--screenshot") == 0) {
            v.screenshot = argv[++i];
        } else if (strcmp(a, "--characters") == 0) {
            h.characters = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--frames") == 0) {
            h.frames = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--seed") == 0) {
            h.seed = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--size") == 0) {
            unsigned w = 0, ht = 0;
            if (sscanf(argv[++i], "%ux%u", &w, &ht) != 2 || w < 16 || ht < 16 || w > 8192 || ht > 8192) {
                fprintf(stderr, "kcc-demo: --size wants WxH (16..8192), got %s\n", argv[i]);
                return 2;
            }
            h.width = v.width = w;
            h.height = v.height = ht;
        } else if (strcmp(a, "--view") == 0) {
            if (sscanf(argv[++i], "%f,%f", &h.yaw, &h.pitch) != 2 || !isfinite(h.yaw) || !isfinite(h.pitch)) {
                fprintf(stderr, "kcc-demo: --view wants YAW,PITCH in degrees, got %s\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--cut") == 0) {
            h.cut = strtof(argv[++i], NULL);
        } else {
            fprintf(stderr, "kcc-demo: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (h.characters == 0 || h.characters > 10000 || h.frames > 10000000) {
        fprintf(stderr, "kcc-demo: --characters wants 1..10000, --frames at most 10000000\n");
        return 2;
    }
    if (!headless) {
        int rc = demo_viewer_run(&v);
        if (rc != DEMO_VIEWER_NO_DISPLAY)
            return rc;
        printf("kcc-demo: no display available: running the headless showcase instead\n");
    }
    return demo_headless_run(&h);
}
