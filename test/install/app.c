/* app.c: a program outside the repository's build, compiled against the installed kcc with
 * pkg-config and with CMake (make install-check): the README's loop on a one-quad floor must land
 * the box. */
#include <math.h>
#include <stdio.h>
#include <kcc/kcc.h>

int main(void)
{
    const float xyz[] = {-10, 0, -10, 10, 0, -10, 10, 0, 10, -10, 0, 10};
    const uint32_t idx[] = {0, 2, 1, 0, 3, 2};
    kcc_mesh_desc md = {0};
    md.positions = xyz;
    md.vertex_count = 4;
    md.indices = idx;
    md.triangle_count = 2;
    kcc_mesh *level = NULL;
    kcc_status st = kcc_mesh_build(&md, &level);
    if (st != KCC_OK) {
        printf("install-check: mesh: %s\n", kcc_status_str(st));
        return 1;
    }
    kcc_character_desc desc = kcc_character_default_desc();
    kcc_character ch;
    if (kcc_character_init(&ch, &desc, (vec3){0.0f, 3.0f, 0.0f}) != KCC_OK)
        return 1;
    float vertical_speed = 0.0f, dt = 1.0f / 60.0f;
    kcc_move_result r = {0};
    for (int frame = 0; frame < 120; ++frame) {
        vertical_speed -= 9.81f * dt;
        vec3 disp = {1.0f * dt, vertical_speed * dt, 0.0f};
        kcc_character_move(&ch, level, disp, &r);
        if (r.flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_HIT_CEILING))
            vertical_speed = 0.0f;
    }
    kcc_mesh_destroy(level);
    float want = desc.half_extents[1] + desc.skin_width;
    if (!(r.flags & KCC_MOVE_ON_GROUND) || fabsf(ch.position[1] - want) > 1e-4f ||
        fabsf(ch.position[0] - 2.0f) > 1e-3f) {
        printf("install-check: the box did not land: %f %f\n", ch.position[0], ch.position[1]);
        return 1;
    }
    printf("the box landed\n");
    return 0;
}
