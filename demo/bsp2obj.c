/* demo/bsp2obj.c: kcc-bsp2obj, the command-line Quake 3 BSP importer: IN.bsp -> OUT.obj + OUT.spawns
 * (Y-up metres, the format of the shared levels) + OUT.movers (movers and triggers, docs/demo.md).
 * All the work is in q3bsp.c. */
#include "q3bsp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kcc-bsp2obj [options] IN.bsp OUT.obj\n"
            "  Imports the collision geometry of a Quake 3 BSP (version 46): solid and player-clip\n"
            "  brushes of the world model as closed convex polyhedra plus its solid curved patches,\n"
            "  in Y-up metres (1/32 m per unit). Writes OUT.obj, OUT.spawns (player feet) and OUT.movers\n"
            "  (the movers' and triggers' entities and brush models, docs/demo.md).\n"
            "  --patch-level N   subdivisions per 3x3 patch side (default 4)\n"
            "  --contents MASK   content flags kept (default 0x10001: solid | player clip)\n"
            "  --quiet           no summary line\n");
}

int main(int argc, char **argv)
{
    q3bsp_options opt = q3bsp_default_options();
    const char *in = NULL, *out = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--patch-level") == 0 && i + 1 < argc) {
            opt.patch_level = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--contents") == 0 && i + 1 < argc) {
            opt.contents_mask = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "kcc-bsp2obj: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!in || !out) {
        usage(stderr);
        return 2;
    }
    char err[512];
    q3bsp_map map;
    q3bsp_stats st;
    kcc_status s = q3bsp_load_map(in, &opt, &map, &st, err, sizeof(err));
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-bsp2obj: %s (%s)\n", err, kcc_status_str(s));
        return 1;
    }
    size_t n = strlen(out);
    const kcc_level level = map.world;
    char *spawns = malloc(n + 16), *movers = malloc(n + 16);
    if (!spawns || !movers) {
        free(spawns);
        free(movers);
        q3bsp_map_free(&map);
        fprintf(stderr, "kcc-bsp2obj: out of memory\n");
        return 1;
    }
    memcpy(spawns, out, n + 1);
    if (n > 4 && strcmp(out + n - 4, ".obj") == 0)
        spawns[n - 4] = '\0';
    memcpy(movers, spawns, strlen(spawns) + 1);
    strcat(spawns, ".spawns");
    strcat(movers, ".movers");
    const char *base = strrchr(in, '/');
    char header[512];
    snprintf(header, sizeof(header), "%s: Quake 3 BSP collision geometry, Y-up metres, by kcc-bsp2obj",
             base ? base + 1 : in);
    s = q3bsp_write_obj(&level, out, header, err, sizeof(err));
    if (s == KCC_OK)
        s = q3bsp_write_spawns(&level, spawns, err, sizeof(err));
    if (s == KCC_OK)
        s = q3bsp_write_movers(&map, movers, err, sizeof(err));
    if (s != KCC_OK)
        fprintf(stderr, "kcc-bsp2obj: %s\n", err);
    else if (!quiet)
        printf("%s: %u triangles (%u from %u of %u brushes, %u from %u patches), %u vertices, %u spawns, "
               "%u brush models\n",
               out, level.triangle_count, st.brush_triangles, st.brushes_solid, st.brushes, st.patch_triangles,
               st.patches, level.vertex_count, level.spawn_count, map.model_count ? map.model_count - 1 : 0);
    free(spawns);
    free(movers);
    q3bsp_map_free(&map);
    return s == KCC_OK ? 0 : 1;
}
