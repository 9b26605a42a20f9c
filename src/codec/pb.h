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

/* A list (PodList, NodeList, ...) read item by item, so that a list of
 * every pod is never one tree. */
typedef struct ks_pb_list {
    const uint8_t *p, *end; /* the list message's fields not yet read */
    uint16_t item_msg;
    uint32_t index;         /* items read so far */
} ks_pb_list;

/* The list without its items (apiVersion, kind, metadata) into *root,
 * the cursor into *it. */
bool ks_pb_list_open(ks_arena *a, const void *buf, size_t len, ks_tree **root, ks_pb_list *it, char **err);
/* The next item: 1 with *item, 0 at the end, -1 when that item is
 * malformed (*err says why; the next call goes on with the item after
 * it), -2 when the list itself is (nothing more can be read). */
int ks_pb_list_next(ks_pb_list *it, ks_arena *a, ks_tree **item, char **err);

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
