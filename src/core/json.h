/* json.h - a small strict JSON parser into a reusable flat node array (not installed).
 *
 * Usage:
 *     slda_json_t js;
 *     slda_json_init(&js);
 *     if (slda_json_parse(&js, line, len, err, sizeof err) == SLDA_OK) {
 *         uint32_t text = slda_json_object_get(&js, 0, "text");
 *         if (text != SLDA_JSON_NONE && js.nodes[text].type == SLDA_JSON_STRING) {
 *             char *buf = malloc(slda_json_raw_len(&js, text) + 1);
 *             size_t n = slda_json_string(&js, text, buf);   (unescaped UTF-8)
 *         }
 *     }
 *     slda_json_clear(&js);
 *
 * Nodes point into the source text, which must outlive them; nothing is
 * copied or unescaped until asked. The node array is kept between parses,
 * so parsing line after line allocates only when a line needs more nodes.
 */
#ifndef SLDA_JSON_H
#define SLDA_JSON_H

#include "core/slda_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define SLDA_JSON_NONE UINT32_MAX
#define SLDA_JSON_MAX_DEPTH 64

typedef enum {
    SLDA_JSON_NULL = 0,
    SLDA_JSON_FALSE,
    SLDA_JSON_TRUE,
    SLDA_JSON_NUMBER,
    SLDA_JSON_STRING,
    SLDA_JSON_ARRAY,
    SLDA_JSON_OBJECT
} slda_json_type_t;

typedef struct slda_json_node_s {
    slda_json_type_t type;
    uint32_t start, end; /* source bytes; a string's are inside its quotes (still escaped) */
    uint32_t size;       /* ARRAY: elements; OBJECT: members (each a key node + value node) */
    uint32_t next;       /* index of the node after this one's subtree */
    uint32_t escaped;    /* STRING: contains backslash escapes */
} slda_json_node_t;

typedef struct slda_json_s {
    slda_json_node_t *nodes; /* nodes[0] is the root after a successful parse */
    uint32_t n, cap;
    const char *src;
    size_t len;
    unsigned depth;
} slda_json_t;

void slda_json_init(slda_json_t *js);
void slda_json_clear(slda_json_t *js);
/* Parse exactly one JSON value (surrounded by optional whitespace) from
 * src[0..len). Strings must be valid UTF-8 without raw control characters;
 * escapes are checked (\uD800-\uDBFF must pair with \uDC00-\uDFFF); nesting
 * deeper than SLDA_JSON_MAX_DEPTH is refused. SLDA_ERR_PARSE with
 * "JSON: <problem> at byte N" in errstr; SLDA_ERR_TOO_LARGE for 4 GiB. */
slda_err_t slda_json_parse(slda_json_t *js, const char *src, size_t len, char *errstr,
                           size_t errstr_size);
/* Value node of the first member of object node obj whose key is key, or
 * SLDA_JSON_NONE. */
uint32_t slda_json_object_get(const slda_json_t *js, uint32_t obj, const char *key);
/* First element node of an array/object (the first key for an object), or
 * SLDA_JSON_NONE when empty; then follow nodes[i].next. */
uint32_t slda_json_first(const slda_json_t *js, uint32_t node);
/* Escaped length of a string node: enough room for its unescaped text. */
static inline size_t slda_json_raw_len(const slda_json_t *js, uint32_t node)
{
    return js->nodes[node].end - js->nodes[node].start;
}
/* Unescape string node into out (room for slda_json_raw_len + 1 bytes); NUL
 * terminated; returns the length (the text may contain NUL from \u0000). */
size_t slda_json_string(const slda_json_t *js, uint32_t node, char *out);
/* Type name for messages ("string", "number", ...). */
const char *slda_json_type_name(slda_json_type_t type);

/* Write s as a JSON string literal (with quotes) to f, escaping '"', '\\' and
 * control characters; s must be valid UTF-8 (it is copied through). */
void slda_json_write_string(FILE *f, const char *s);

#endif
