/* kcc_world.h: the world: meshes placed by rigid transforms (static and kinematic bodies, one mesh
 * backing many bodies), the broadphase over them, and exact queries over every body at once. */
#ifndef KCC_WORLD_H
#define KCC_WORLD_H

#include "kcc_collide.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A world of bodies (and, with the controller, characters). Opaque; named by ids, never by
/// pointers. Storage is fixed at creation by the desc's capacities (one allocation).
/// Threads: the calls that change the world (add, remove, move, step) run on one thread at a
/// time; queries are safe from many threads at once between those calls, never during them.
typedef struct kcc_world kcc_world;

/// A rigid placement: the body's local point p lands at rotation * p + position in the world.
typedef struct kcc_transform {
    vec3  position;      ///< m
    float rotation[4];   ///< unit quaternion x, y, z, w (cglm's versor order)
} kcc_transform;

/// The largest position coordinate a body may have (m): larger ones are refused with
/// KCC_ERR_BAD_DESC, so that every bound and broadphase cell computed from a pose stays finite.
#define KCC_WORLD_MAX_POSITION 1e18f

/// The identity placement (position 0, rotation 0 0 0 1).
KCC_API kcc_transform kcc_transform_identity(void);
/// out = t applied to the local point p (float, in a fixed order: the same bits on every build).
KCC_API void kcc_transform_point(const kcc_transform *t, const vec3 p, vec3 out);
/// out = t's rotation applied to the direction v (no translation).
KCC_API void kcc_transform_vector(const kcc_transform *t, const vec3 v, vec3 out);
/// out = the local point that t places at the world point p (the inverse placement).
KCC_API void kcc_transform_inverse_point(const kcc_transform *t, const vec3 p, vec3 out);
/// The pose a fraction s (0..1) of the way from a to b: position on the straight line, rotation
/// along the shortest arc (slerp; q and -q are one rotation, so the nearer sign is taken). The
/// motion a kinematic body makes over one step.
KCC_API void kcc_transform_interpolate(const kcc_transform *a, const kcc_transform *b, float s,
                                       kcc_transform *out);

/// One task run by the engine's job system: items [begin, end) on worker `worker`.
typedef void (kcc_task_fn)(uint32_t begin, uint32_t end, uint32_t worker, void *task_context);

typedef struct kcc_world_desc {
    uint32_t body_capacity;        ///< live bodies at most; 0: default 1024
    uint32_t character_capacity;   ///< live characters at most; 0: default 1024
    uint32_t worker_count;         ///< default 1: everything on the calling thread
    /// The engine's job system, as Box2D v3's b2WorldDef has it: run task over [0, item_count)
    /// split into ranges of at least min_range items, on up to worker_count workers
    /// (worker < worker_count); return a handle, or NULL after running it all on the calling
    /// thread. NULL hooks: run inline.
    void *(*enqueue_task)(kcc_task_fn *task, uint32_t item_count, uint32_t min_range,
                          void *task_context, void *user_context);
    void  (*finish_task)(void *user_task, void *user_context);  ///< wait for it
    void  *user_task_context;
    float    grid_cell_size;       ///< m, the broadphase's largest cell edge (its cells fit its
                                   ///< boxes; a larger box is tested against all: docs/world.md,
                                   ///< "The broadphase") and the size of the pieces a static
                                   ///< sensor is split into; 0: default 4
    uint32_t pair_capacity;        ///< broadphase pairs at most; 0: default 8 per body and character
    uint32_t piece_capacity;       ///< pieces large static bodies are split into for the
                                   ///< broadphase (docs/world.md); 0: default 4 per body + 4096
    uint32_t sensor_capacity;      ///< characters inside sensors at once, counted over all
                                   ///< sensors, and sensor events a step; 0: default 4 per character
    kcc_allocator allocator;       ///< all zero: malloc/free; used by create and destroy only
} kcc_world_desc;

/// The defaults named in kcc_world_desc.
KCC_API kcc_world_desc kcc_world_default_desc(void);
/// Creates a world; its storage comes from one allocation. desc NULL means the defaults.
/// Errors: KCC_ERR_NULL_ARGUMENT (out_world), KCC_ERR_BAD_DESC (a cell size not finite and
/// positive, only one of the allocator's or the task hooks' functions set), KCC_ERR_TOO_LARGE (a
/// capacity over KCC_WORLD_MAX_OBJECTS, or sizes that overflow), KCC_ERR_OUT_OF_MEMORY.
KCC_API kcc_status kcc_world_create(const kcc_world_desc *desc, kcc_world **out_world);
/// Frees the world's storage (not the meshes it borrows). NULL is fine.
KCC_API void       kcc_world_destroy(kcc_world *world);
/// Every byte the world owns.
KCC_API size_t     kcc_world_memory_bytes(const kcc_world *world);

/// Largest capacity of bodies, of characters and of pieces (ids keep 20 bits of index).
#define KCC_WORLD_MAX_OBJECTS ((1u << 20) - 1)

typedef enum kcc_body_kind { KCC_BODY_STATIC = 0, KCC_BODY_KINEMATIC = 1 } kcc_body_kind;

typedef struct kcc_body_desc {
    kcc_body_kind kind;            ///< default KCC_BODY_STATIC
    kcc_transform transform;       ///< default identity
    uint32_t      layers;          ///< layer bits; a query sees the body when layers & mask != 0;
                                   ///< default 1
    uint64_t      user_data;       ///< the game's own value, returned by kcc_world_body_user_data;
                                   ///< default 0
    bool          sensor;          ///< default false. A sensor is not solid: queries and
                                   ///< characters pass through it; it lists the characters that
                                   ///< enter and leave the volume its mesh closes
                                   ///< (kcc_world_sensor_events)
} kcc_body_desc;

/// The defaults named in kcc_body_desc.
KCC_API kcc_body_desc kcc_body_default_desc(void);
/// Places mesh in the world. The mesh is borrowed: it must outlive the body (one mesh may back
/// many bodies). desc NULL means the defaults. Writes the new id (never 0) to out_body.
/// Errors: KCC_ERR_NULL_ARGUMENT (world, mesh, out_body), KCC_ERR_NON_FINITE (a NaN or infinite
/// position or rotation), KCC_ERR_BAD_DESC (an unknown kind, a rotation whose length is not
/// within 1e-3 of 1, layers 0), KCC_ERR_TOO_LARGE (body_capacity bodies live, or the pieces of a
/// large static mesh beyond piece_capacity).
KCC_API kcc_status kcc_world_add_body(kcc_world *world, const kcc_mesh *mesh,
                                      const kcc_body_desc *desc, uint32_t *out_body);
/// Removes a body; its id is stale from then on. KCC_ERR_NOT_FOUND for a removed, stale or
/// never-issued id; KCC_ERR_NULL_ARGUMENT for a NULL world.
KCC_API kcc_status kcc_world_remove_body(kcc_world *world, uint32_t body);
/// Sets a kinematic body's target: it reaches `target` at the end of the next kcc_world_step,
/// along the straight line and the shortest rotation from where it is (kcc_transform_interpolate).
/// The last target set before a step wins. Errors: KCC_ERR_NOT_FOUND, KCC_ERR_NULL_ARGUMENT,
/// KCC_ERR_BAD_DESC (a static body, or a rotation not within 1e-3 of unit length),
/// KCC_ERR_NON_FINITE.
KCC_API kcc_status kcc_world_move_body(kcc_world *world, uint32_t body,
                                       const kcc_transform *target);
/// Moves a body to `transform` at once, outside any step (a teleport: no motion is recorded, so
/// nothing rides or is pushed). Any body kind; static bodies placed once and moved rarely (a
/// level editor). Same errors as kcc_world_move_body, without the static refusal, and
/// KCC_ERR_TOO_LARGE when the pieces of a large static sensor at the new pose would not fit
/// piece_capacity (the body then stays where it was).
KCC_API kcc_status kcc_world_set_body_transform(kcc_world *world, uint32_t body,
                                                const kcc_transform *transform);
/// The body's current pose (after the last step or set), and with `out_start` (may be NULL) its
/// pose at the start of the last step: the motion it made over that step. KCC_ERR_NOT_FOUND,
/// KCC_ERR_NULL_ARGUMENT (world or out_transform).
KCC_API kcc_status kcc_world_get_body_transform(const kcc_world *world, uint32_t body,
                                                kcc_transform *out_transform,
                                                kcc_transform *out_start);
/// Sets which layers the body is on (non-zero). KCC_ERR_NOT_FOUND, KCC_ERR_BAD_DESC (0).
KCC_API kcc_status kcc_world_set_body_layers(kcc_world *world, uint32_t body, uint32_t layers);
/// The desc's user_data of a live body; 0 for an id that is not.
KCC_API uint64_t   kcc_world_body_user_data(const kcc_world *world, uint32_t body);
/// The mesh a live body places; NULL for an id that is not.
KCC_API const kcc_mesh *kcc_world_body_mesh(const kcc_world *world, uint32_t body);
/// Live bodies.
KCC_API uint32_t   kcc_world_body_count(const kcc_world *world);

/// One step of the world: every kinematic body moves to its target (its start and end poses are
/// kept for the step, kcc_world_get_body_transform), then every character (kcc_controller.h)
/// moves by its displacement as kcc_character_move does, through every body at its new pose.
/// Allocates nothing. KCC_ERR_NULL_ARGUMENT for a NULL world.
KCC_API kcc_status kcc_world_step(kcc_world *world);

/// Moves the world's origin to `new_origin` (m, in the current frame), as PhysX's shiftOrigin:
/// every body's pose (and the start pose and target a step uses), every character's position
/// and ground height has new_origin subtracted, in float, so that a game can keep the player
/// near 0 where floats are finest (docs/collide.md, "Far from the origin"). Between steps only; it
/// costs about what adding every body again does (the broadphase's pieces are laid out anew, the
/// body tree rebuilt, characters' caches dropped) and allocates nothing. Sensor membership and
/// the last step's results stay. On an axis where a position lies between half and twice
/// new_origin's value the subtraction is exact (Sterbenz's lemma), so a shift by a point near
/// the player moves the player and its surroundings without rounding. Errors: KCC_ERR_NULL_ARGUMENT,
/// KCC_ERR_NON_FINITE (new_origin), KCC_ERR_BAD_DESC (a body's or a character's position would
/// pass KCC_WORLD_MAX_POSITION), KCC_ERR_TOO_LARGE (the bodies' pieces at their new poses would
/// not fit piece_capacity); on error nothing moves.
KCC_API kcc_status kcc_world_shift_origin(kcc_world *world, const vec3 new_origin);

/// A character that entered or left a sensor during the last step.
typedef struct kcc_sensor_event {
    uint32_t sensor;      ///< the sensor body's id
    uint32_t character;   ///< the character's id (a removed one's last id when it left by removal)
    bool     entered;     ///< true: it entered; false: it left
} kcc_sensor_event;

/// The sensor events of the last kcc_world_step, ordered by sensor slot then character slot (the
/// id's low 20 bits): the same for any worker count. A character is inside a sensor when its box
/// overlaps a triangle of the sensor's placed mesh or its centre lies inside the volume the mesh
/// closes. The array belongs to the world and stays valid until the next step, add or remove.
/// *out_overflow (may be NULL) is set when more than sensor_capacity characters were inside
/// sensors or more events happened than it holds: the rest are not tracked. 0 for a NULL world.
KCC_API uint32_t kcc_world_sensor_events(const kcc_world *world, const kcc_sensor_event **out_events,
                                         bool *out_overflow);

/// Every layer: the mask of a query that sees every body.
#define KCC_LAYERS_ALL 0xffffffffu

typedef struct kcc_world_hit {
    float    t;          ///< hit point = origin + t * dir
    vec3     point;      ///< m, world frame
    vec3     normal;     ///< unit, world frame, as wound
    uint32_t body;
    uint32_t triangle;   ///< input index in that body's mesh
} kcc_world_hit;

/// Closest hit over all bodies at their current transforms, with 0 <= t <= max_t, either face,
/// as kcc_mesh_raycast would answer on the same triangles placed in the world: the ray goes into
/// each body's frame (t is the same there: rotation keeps lengths) and the smallest t wins; ties
/// go to the lowest body index, then the lowest triangle index. False (hit untouched) on a miss
/// or invalid arguments. Never allocates; safe from many threads between steps.
KCC_API bool kcc_world_raycast(const kcc_world *world, const vec3 origin, const vec3 dir,
                               float max_t, kcc_world_hit *hit);
/// kcc_world_raycast over the bodies whose layers & layer_mask != 0.
KCC_API bool kcc_world_raycast_layers(const kcc_world *world, const vec3 origin, const vec3 dir,
                                      float max_t, uint32_t layer_mask, kcc_world_hit *hit);

/// One triangle of one body.
typedef struct kcc_body_triangle {
    uint32_t body;
    uint32_t triangle;   ///< input index in that body's mesh
} kcc_body_triangle;

/// Exact box overlap over every body seen by layer_mask: the triangles whose placed corners
/// (kcc_transform_point of the mesh's corners) overlap `box` (the 13-axis test of
/// kcc_tri_overlap_aabb; touching counts). Returns how many there are and writes the first
/// `capacity`, grouped by body in ascending body index; within a body, as kcc_mesh_overlap_aabb
/// orders them, except for a rotated static body, whose order the world's own build over its
/// placed triangles fixes (docs/world.md, the static tree). out may be NULL when capacity is 0.
KCC_API uint32_t kcc_world_overlap_aabb(const kcc_world *world, const vec3 box[2],
                                        uint32_t layer_mask, kcc_body_triangle *out,
                                        uint32_t capacity);

/// First contact of a box translated along delta, over every body seen by layer_mask.
typedef struct kcc_world_sweep_hit {
    float    t;              ///< fraction of delta in [0, 1] at first contact
    vec3     normal;         ///< unit contact normal, from the triangle toward the box
    uint32_t body;
    uint32_t triangle;       ///< input index in that body's mesh
    bool     start_overlap;  ///< the box already overlapped this triangle at t = 0
} kcc_world_sweep_hit;

/// kcc_mesh_sweep_aabb over the placed triangles of every body seen by layer_mask (the same
/// rules: approaching contacts only, start overlaps reported when delta goes deeper); the
/// earliest wins, ties to the lowest body index, then the lowest triangle index.
KCC_API bool kcc_world_sweep_aabb(const kcc_world *world, const vec3 box[2], const vec3 delta,
                                  uint32_t layer_mask, kcc_world_sweep_hit *hit);

/// First contact of a sphere or capsule moved along delta, over every body seen by a layer mask.
typedef struct kcc_world_sphere_hit {
    float    t;              ///< fraction of delta in [0, 1] at first contact
    vec3     point;          ///< m, world frame: the contact point on the placed triangle
    vec3     normal;         ///< unit, world frame: from the contact point toward the sphere's
                             ///< centre (the capsule's segment)
    uint32_t body;
    uint32_t triangle;       ///< input index in that body's mesh
    bool     start_overlap;  ///< the shape overlapped (or touched) this triangle at t = 0
} kcc_world_sphere_hit;

/// kcc_mesh_sweep_sphere over the placed triangles (kcc_transform_point of the mesh's corners) of
/// every body seen by layer_mask: the same rules (either face, exact; start overlaps reported when
/// delta goes deeper) and the same bits as that sweep on a mesh built from the placed corners. The
/// earliest reported t wins; ties go to the lowest body index, then the lowest triangle index.
/// False (hit untouched) on no contact, a zero delta, or bad input (NULL world, centre, delta or
/// hit; a NaN or infinite coordinate; a radius not finite and positive). Never allocates; safe from
/// many threads between the calls that change the world. A projectile or a chase camera.
KCC_API bool kcc_world_sweep_sphere(const kcc_world *world, const vec3 center, float radius,
                                    const vec3 delta, uint32_t layer_mask,
                                    kcc_world_sphere_hit *hit);
/// kcc_mesh_sweep_capsule (the segment p0..p1 plus radius) over the placed triangles, with
/// kcc_world_sweep_sphere's rules.
KCC_API bool kcc_world_sweep_capsule(const kcc_world *world, const vec3 p0, const vec3 p1,
                                     float radius, const vec3 delta, uint32_t layer_mask,
                                     kcc_world_sphere_hit *hit);
/// The placed triangles within radius of center (kcc_tri_overlap_sphere's double distance test:
/// touching counts) over every body seen by layer_mask, every copy of a duplicate. Returns how many
/// and writes the first `capacity`, grouped by body in ascending body index; within a body, in its
/// mesh tree's order, except for a rotated static body, whose order the world's own build over its
/// placed triangles fixes (as kcc_world_overlap_aabb's). out may be NULL when capacity is 0; bad
/// input (as for the sweep) returns 0.
/// An explosion's reach.
KCC_API uint32_t kcc_world_overlap_sphere(const kcc_world *world, const vec3 center, float radius,
                                          uint32_t layer_mask, kcc_body_triangle *out,
                                          uint32_t capacity);

#ifdef __cplusplus
}
#endif
#endif
