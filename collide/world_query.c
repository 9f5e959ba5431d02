/* world_query.c: the world's queries (ray cast, box overlap, box sweep) over every body at its
 * current pose, and the body tree they walk. Queries keep no state and never allocate. */
#include "kcc_world_internal.h"

void kcc_world_rebuild_body_tree(kcc_world *world)
{
    kcc_body_tree *tree = &world->tree;
    uint32_t n = 0;
    for (uint32_t i = 0; i < world->body_end; ++i) {
        const kcc_body *b = &world->bodies[i];
        if (!b->mesh)
            continue;
        kcc_build_prim *p = &tree->prims[n++];
        memcpy(p->lo, b->bounds[0], sizeof p->lo);
        memcpy(p->hi, b->bounds[1], sizeof p->hi);
        p->id = i;
        p->pad = 0.0f;
    }
    tree->count = n;
    tree->valid = true;
    if (n == 0)
        return;
    uint32_t leaves = 0, depth = 0;
    kcc_tree_build(tree->prims, n, tree->pairs, &leaves, &depth);
    kcc_tree_collapse(tree->pairs, tree->quads, tree->scratch);
    for (uint32_t i = 0; i < n; ++i)
        tree->slot[i] = tree->prims[i].id;
}
