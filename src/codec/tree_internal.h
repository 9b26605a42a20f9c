/* What the tree's parsers and emitters share inside src/codec. */
#ifndef KS_TREE_INTERNAL_H
#define KS_TREE_INTERNAL_H

#include "codec/tree.h"

#include <stddef.h>

/* Slots allocated for a map or sequence of n (> 0) entries. */
size_t kt_cap(uint32_t n);
/* A float as Go's encoding/json writes it; with yaml, as a YAML float that
 * reads back as one (".inf", "1.0"). */
void kt_format_float(double d, char *buf, int n, bool yaml);
/* The type a YAML plain scalar resolves to (sigs.k8s.io/yaml rules), with
 * its value in *out (text untouched). */
kt_type kt_resolve_plain(const char *s, size_t len, ks_tree *out);

/* Parsers copy every key and short string into the arena once: a
 * kubectl dump repeats the same few hundred of them thousands of times. */
typedef struct kt_strtab {
    const char **slots;
    uint32_t *lens;
    size_t cap, n;
} kt_strtab;
const char *kt_strtab_get(kt_strtab *t, ks_arena *a, const char *s, size_t n);
void kt_strtab_free(kt_strtab *t);

bool kt_parse_yaml(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                   uint32_t *ndocs, char **err);
bool kt_parse_json(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                   uint32_t *ndocs, char **err);
/* kt_parse_json's two ways, for tests: the direct parser (false on
 * anything it leaves to jansson) and jansson's. */
bool kt_parse_json_fast(ks_arena *a, const char *buf, size_t len, ks_tree ***docs, uint32_t *ndocs);
bool kt_parse_json_jansson(ks_arena *a, const char *name, const char *buf, size_t len, ks_tree ***docs,
                           uint32_t *ndocs, char **err);

#endif
