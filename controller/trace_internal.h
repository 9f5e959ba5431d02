/* trace_internal.h: what the single-character traces (trace.c) and the world traces (world_trace.c)
 * share: the desc field table, the line writer and the line parser (tokens, numbers, key=value
 * fields). Never installed. */
#ifndef KCC_TRACE_INTERNAL_H
#define KCC_TRACE_INTERNAL_H

#include <stdarg.h>
#include "kcc_trace.h"

/// One kcc_character_desc field as `desc`, `set` and `character` lines write it.
typedef struct kcc_tr_desc_field {
    const char *name;
    size_t      offset;
    uint32_t    count;     // floats (1 or 3); int fields have count 1
    bool        is_int;
} kcc_tr_desc_field;

/// Every kcc_character_desc field, in the order lines list them. A field added to the desc must be
/// added here (test_trace checks that a default desc written and read back compares equal).
#define KCC_TR_DESC_FIELD_COUNT 7u
extern const kcc_tr_desc_field kcc_tr_desc_fields[KCC_TR_DESC_FIELD_COUNT];
size_t kcc_tr_field_bytes(const kcc_tr_desc_field *f);

bool kcc_tr_vec3_finite(const float *v);
bool kcc_tr_flags_from_text(const char *s, size_t n, uint32_t *out);
/// An `obj <path>` or `gen <spec>` level description without newline or '#'.
bool kcc_tr_level_string_ok(const char *level);

// ------------------------------------------------------------------------------------- writing

/// A begun writer to file or buffer (capacity bytes), status KCC_OK, nothing written yet.
void kcc_tr_writer_init(kcc_trace_writer *w, FILE *file, char *buffer, size_t capacity);
/// Writes n bytes to the writer's FILE or buffer; the first failure is kept (sticky status).
void kcc_tr_emit(kcc_trace_writer *w, const char *s, size_t n);
/// The writer's status for a recording call: KCC_ERR_NULL_ARGUMENT when not begun or ended.
kcc_status kcc_tr_writer_ready(kcc_trace_writer *w);

/// Appends to a fixed line buffer; long enough for every line the writers produce except `level`.
typedef struct kcc_tr_line {
    char   text[1024];
    size_t len;
} kcc_tr_line;

void kcc_tr_lb_str(kcc_tr_line *b, const char *s);
void kcc_tr_lb_float(kcc_tr_line *b, float v);
/// " x y z"
void kcc_tr_lb_vec3(kcc_tr_line *b, const float *v);
void kcc_tr_lb_status(kcc_tr_line *b, kcc_status s);
/// " name=value"
void kcc_tr_lb_field(kcc_tr_line *b, const kcc_tr_desc_field *f, const kcc_character_desc *d);

// ------------------------------------------------------------------------------------- parsing

#define KCC_TR_MAX_TOKENS 40
#define KCC_TR_MAX_TOKEN_CHARS 200

/// Where the single-character parser is in the file's fixed order of lines.
typedef enum parse_state {
    WANT_HEADER, WANT_LEVEL, WANT_DESC, WANT_START, IN_BODY, AFTER_END
} parse_state;

typedef struct kcc_tr_parser kcc_tr_parser;
/// One line with at least one token; and the end of the text.
typedef kcc_status kcc_tr_statement_fn(kcc_tr_parser *p);

struct kcc_tr_parser {
    const char *name;
    char       *err;
    size_t      err_size;
    const char *text;
    uint32_t    line;            // current line number
    // tokens of the current line: offsets into text
    uint32_t    tok_begin[KCC_TR_MAX_TOKENS], tok_end[KCC_TR_MAX_TOKENS];
    uint32_t    ntok;
    uint32_t    content_end;     // end of the line's content (before comment and trailing blanks)
    kcc_trace  *trace;           // what the lines fill in (single-character traces)
    void       *world;           // what the lines fill in (world traces)
    parse_state state;
    uint32_t    step_cap;        // steps the trace's array holds
};

/// Writes "name:LINE: " and the message into the parser's err; returns st.
kcc_status kcc_tr_fail(kcc_tr_parser *p, kcc_status st, const char *fmt, ...);
const char *kcc_tr_tok(const kcc_tr_parser *p, uint32_t i, char out[KCC_TR_MAX_TOKEN_CHARS + 1]);
bool kcc_tr_tok_is(const kcc_tr_parser *p, uint32_t i, const char *s);
kcc_status kcc_tr_parse_float_text(kcc_tr_parser *p, const char *s, const char *e, bool finite_only,
                                   const char *what, float *out);
kcc_status kcc_tr_parse_vec3(kcc_tr_parser *p, uint32_t first, bool finite_only, const char *what,
                             float *out);
kcc_status kcc_tr_parse_int_text(kcc_tr_parser *p, const char *s, const char *e, int64_t min,
                                 int64_t max, const char *what, int64_t *out);
kcc_status kcc_tr_int_line(kcc_tr_parser *p, const char *usage, int64_t min, int64_t max,
                           const char *what, int64_t *out);
kcc_status kcc_tr_parse_status(kcc_tr_parser *p, uint32_t i, kcc_status *out);
kcc_status kcc_tr_parse_fields(kcc_tr_parser *p, uint32_t first, uint32_t last, bool finite_only,
                               kcc_character_desc *d, uint32_t *mask);
/// 16 lowercase hex digits in token i.
kcc_status kcc_tr_parse_hash(kcc_tr_parser *p, uint32_t i, uint64_t *out);
char *kcc_tr_dup_range(const char *s, size_t n);
/// `obj <path>` resolves a relative path against the directory of the trace's name.
char *kcc_tr_resolve_obj_path(const char *name, const char *path, size_t n);
/// Splits the text into lines, tokenizes each and runs statement on every line with a token, then
/// end_of_text; stops at the first failure.
kcc_status kcc_tr_parse_lines(kcc_tr_parser *p, size_t length, kcc_tr_statement_fn *on_line,
                              kcc_tr_statement_fn *on_end);
/// An expected and an actual outcome as divergence messages write them.
typedef struct kcc_tr_outcome_text {
    char expected[3][KCC_TRACE_FLOAT_CHARS], actual[3][KCC_TRACE_FLOAT_CHARS];
    char expected_flags[KCC_TRACE_FLAGS_CHARS], actual_flags[KCC_TRACE_FLAGS_CHARS];
} kcc_tr_outcome_text;
void kcc_tr_outcome_text_of(const float *expected, uint32_t expected_flags, const float *actual,
                            uint32_t actual_flags, kcc_tr_outcome_text *out);
/// The position-matching rule of replays: bit for bit at tolerance 0, else per component.
bool kcc_tr_position_matches(const float *expected, const float *actual, float tolerance);
/// Reads a whole file (allocated; "path: cannot open/read: why" in err on failure).
kcc_status kcc_tr_read_file(const char *path, char **out_text, size_t *out_length, char *err,
                            size_t err_size);
/// The version a trace's text declares on its `kcc-trace N` line; 0 when it has none.
uint32_t kcc_tr_text_version(const char *text, size_t length);


// ----------------------------------------------------------------------- world recorder hooks

/// Writes a world trace writer's gathered lines (before a comment); nothing for other writers.
void kcc_tr_world_flush(kcc_trace_writer *w);
/// kcc_trace_end of a world trace's writer: detaches it from the world and frees its tables.
void kcc_tr_world_detach(kcc_trace_writer *w);
/// The world's character calls, for its recorder (world_characters.c): `center` the added
/// character's centre, NULL for a removal; `desc` as the caller gave it (NULL: the defaults).
void kcc_world_record_character(kcc_world *world, uint32_t character,
                                const kcc_character_desc *desc, const float *center);
/// The world's other character calls, for its recorder (world_characters.c), each after the call
/// succeeded and with the arguments as the caller gave them (desc NULL: the defaults):
/// kcc_world_set_character_position, kcc_world_set_character_desc,
/// kcc_world_set_character_layers and kcc_world_shift_origin.
void kcc_world_record_teleport(kcc_world *world, uint32_t character, const float *center);
void kcc_world_record_retune(kcc_world *world, uint32_t character, const kcc_character_desc *desc);
void kcc_world_record_character_layers(kcc_world *world, uint32_t character, uint32_t layers,
                                       uint32_t mask);
void kcc_world_record_shift(kcc_world *world, const float *new_origin);
/// kcc_world_step, for its recorder (world_step.c): before the step (done false: the displacements
/// that changed and the `step` line), and after it (done true: the outcomes that changed).
void kcc_world_record_step(kcc_world *world, bool done);

#endif
