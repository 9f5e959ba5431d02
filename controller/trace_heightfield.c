/* trace_heightfield.c: heightfield files (docs/traces.md, "Heightfield levels"): a built
 * heightfield's grid written as text that a world trace names `hf file <path>`, and read back into
 * a heightfield with the same corners, bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heightfield_internal.h"
#include "trace_internal.h"
#include "world_trace_internal.h"

/// Heights a line holds (the parser's token limit is KCC_TR_MAX_TOKENS).
enum { HEIGHTS_PER_LINE = 16 };

static void put_float(FILE *f, const char *before, float v)
{
    char text[KCC_TRACE_FLOAT_CHARS];
    kcc_trace_float_to_text(v, text);
    fputs(before, f);
    fputs(text, f);
}

/* The corners are (origin x + i * spacing x, y[j * columns + i], origin z + j * spacing z): the
 * file holds origin x and z, the spacing and the y values as built (the origin's height already
 * added), and the reader rebuilds with origin y = -0, which adds nothing to any float (+0 and -0
 * stay what they are), so every corner comes back with the same bits. */
kcc_status kcc_trace_write_heightfield(const kcc_mesh *heightfield, const char *path)
{
    if (!heightfield || !path)
        return KCC_ERR_NULL_ARGUMENT;
    const struct kcc_hf *hf = heightfield->hf;
    if (!hf)
        return KCC_ERR_BAD_DESC;
    FILE *f = fopen(path, "w");
    if (!f)
        return KCC_ERR_IO;
    fprintf(f, "kcc-heightfield 1\ncolumns %u\nrows %u\n", (unsigned)hf->columns,
            (unsigned)hf->rows);
    put_float(f, "spacing ", hf->spacing[0]);
    put_float(f, " ", hf->spacing[1]);
    put_float(f, "\norigin ", hf->origin[0]);
    put_float(f, " ", hf->origin[2]);
    fputs("\n", f);
    for (uint32_t j = 0; j < hf->rows; ++j)   // each row from a new line, HEIGHTS_PER_LINE a line
        for (uint32_t i = 0; i < hf->columns; ++i) {
            put_float(f, i % HEIGHTS_PER_LINE == 0 ? "y " : " ", hf->y[(size_t)j * hf->columns + i]);
            if (i % HEIGHTS_PER_LINE == HEIGHTS_PER_LINE - 1 || i + 1 == hf->columns)
                fputs("\n", f);
        }
    for (uint32_t c = 0; hf->holes && c < hf->cells_x * hf->cells_z; ++c)
        if (hf->holes[c >> 5] >> (c & 31) & 1u)
            fprintf(f, "hole %u %u\n", (unsigned)(c % hf->cells_x), (unsigned)(c / hf->cells_x));
    fputs("end\n", f);
    const bool failed = ferror(f) != 0;
    return fclose(f) != 0 || failed ? KCC_ERR_IO : KCC_OK;
}

/// What the reader fills in.
typedef struct hf_file {
    kcc_heightfield_desc desc;
    float   *heights;
    uint8_t *holes;
    size_t   samples, read;    ///< heights expected and read
    bool     header, ended, any_hole;
} hf_file;

/// `columns N`, `rows N`, `spacing SX SZ`, `origin OX OZ`: the grid's size and placement.
static kcc_status grid_line(kcc_tr_parser *p, hf_file *h)
{
    kcc_heightfield_desc *d = &h->desc;
    int64_t n;
    if (kcc_tr_tok_is(p, 0, "columns") || kcc_tr_tok_is(p, 0, "rows")) {
        const bool columns = kcc_tr_tok_is(p, 0, "columns");
        kcc_status st = kcc_tr_int_line(p, columns ? "columns N" : "rows N", 2, 1 << 16,
                                        columns ? "columns" : "rows", &n);
        if (st != KCC_OK)
            return st;
        *(columns ? &d->columns : &d->rows) = (uint32_t)n;
        return KCC_OK;
    }
    const bool spacing = kcc_tr_tok_is(p, 0, "spacing");
    if (p->ntok != 3)
        return kcc_tr_fail(p, KCC_ERR_PARSE, spacing ? "expected 'spacing SX SZ'" : "expected 'origin OX OZ'");
    float v[2];
    for (uint32_t k = 0; k < 2; ++k) {
        kcc_status st = kcc_tr_parse_float_text(p, p->text + p->tok_begin[1 + k],
                                                p->text + p->tok_end[1 + k], true,
                                                spacing ? "spacing" : "origin", &v[k]);
        if (st != KCC_OK)
            return st;
    }
    if (spacing)
        memcpy(d->spacing, v, sizeof v);
    else
        d->origin[0] = v[0], d->origin[2] = v[1];
    return KCC_OK;
}

/// The heights' storage, once columns and rows are known (before the first `y` or `hole` line).
static kcc_status allocate(kcc_tr_parser *p, hf_file *h)
{
    if (h->heights)
        return KCC_OK;
    if (h->desc.columns == 0 || h->desc.rows == 0)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "'columns' and 'rows' come before the heights");
    if ((uint64_t)(h->desc.columns - 1) * (h->desc.rows - 1) > (1u << 29))
        return kcc_tr_fail(p, KCC_ERR_TOO_LARGE, "columns x rows is beyond a heightfield's 2^30 "
                           "triangles");
    h->samples = (size_t)h->desc.columns * h->desc.rows;
    h->heights = malloc(h->samples * sizeof *h->heights);
    h->holes = calloc((size_t)(h->desc.columns - 1) * (h->desc.rows - 1), 1);
    if (!h->heights || !h->holes)
        return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    return KCC_OK;
}

/// `y v ...`: the next heights, row-major; `hole I J`: cell (I, J) has no triangles.
static kcc_status data_line(kcc_tr_parser *p, hf_file *h)
{
    kcc_status st = allocate(p, h);
    if (st != KCC_OK)
        return st;
    if (kcc_tr_tok_is(p, 0, "hole")) {
        int64_t cell[2];
        const uint32_t limit[2] = {h->desc.columns - 2, h->desc.rows - 2};
        if (p->ntok != 3)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'hole I J'");
        for (uint32_t k = 0; k < 2 && st == KCC_OK; ++k)
            st = kcc_tr_parse_int_text(p, p->text + p->tok_begin[1 + k], p->text + p->tok_end[1 + k],
                                       0, limit[k], k ? "cell row" : "cell column", &cell[k]);
        if (st == KCC_OK)
            h->holes[cell[1] * (int64_t)(h->desc.columns - 1) + cell[0]] = 1;
        h->any_hole |= st == KCC_OK;
        return st;
    }
    if (h->read + p->ntok - 1 > h->samples)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "more heights than columns x rows (%zu)", h->samples);
    for (uint32_t k = 1; k < p->ntok && st == KCC_OK; ++k)
        st = kcc_tr_parse_float_text(p, p->text + p->tok_begin[k], p->text + p->tok_end[k], true,
                                     "height", &h->heights[h->read++]);
    return st;
}

static kcc_status hf_statement(kcc_tr_parser *p)
{
    hf_file *h = p->world;
    if (!h->header) {
        if (p->ntok != 2 || !kcc_tr_tok_is(p, 0, "kcc-heightfield") || !kcc_tr_tok_is(p, 1, "1"))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "not a heightfield file: expected 'kcc-heightfield 1'");
        h->header = true;
        return KCC_OK;
    }
    if (h->ended)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "unexpected line after 'end'");
    if (kcc_tr_tok_is(p, 0, "end")) {
        if (h->read != h->samples || !h->heights)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "%zu heights for columns x rows = %zu", h->read,
                               h->samples);
        h->ended = true;
        return KCC_OK;
    }
    if (kcc_tr_tok_is(p, 0, "y") || kcc_tr_tok_is(p, 0, "hole"))
        return data_line(p, h);
    if (h->heights)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "the grid's lines come before the heights");
    if (kcc_tr_tok_is(p, 0, "columns") || kcc_tr_tok_is(p, 0, "rows") ||
        kcc_tr_tok_is(p, 0, "spacing") || kcc_tr_tok_is(p, 0, "origin"))
        return grid_line(p, h);
    char word[KCC_TR_MAX_TOKEN_CHARS + 1];
    return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown line '%s'", kcc_tr_tok(p, 0, word));
}

static kcc_status hf_end(kcc_tr_parser *p)
{
    const hf_file *h = p->world;
    return h->ended ? KCC_OK : kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'end' line");
}

kcc_status kcc_trace_read_heightfield(const char *path, kcc_mesh **out_mesh, char *err,
                                      size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!path || !out_mesh)
        return KCC_ERR_NULL_ARGUMENT;
    char *file = NULL;
    size_t length = 0;
    kcc_status st = kcc_tr_read_file(path, &file, &length, err, err_size);
    if (st != KCC_OK)
        return st;
    char *text = kcc_tr_dup_range(file, length);   // NUL-terminated: the number readers may look one past a token
    free(file);
    if (!text)
        return KCC_ERR_OUT_OF_MEMORY;
    hf_file h;
    memset(&h, 0, sizeof h);
    h.desc.origin[1] = -0.0f;   // adds nothing to the heights as built
    kcc_tr_parser p;
    memset(&p, 0, sizeof p);
    p.name = path;
    p.err = err;
    p.err_size = err_size;
    p.text = text;
    p.world = &h;
    st = length < UINT32_MAX ? kcc_tr_parse_lines(&p, length, hf_statement, hf_end)
                             : kcc_tr_fail(&p, KCC_ERR_TOO_LARGE, "file too large");
    if (st == KCC_OK) {
        h.desc.heights = h.heights;
        h.desc.holes = h.any_hole ? h.holes : NULL;
        st = kcc_heightfield_build(&h.desc, out_mesh);
        if (st != KCC_OK && err && err_size)
            snprintf(err, err_size, "%s: cannot build the heightfield: %s", path, kcc_status_str(st));
    }
    free(text);
    free(h.heights);
    free(h.holes);
    return st;
}
