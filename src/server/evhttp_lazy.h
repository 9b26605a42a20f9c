/* libevent's HTTP server on OpenSSL (libevent_extra, libevent_openssl,
 * libevent_pthreads, each on libevent_core), loaded on first use as
 * util/openssl_lazy.h loads OpenSSL: only `ksched run` serves HTTPS, and a
 * simulation should not map a server it never uses. The secure port
 * speaks TLS with the OpenSSL the API server client already loads: one
 * TLS stack in the process (libmicrohttpd served it with GnuTLS, 3.1 MiB
 * of resident memory more; docs/performance.md).
 *
 * One field per function, named and typed as libevent declares it. */
#ifndef KS_EVHTTP_LAZY_H
#define KS_EVHTTP_LAZY_H

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>

#define KS_EVHTTP_FUNCS(X)                                                                                            \
    X(evthread_use_pthreads)                                                                                         \
    X(event_set_log_callback)                                                                                        \
    X(event_base_new)                                                                                                \
    X(event_base_free)                                                                                               \
    X(event_base_dispatch)                                                                                           \
    X(event_base_loopexit)                                                                                           \
    X(event_base_once)                                                                                               \
    X(evbuffer_new)                                                                                                  \
    X(evbuffer_free)                                                                                                 \
    X(evbuffer_add_reference)                                                                                        \
    X(bufferevent_openssl_socket_new)                                                                                \
    X(bufferevent_openssl_set_allow_dirty_shutdown)                                                                  \
    X(evhttp_new)                                                                                                    \
    X(evhttp_free)                                                                                                   \
    X(evhttp_set_bevcb)                                                                                              \
    X(evhttp_set_gencb)                                                                                              \
    X(evhttp_set_timeout)                                                                                            \
    X(evhttp_set_max_headers_size)                                                                                   \
    X(evhttp_set_max_body_size)                                                                                      \
    X(evhttp_set_allowed_methods)                                                                                    \
    X(evhttp_accept_socket_with_handle)                                                                              \
    X(evhttp_del_accept_socket)                                                                                      \
    X(evhttp_request_get_command)                                                                                    \
    X(evhttp_request_get_uri)                                                                                        \
    X(evhttp_request_get_input_headers)                                                                              \
    X(evhttp_request_get_output_headers)                                                                             \
    X(evhttp_find_header)                                                                                            \
    X(evhttp_add_header)                                                                                             \
    X(evhttp_send_reply)

typedef struct ks_evhttp_api {
#define KS_EVHTTP_FIELD(name) __typeof__(&name) name;
    KS_EVHTTP_FUNCS(KS_EVHTTP_FIELD)
#undef KS_EVHTTP_FIELD
} ks_evhttp_api;

/* The loaded API (libevent's pthreads locking on), or NULL when it cannot
 * be loaded; *why (static text) says why. Thread-safe. */
const ks_evhttp_api *ks_evhttp(const char **why);

#endif
