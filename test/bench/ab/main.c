/* main.c: the A/B harness's driver (ab.sh): both builds move their own characters through the same
 * wander, frame by frame and in alternating order, so that the machine's slow and fast spells hit
 * both alike; prints each build's median us per move, the ratio and whether the moves agree (when
 * not, how many characters end elsewhere and how far apart). */
#include "bench.h"

void simA_init(const kcc_level *lv, int n, int frames);
void simA_frame(int f);
void simA_position(int i, float out[3]);
extern double *simA_per_frame;
void simB_init(const kcc_level *lv, int n, int frames);
void simB_frame(int f);
void simB_position(int i, float out[3]);
extern double *simB_per_frame;

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ab LEVEL.obj [CHARACTERS [FRAMES]]\n");
        return 2;
    }
    const int n = argc > 2 ? atoi(argv[2]) : 256, frames = argc > 3 ? atoi(argv[3]) : 600;
    if (n < 1 || frames < 1) {
        fprintf(stderr, "ab: CHARACTERS and FRAMES must be positive\n");
        return 2;
    }
    kcc_level lv;
    char err[256];
    if (kcc_level_load_obj(argv[1], &lv, err, sizeof err) != KCC_OK) {
        fprintf(stderr, "ab: %s\n", err);
        return 2;
    }
    if (lv.spawn_count == 0) {
        fprintf(stderr, "ab: %s has no spawn points\n", argv[1]);
        return 2;
    }
    simA_init(&lv, n, frames);
    simB_init(&lv, n, frames);
    bench_warmup(200.0);
    for (int f = 0; f < frames; ++f) {
        if (f & 1) {
            simB_frame(f);
            simA_frame(f);
        } else {
            simA_frame(f);
            simB_frame(f);
        }
    }
    const double a = bench_median(simA_per_frame, (size_t)frames), b = bench_median(simB_per_frame, (size_t)frames);
    int differ = 0;
    double apart = 0.0; /* largest distance between a character's two final positions */
    for (int i = 0; i < n; ++i) {
        float pa[3], pb[3];
        simA_position(i, pa);
        simB_position(i, pb);
        if (memcmp(pa, pb, sizeof pa) != 0) {
            ++differ;
            double d2 = 0.0;
            for (int k = 0; k < 3; ++k)
                d2 += ((double)pa[k] - pb[k]) * ((double)pa[k] - pb[k]);
            apart = fmax(apart, sqrt(d2));
        }
    }
    const char *name = strrchr(argv[1], '/');
    printf("%-14s A %.3f us  B %.3f us  B/A %.3f  ", name ? name + 1 : argv[1], a, b, b / a);
    if (differ == 0)
        printf("same moves\n");
    else
        printf("MOVES DIFFER: %d of %d characters end elsewhere, up to %.3g m apart\n", differ, n, apart);
    return 0;
}
