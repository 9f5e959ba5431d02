/* sim.c: one side of the A/B harness (ab.sh): the benchmark's wander (bench_controller's policy) on
 * one build of libkcc. Compiled twice, against each build's headers; SIDE_B renames the calls to
 * B's symbols (ab.sh renames every kcc_* symbol of build B to B_kcc_*). */
#include "bench.h"

#ifdef SIDE_B
#define K(x) B_##x
#define SIM(x) simB_##x
kcc_status B_kcc_mesh_build(const kcc_mesh_desc *desc, kcc_mesh **out_mesh);
kcc_status B_kcc_level_build_mesh(const kcc_level *level, kcc_mesh **out_mesh);
kcc_status B_kcc_character_init(kcc_character *ch, const kcc_character_desc *desc, const vec3 center);
void B_kcc_character_move(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                          kcc_move_result *result);
kcc_character_desc B_kcc_character_default_desc(void);
#else
#define K(x) x
#define SIM(x) simA_##x
#endif

typedef struct walker {
    bench_rng rng;
    float heading, timer, vy;
    int stuck, jump;
} walker;

static const float HALF[3] = {0.47f, 0.875f, 0.47f};
static kcc_character *ch;
static walker *w;
static kcc_move_result *res;
static float *disp;
static kcc_mesh *mesh;
static int count;
double *SIM(per_frame);

void SIM(init)(const kcc_level *lv, int n, int frames)
{
    if (K(kcc_level_build_mesh)(lv, &mesh) != KCC_OK)
        abort();
    kcc_character_desc d = K(kcc_character_default_desc)();
    memcpy(d.half_extents, HALF, sizeof HALF);
    d.step_height = 0.5625f;
    d.ground_snap = d.step_height; /* follows the ground down as far as it climbs */
    d.max_slope_deg = 45.6f;
    count = n;
    ch = aligned_alloc(64, ((size_t)n * sizeof(kcc_character) + 63) / 64 * 64);
    w = calloc((size_t)n, sizeof *w);
    res = calloc((size_t)n, sizeof *res);
    disp = calloc(3 * (size_t)n, sizeof *disp);
    SIM(per_frame) = calloc((size_t)frames, sizeof(double));
    if (!ch || !w || !res || !disp || !SIM(per_frame))
        abort();
    for (int i = 0; i < n; ++i) {
        const float *sp = lv->spawns + 3 * (i % (int)lv->spawn_count);
        vec3 c = {sp[0], sp[1] + HALF[1] + 0.01f, sp[2]};
        K(kcc_character_init)(&ch[i], &d, c);
        w[i].rng = bench_rng_seed(0x5EED0000u + (uint32_t)i);
    }
}

void SIM(frame)(int f)
{
    for (int i = 0; i < count; ++i) {
        walker *x = &w[i];
        if (x->timer <= 0.0f || x->stuck >= 6) {
            x->heading = bench_rng_range(&x->rng, 0.0f, 6.28318530718f);
            x->timer = bench_rng_range(&x->rng, 1.0f, 3.0f);
            x->stuck = 0;
        }
        x->timer -= 1.0f / 60.0f;
        x->jump = f > 0 && (res[i].flags & KCC_MOVE_ON_GROUND) && bench_rng_float(&x->rng) < 1.0f / 180.0f;
        if (x->jump)
            x->vy = 8.44f;
        x->vy = fmaxf(x->vy - 25.0f / 60.0f, -55.0f);
        disp[3 * i] = cosf(x->heading) * 5.0f / 60.0f;
        disp[3 * i + 1] = x->vy / 60.0f;
        disp[3 * i + 2] = sinf(x->heading) * 5.0f / 60.0f;
    }
    const double t0 = bench_now_ns();
    for (int i = 0; i < count; ++i)
        K(kcc_character_move)(&ch[i], mesh, &disp[3 * i], &res[i]);
    SIM(per_frame)[f] = (bench_now_ns() - t0) * 1e-3 / count;
    for (int i = 0; i < count; ++i) {
        walker *x = &w[i];
        if ((res[i].flags & KCC_MOVE_ON_GROUND) && x->vy < 0.0f)
            x->vy = 0.0f;
        if ((res[i].flags & KCC_MOVE_HIT_CEILING) && x->vy > 0.0f)
            x->vy = 0.0f;
        const float xz = sqrtf(res[i].moved[0] * res[i].moved[0] + res[i].moved[2] * res[i].moved[2]);
        x->stuck = xz < 0.25f * 5.0f / 60.0f ? x->stuck + 1 : 0;
    }
}

void SIM(position)(int i, float out[3])
{
    memcpy(out, ch[i].position, 3 * sizeof(float));
}
