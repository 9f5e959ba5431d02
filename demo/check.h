/* demo/check.h: kcc-check, the level checker of the demo tools (not part of the library): what it
 * lists and its exit status; the program's main is a call to kcc_check_run. */
#ifndef KCC_DEMO_CHECK_H
#define KCC_DEMO_CHECK_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Runs kcc-check with the program's arguments (argv[0] the program name): reads the level (OBJ,
/// or a Quake 3 BSP as kcc-bsp2obj reads it), writes one line per defect and a summary to out,
/// usage and errors to err. Returns the exit status: 0 clean, 1 defects found, 2 bad input or
/// arguments.
int kcc_check_run(int argc, char **argv, FILE *out, FILE *err);

#ifdef __cplusplus
}
#endif
#endif
