/* demo/main.c: kcc-demo's entry point: parses the command line (app.c), warns about a KCC_ISA the
 * library does not know, then runs the interactive viewer (viewer.c) when a display is there,
 * otherwise (or with --headless) the headless showcase / trace picture (app.c); --soak-movers runs
 * the movers soak (game_soak.c). */
#include "app.h"
#include "game.h"
#include "viewer.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    demo_cli cli;
    char err[512];
    if (demo_cli_parse(argc, argv, &cli, err, sizeof(err)) != DEMO_EXIT_OK) {
        fprintf(stderr, "kcc-demo: %s\n", err);
        demo_cli_usage(stderr);
        return DEMO_EXIT_ERROR;
    }
    if (cli.help) {
        demo_cli_usage(stdout);
        return DEMO_EXIT_OK;
    }
    demo_isa_warn_if_invalid("kcc-demo");
    if (cli.soak_movers)
        return game_soak_levels(cli.soak_movers, cli.soak_steps, cli.soak_bots, cli.headless.quiet);
    if (!cli.run_headless) {
        int rc = demo_viewer_run(&cli.viewer);
        if (rc != DEMO_VIEWER_NO_DISPLAY)
            return rc;
        printf("kcc-demo: no display available: running the headless showcase instead\n");
    }
    return demo_headless_run(&cli.headless);
}
