/* nghttp2, loaded on first use as util/curl_lazy.h loads libcurl: only
 * the API server client's HTTP/2 transport (kube/h2_transport.c) uses it,
 * and a simulation should not map it. One field per function, named and
 * typed as nghttp2 declares it (`N->nghttp2_submit_request(...)`); to use
 * another function, add its name to KS_NGHTTP2_FUNCS. */
#ifndef KS_NGHTTP2_LAZY_H
#define KS_NGHTTP2_LAZY_H

#include <nghttp2/nghttp2.h>

#define KS_NGHTTP2_FUNCS(X) \
    X(nghttp2_session_callbacks_new) \
    X(nghttp2_session_callbacks_del) \
    X(nghttp2_session_callbacks_set_on_begin_headers_callback) \
    X(nghttp2_session_callbacks_set_on_header_callback) \
    X(nghttp2_session_callbacks_set_on_data_chunk_recv_callback) \
    X(nghttp2_session_callbacks_set_on_frame_recv_callback) \
    X(nghttp2_session_callbacks_set_on_stream_close_callback) \
    X(nghttp2_option_new) \
    X(nghttp2_option_del) \
    X(nghttp2_option_set_no_auto_window_update) \
    X(nghttp2_session_client_new2) \
    X(nghttp2_session_del) \
    X(nghttp2_submit_settings) \
    X(nghttp2_session_set_local_window_size) \
    X(nghttp2_session_get_stream_user_data) \
    X(nghttp2_session_set_stream_user_data) \
    X(nghttp2_session_consume) \
    X(nghttp2_session_consume_connection) \
    X(nghttp2_session_consume_stream) \
    X(nghttp2_submit_rst_stream) \
    X(nghttp2_submit_request) \
    X(nghttp2_session_get_remote_settings) \
    X(nghttp2_session_mem_recv) \
    X(nghttp2_session_mem_send) \
    X(nghttp2_session_want_write) \
    X(nghttp2_submit_ping) \
    X(nghttp2_http2_strerror) \
    X(nghttp2_strerror)

typedef struct ks_nghttp2_api {
#define KS_NGHTTP2_FIELD(name) __typeof__(&name) name;
    KS_NGHTTP2_FUNCS(KS_NGHTTP2_FIELD)
#undef KS_NGHTTP2_FIELD
} ks_nghttp2_api;

/* The loaded API, or NULL when it cannot be loaded; *why (static text)
 * says why. Thread-safe. */
const ks_nghttp2_api *ks_nghttp2(const char **why);

#endif
