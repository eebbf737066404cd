/*
 * acc_yaml.h - reading YAML documents with libyaml and writing YAML text, for every acc format
 * (topologies, plans, model profiles).
 *
 * A document is parsed whole into libyaml's node graph; the accessors below look values up by key
 * and turn every mismatch into an acc_status_t whose message reads "FILE:LINE: what was wrong",
 * naming the key.  Documents are owned by the caller (acc_yaml_destroy); nodes are borrowed from
 * their document.  Writing is done with acc_buf_t and acc_yaml_put_scalar(), which quotes a string
 * only when plain YAML would change its meaning, so dumps are stable and readable.
 */
#ifndef ACC_YAML_H
#define ACC_YAML_H

#include "acc_common.h"

#include <yaml.h>

/* These helpers serve acc's own formats and are not part of the installed API (this header is
 * not installed), so libacc.so keeps them to itself: its version script exports every acc_
 * name, and hidden visibility is what overrides that.  The push comes after the includes, so
 * that libyaml's own functions keep their default visibility. */
#pragma GCC visibility push(hidden)

typedef struct acc_yaml_doc acc_yaml_doc_t;
typedef yaml_node_t acc_yaml_node_t;

/* Parse text (len bytes) as one YAML document.  `name` (a path, or "<string>") is used in
 * messages.  An empty document gives ACC_ERR_PARSE. */
acc_status_t acc_yaml_parse(const char *text, size_t len, const char *name, acc_yaml_doc_t **out);
void acc_yaml_destroy(acc_yaml_doc_t *doc);

const char *acc_yaml_name(const acc_yaml_doc_t *doc);
acc_yaml_node_t *acc_yaml_root(acc_yaml_doc_t *doc);
/* 1-based line of a node in its file. */
int acc_yaml_line(const acc_yaml_node_t *node);

int acc_yaml_is_map(const acc_yaml_node_t *n);
int acc_yaml_is_seq(const acc_yaml_node_t *n);
/* The scalar's text, or NULL when the node is not a scalar. */
const char *acc_yaml_scalar(const acc_yaml_node_t *n);

/* Mappings. */
acc_yaml_node_t *acc_yaml_get(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key);
size_t acc_yaml_map_len(const acc_yaml_node_t *map);
/* i-th pair; key is the key's scalar text (NULL for a non-scalar key). */
acc_yaml_node_t *acc_yaml_map_at(acc_yaml_doc_t *doc, acc_yaml_node_t *map, size_t i,
                                 const char **key);
/* Reject keys not in `allowed` (NULL-terminated): a typo must not be silently ignored. */
acc_status_t acc_yaml_check_keys(acc_yaml_doc_t *doc, acc_yaml_node_t *map,
                                 const char *const *allowed, const char *what);

/* Sequences. */
size_t acc_yaml_seq_len(const acc_yaml_node_t *seq);
acc_yaml_node_t *acc_yaml_seq_at(acc_yaml_doc_t *doc, acc_yaml_node_t *seq, size_t i);

/* Typed look-ups of map[key].  With required=0 a missing key leaves *out untouched and returns
 * ACC_OK; a present key of the wrong form is always an error naming the file, line and key. */
acc_status_t acc_yaml_get_str(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                              int required, const char **out);
acc_status_t acc_yaml_get_int(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                              int required, int64_t *out);
/* An integer in [lo, hi]; out of range is an error naming the key, value and range. */
acc_status_t acc_yaml_get_range(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                                int required, int64_t lo, int64_t hi, int64_t *out);
acc_status_t acc_yaml_get_double(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                                 int required, double *out);
acc_status_t acc_yaml_get_bool(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                               int required, int *out);
/* Node conversions with the same error wording, for sequence items. */
acc_status_t acc_yaml_node_int(acc_yaml_doc_t *doc, acc_yaml_node_t *n, const char *what,
                               int64_t *out);
acc_status_t acc_yaml_node_double(acc_yaml_doc_t *doc, acc_yaml_node_t *n, const char *what,
                                  double *out);

/* Error "FILE:LINE: message" about a node. */
acc_status_t acc_yaml_error(acc_yaml_doc_t *doc, const acc_yaml_node_t *n, acc_status_t st,
                            const char *fmt, ...) ACC_PRINTF(4, 5);

/* Append s as a YAML scalar: plain when safe, double-quoted with escapes otherwise. */
void acc_yaml_put_scalar(acc_buf_t *b, const char *s);
/* Append a double in the shortest form that reads back to the same value. */
void acc_yaml_put_double(acc_buf_t *b, double v);

#pragma GCC visibility pop

#endif /* ACC_YAML_H */
