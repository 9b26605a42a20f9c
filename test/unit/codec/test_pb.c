/* Protocol Buffers against JSON (codec/pb.h): the same objects, written
 * by k8s.io/api v0.34.1's own encoders in both forms (test/pbgen: random
 * objects of every kind ksched reads, test/fixtures/pb/random.bin), must
 * read to the same trees, and so decode to the same objects; lists item
 * by item as whole; watch frames; every truncation and a byte flipped
 * anywhere read or fail with a message, never crash; the Binding ksched
 * writes reads back. */
#include "codec/decode.h"
#include "codec/pb.h"
#include "codec/pb_schema.h"
#include "codec/tree.h"
#include "util/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DATA "test/fixtures/pb/random.bin"

typedef struct rec {
    char *js, *pb;
    size_t js_len, pb_len;
} rec;

static rec *recs;
static size_t nrecs;

static void load(void) {
    if (recs) return;
    FILE *f = fopen(DATA, "rb");
    assert_non_null(f);
    for (;;) {
        uint32_t n;
        if (fread(&n, 4, 1, f) != 1) break;
        recs = realloc(recs, (nrecs + 1) * sizeof(*recs));
        rec *r = &recs[nrecs++];
        r->js = malloc(n + 1);
        assert_int_equal(fread(r->js, 1, n, f), n);
        r->js[n] = 0;
        r->js_len = n;
        assert_int_equal(fread(&n, 4, 1, f), 1);
        r->pb = malloc(n ? n : 1);
        assert_int_equal(fread(r->pb, 1, n, f), n);
        r->pb_len = n;
    }
    fclose(f);
    assert_true(nrecs >= 100);
}

/* null, [] and {} are what an absent field is to every decoder. */
static bool empty(const ks_tree *t) {
    return !t || t->type == KT_NULL || ((t->type == KT_SEQ || t->type == KT_MAP) && t->n == 0);
}

static bool same(const ks_tree *x, const ks_tree *y, char *path, size_t plen);

static bool same_map(const ks_tree *x, const ks_tree *y, char *path, size_t plen) {
    for (int pass = 0; pass < 2; pass++) {
        const ks_tree *a = pass ? y : x, *b = pass ? x : y;
        for (uint32_t i = 0; i < a->n; i++) {
            if (strcmp(a->keys[i], "managedFields") == 0) continue; /* not read (pb.h) */
            const ks_tree *o = kt_get(b, a->keys[i]);
            size_t l = strlen(path);
            snprintf(path + l, plen - l, ".%s", a->keys[i]);
            bool ok = (empty(a->items[i]) && empty(o)) ||
                      (o && (pass ? same(o, a->items[i], path, plen) : same(a->items[i], o, path, plen)));
            if (!ok) return false;
            path[l] = 0;
        }
    }
    return true;
}

static bool same(const ks_tree *x, const ks_tree *y, char *path, size_t plen) {
    if (empty(x) && empty(y)) return true;
    if (x->type != y->type) return false;
    switch (x->type) {
    case KT_MAP: return same_map(x, y, path, plen);
    case KT_SEQ:
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++) {
            size_t l = strlen(path);
            snprintf(path + l, plen - l, "[%u]", i);
            if (!same(x->items[i], y->items[i], path, plen)) return false;
            path[l] = 0;
        }
        return true;
    case KT_INT: return x->ival == y->ival;
    case KT_BOOL: return x->bval == y->bval;
    case KT_FLOAT: return x->fval == y->fval;
    default: return strcmp(x->text, y->text) == 0;
    }
}

static void expect_same(const ks_tree *js, const ks_tree *pb, size_t i) {
    char path[1024] = "";
    if (!same(js, pb, path, sizeof(path))) {
        char *a = kt_to_json(js, 0), *b = kt_to_json(pb, 0);
        fail_msg("record %zu differs at %s\nJSON:     %.2000s\nprotobuf: %.2000s", i, path, a, b);
    }
}

static ks_tree *parse_json(ks_arena *a, const rec *r) {
    ks_tree **docs = NULL;
    uint32_t n = 0;
    char *err = NULL;
    if (!kt_parse(a, "json", r->js, r->js_len, &docs, &n, &err)) fail_msg("JSON: %s", err);
    assert_int_equal(n, 1);
    return docs[0];
}

static bool is_list(const ks_tree *t) {
    const ks_tree *k = kt_get(t, "kind");
    size_t n = k ? strlen(k->text) : 0;
    return n > 4 && strcmp(k->text + n - 4, "List") == 0;
}

/* A list through ks_pb_list_read with the bytes handed over `step` at a
 * time (as they arrive from the network): the root with its items. */
static ks_tree *read_list(ks_arena *a, const void *buf, size_t len, size_t step, size_t ri) {
    const uint8_t *b = buf;
    ks_pb_list_reader lr = {0};
    ks_tree *root = NULL, *items = kt_new(a, KT_SEQ, 0);
    size_t off = 0, have = step < len ? step : len;
    for (;;) {
        size_t used;
        ks_tree *out;
        char *err;
        int k = ks_pb_list_read(&lr, a, b + off, have - off, &used, &out, &err);
        off += used;
        assert_true(off <= have);
        if (k == KS_PB_MORE) {
            if (have == len) fail_msg("record %zu: more bytes wanted after the last", ri);
            have = have + step < len ? have + step : len;
        } else if (k == KS_PB_ROOT) {
            assert_null(root);
            root = out;
        } else if (k == KS_PB_ITEM) {
            kt_seq_add(a, items, out);
        } else if (k == KS_PB_END) {
            break;
        } else {
            fail_msg("record %zu (%zu bytes at a time): %d %s", ri, step, k, err ? err : "");
        }
    }
    assert_non_null(root);
    kt_map_set(a, root, "items", items);
    return root;
}

static void test_random_objects_same_as_json(void **state) {
    (void)state;
    load();
    size_t lists = 0, objects = 0;
    for (size_t i = 0; i < nrecs; i++) {
        ks_arena *a = ks_arena_new(0);
        ks_tree *js = parse_json(a, &recs[i]);
        ks_tree *pb = NULL;
        char *err = NULL;
        assert_true(ks_pb_is_protobuf(recs[i].pb, recs[i].pb_len));
        if (!is_list(js)) {
            if (!ks_pb_decode_object(a, recs[i].pb, recs[i].pb_len, &pb, &err)) fail_msg("record %zu: %s", i, err);
            expect_same(js, pb, i);
            objects++;
        } else {
            /* item by item as the reflector reads a list: whole, and
             * handed over a byte and 7 bytes at a time as if arriving */
            pb = read_list(a, recs[i].pb, recs[i].pb_len, recs[i].pb_len, i);
            expect_same(js, read_list(a, recs[i].pb, recs[i].pb_len, 1, i), i);
            expect_same(js, read_list(a, recs[i].pb, recs[i].pb_len, 7, i), i);
            expect_same(js, pb, i);
            lists++;
        }
        ks_arena_free(a);
    }
    assert_true(lists >= 20);
    assert_true(objects >= 20);
}

/* What the decoders make of either tree is the same: the error message,
 * or the object (compared through its name and a few fields). */
static void test_pods_and_nodes_decode_alike(void **state) {
    (void)state;
    load();
    size_t n = 0;
    for (size_t i = 0; i < nrecs; i++) {
        ks_arena *a = ks_arena_new(0);
        ks_tree *js = parse_json(a, &recs[i]);
        const char *kind = kt_get(js, "kind")->text;
        if (strcmp(kind, "Pod") != 0 && strcmp(kind, "Node") != 0) {
            ks_arena_free(a);
            continue;
        }
        ks_tree *pb = NULL;
        char *err = NULL;
        assert_true(ks_pb_decode_object(a, recs[i].pb, recs[i].pb_len, &pb, &err));
        ks_errors r1, r2;
        ks_errors_init(&r1);
        ks_errors_init(&r2);
        ks_decode_ctx c1 = {.file = "x", .errs = &r1}, c2 = {.file = "x", .errs = &r2};
        if (strcmp(kind, "Pod") == 0) {
            ks_pod *p1 = ks_decode_pod(js, &c1), *p2 = ks_decode_pod(pb, &c2);
            assert_int_equal(p1 != NULL, p2 != NULL);
            if (p1) {
                assert_int_equal(p1->ncontainers, p2->ncontainers);
                assert_true(ks_resource_equal(&p1->requests, &p2->requests));
            }
            ks_pod_unref(p1);
            ks_pod_unref(p2);
        } else {
            ks_node *n1 = ks_decode_node(js, &c1), *n2 = ks_decode_node(pb, &c2);
            assert_int_equal(n1 != NULL, n2 != NULL);
            if (n1) assert_true(ks_resource_equal(&n1->allocatable, &n2->allocatable));
            ks_node_unref(n1);
            ks_node_unref(n2);
        }
        assert_int_equal(r1.n, r2.n);
        for (size_t j = 0; j < r1.n; j++) assert_string_equal(r1.v[j], r2.v[j]);
        ks_errors_free(&r1);
        ks_errors_free(&r2);
        n++;
        ks_arena_free(a);
    }
    assert_true(n >= 3);
}

/* Every prefix of every object, and each one with one byte changed, reads
 * or fails with a message. */
static void test_truncated_and_flipped(void **state) {
    (void)state;
    load();
    for (size_t i = 0; i < nrecs && i < 40; i++) {
        const rec *r = &recs[i];
        char *buf = malloc(r->pb_len);
        for (size_t cut = 0; cut < r->pb_len; cut += 1 + cut / 64) {
            ks_arena *a = ks_arena_new(0);
            ks_tree *t = NULL;
            char *err = NULL;
            memcpy(buf, r->pb, cut);
            bool ok = ks_pb_decode_object(a, buf, cut, &t, &err);
            assert_true(ok || (err && *err));
            free(err);
            buf[0] = r->pb[0];
            memcpy(buf, r->pb, r->pb_len);
            buf[cut] = (char)(buf[cut] ^ (0x55 + (int)cut));
            err = NULL;
            ok = ks_pb_decode_object(a, buf, r->pb_len, &t, &err);
            assert_true(ok || (err && *err));
            free(err);
            ks_arena_free(a);
        }
        free(buf);
    }
}

static void test_watch_event(void **state) {
    (void)state;
    load();
    /* a WatchEvent {type = 1, object = 2 {raw = 1}} around record 0 */
    const rec *r = &recs[0];
    size_t n = r->pb_len;
    uint8_t *ev = malloc(n + 32), *p = ev;
    *p++ = 0x0a, *p++ = 5;
    memcpy(p, "ADDED", 5), p += 5;
    /* object: tag 2 len, inner tag 1 len, raw */
    uint8_t inner[8], outer[8];
    size_t il = 0, ol = 0;
    for (size_t v = n; ; v >>= 7) {
        inner[il++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80) break;
    }
    for (size_t v = n + 1 + il; ; v >>= 7) {
        outer[ol++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80) break;
    }
    *p++ = 0x12;
    memcpy(p, outer, ol), p += ol;
    *p++ = 0x0a;
    memcpy(p, inner, il), p += il;
    memcpy(p, r->pb, n), p += n;
    ks_arena *a = ks_arena_new(0);
    ks_tree *t = NULL, *want = NULL;
    char *err = NULL;
    if (!ks_pb_decode_watch_event(a, ev, (size_t)(p - ev), &t, &err)) fail_msg("%s", err);
    assert_string_equal(kt_get(t, "type")->text, "ADDED");
    if (!is_list(parse_json(a, r))) {
        assert_true(ks_pb_decode_object(a, r->pb, n, &want, &err));
        expect_same(want, kt_get(t, "object"), 0);
    }
    uint8_t len4[4] = {0, 0, 1, 2};
    assert_int_equal(ks_pb_frame_len(len4, 4), 258);
    assert_int_equal(ks_pb_frame_len(len4, 3), -1);
    ks_arena_free(a);
    free(ev);
}

/* The Binding ksched writes, read back. */
static void test_binding_round_trip(void **state) {
    (void)state;
    const char *js = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
                     "\"uid\":\"u-1\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n1\"}}";
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs = NULL;
    uint32_t nd = 0;
    char *err = NULL;
    assert_true(kt_parse(a, "b", js, strlen(js), &docs, &nd, &err));
    char *out = NULL;
    size_t len = 0;
    if (!ks_pb_encode_object(docs[0], "v1", "Binding", &out, &len, &err)) fail_msg("%s", err);
    ks_tree *back = NULL;
    if (!ks_pb_decode_object(a, out, len, &back, &err)) fail_msg("%s", err);
    expect_same(docs[0], back, 0);
    free(out);
    /* a field Binding does not have */
    kt_map_set(a, docs[0], "spec", kt_string(a, "x", 0));
    assert_false(ks_pb_encode_object(docs[0], "v1", "Binding", &out, &len, &err));
    assert_non_null(strstr(err, "no field spec"));
    free(err);
    ks_arena_free(a);
}

/* The events.k8s.io/v1 Event ksched writes, read back (micro and plain times). */
static void test_event_round_trip(void **state) {
    (void)state;
    const char *js =
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"p.1872\","
        "\"namespace\":\"ns\"},\"eventTime\":\"2026-11-26T23:45:01.123456Z\",\"series\":{\"count\":2,"
        "\"lastObservedTime\":\"2026-11-26T23:46:00.000001Z\"},\"reportingController\":\"default-scheduler\","
        "\"reportingInstance\":\"default-scheduler-h\",\"action\":\"Binding\",\"reason\":\"Scheduled\","
        "\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\","
        "\"apiVersion\":\"v1\",\"resourceVersion\":\"7\"},\"note\":\"Successfully assigned ns/p to n1\","
        "\"type\":\"Normal\",\"deprecatedFirstTimestamp\":\"2026-11-26T23:45:01Z\",\"deprecatedCount\":3}";
    ks_arena *a = ks_arena_new(0);
    ks_tree **docs = NULL;
    uint32_t nd = 0;
    char *err = NULL;
    assert_true(kt_parse(a, "e", js, strlen(js), &docs, &nd, &err));
    char *out = NULL;
    size_t len = 0;
    if (!ks_pb_encode_object(docs[0], "events.k8s.io/v1", "Event", &out, &len, &err)) fail_msg("%s", err);
    ks_tree *back = NULL;
    if (!ks_pb_decode_object(a, out, len, &back, &err)) fail_msg("%s", err);
    expect_same(docs[0], back, 0);
    free(out);
    /* a time that is not RFC 3339 */
    kt_map_set(a, docs[0], "eventTime", kt_string(a, "yesterday", 0));
    assert_false(ks_pb_encode_object(docs[0], "events.k8s.io/v1", "Event", &out, &len, &err));
    assert_non_null(strstr(err, "eventTime"));
    free(err);
    ks_arena_free(a);
}

static void test_errors_name_the_field(void **state) {
    (void)state;
    ks_arena *a = ks_arena_new(0);
    ks_tree *t = NULL;
    char *err = NULL;
    assert_false(ks_pb_decode_object(a, "{\"kind\":1}", 10, &t, &err));
    assert_non_null(strstr(err, "prefix"));
    free(err);
    /* Unknown{typeMeta{v1, Frob}} */
    static const char frob[] = "k8s\0\x0a\x0a\x0a\x02v1\x12\x04" "Frob";
    assert_false(ks_pb_decode_object(a, frob, sizeof(frob) - 1, &t, &err));
    assert_non_null(strstr(err, "v1 Frob"));
    free(err);
    /* a Pod whose spec (2) holds containers (2) with a varint for a message */
    static const char pod[] = "k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x06\x12\x04\x12\x02\x10\x01";
    assert_false(ks_pb_decode_object(a, pod, sizeof(pod) - 1, &t, &err));
    assert_string_equal(err, "spec.containers[0].image: wire type 0 (v1.Container field 2)");
    free(err);
    /* a string with NUL: name (1) of metadata (1) */
    static const char nul[] = "k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x05\x0a\x03\x0a\x01\x00";
    assert_false(ks_pb_decode_object(a, nul, sizeof(nul) - 1, &t, &err));
    assert_string_equal(err, "metadata.name: a string holding a NUL byte");
    free(err);
    ks_arena_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_objects_same_as_json), cmocka_unit_test(test_pods_and_nodes_decode_alike),
        cmocka_unit_test(test_truncated_and_flipped),       cmocka_unit_test(test_watch_event),
        cmocka_unit_test(test_binding_round_trip),          cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_event_round_trip),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (size_t i = 0; i < nrecs; i++) {
        free(recs[i].js);
        free(recs[i].pb);
    }
    free(recs);
    return rc;
}
