/* Kubernetes objects in Protocol Buffers (application/vnd.kubernetes.protobuf)
 * read into the same document trees as their JSON (codec/tree.h), so that
 * the decoders behind them do not know which one the API server sent.
 *
 * The wire form, as k8s.io/apimachinery's protobuf serializer writes it:
 * the bytes "k8s\0", then a runtime.Unknown {typeMeta {apiVersion, kind},
 * raw} whose raw is the object's message. Which message that is comes
 * from the kinds in codec/pb_schema.h; an object of another kind is an
 * error. A watch stream is a series of frames, each a 4-byte big-endian
 * length and a metav1.WatchEvent {type, object {raw}} whose raw is an
 * object as above.
 *
 * The tree is the one encoding/json's output would parse to: JSON names,
 * zero values left out where the Go field is `omitempty` and not a
 * pointer, times in RFC 3339, quantities and int-or-strings as their JSON,
 * RawExtensions parsed as the JSON they hold. Not kept: managedFields
 * (nothing reads them), a repeated message field merged with an earlier
 * one (the last one wins, as for scalars).
 *
 * Bad input never crashes and never loops: truncated varints, lengths past
 * the end, wire types that do not fit the field, strings holding NUL,
 * nesting deeper than KT_MAX_DEPTH, unknown kinds are errors naming the
 * message and field ("v1.PodSpec field 2 (containers): ..."). Unknown
 * field numbers are skipped, as every protobuf reader does. */
#ifndef KS_PB_H
#define KS_PB_H

#include "codec/tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether buf starts with the protobuf serializer's "k8s\0". */
bool ks_pb_is_protobuf(const void *buf, size_t len);

/* One object (with the prefix) into a tree with apiVersion and kind set.
 * On error returns false with a malloc'd message in *err. */
bool ks_pb_decode_object(ks_arena *a, const void *buf, size_t len, ks_tree **out, char **err);

/* A list (PodList, NodeList, ...) read item by item while it arrives,
 * so that a list of every pod is never one tree nor one buffer: the
 * caller hands ks_pb_list_read the bytes it has not consumed yet, drops
 * the *used bytes it consumed (also with KS_PB_MORE), and calls again,
 * with more bytes after KS_PB_MORE. Zero-initialise the reader. */
typedef struct ks_pb_list_reader {
    int state;        /* 0: the prefix and runtime.Unknown, 1: the list's fields, 2: done */
    uint64_t left;    /* bytes of the list message not read yet */
    uint16_t list_msg, item_msg;
    bool root_sent;
    uint32_t index;   /* items read so far */
    char api_version[128], kind[128];
} ks_pb_list_reader;

enum {
    KS_PB_MORE,       /* more bytes are needed */
    KS_PB_ROOT,       /* *out: the list without its items (apiVersion, kind, metadata) */
    KS_PB_ITEM,       /* *out: the next item */
    KS_PB_BAD_ITEM,   /* that item is malformed (*err, malloc'd); the next call goes on after it */
    KS_PB_END,        /* the whole list was read */
    KS_PB_NOT_LIST,   /* not a list of a kind ksched reads (a Status, JSON...): nothing consumed */
    KS_PB_ERROR       /* the list itself is malformed (*err): nothing more can be read */
};
int ks_pb_list_read(ks_pb_list_reader *lr, ks_arena *a, const void *buf, size_t len, size_t *used, ks_tree **out,
                    char **err);

/* One frame's WatchEvent (after its length) into {type, object}. */
bool ks_pb_decode_watch_event(ks_arena *a, const void *buf, size_t len, ks_tree **out, char **err);

/* The length of the watch frame at the start of buf, or -1 when fewer
 * than 4 bytes are there. */
int64_t ks_pb_frame_len(const void *buf, size_t len);

/* A tree as the message of the root kind (api_version, kind), with the
 * "k8s\0" prefix and runtime.Unknown around it: what ksched writes
 * (Binding). Fields the message does not have are errors. malloc'd into
 * *out, NULL with *err on error. */
bool ks_pb_encode_object(const ks_tree *obj, const char *api_version, const char *kind, char **out, size_t *out_len,
                         char **err);

#endif
