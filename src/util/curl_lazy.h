/* libcurl, loaded on first use. A scheduler that talks to no extender (and
 * no API server) never maps libcurl and the thirty-odd libraries it pulls
 * in (TLS, Kerberos, LDAP, ...: about 6 MB of resident memory). */
#ifndef KS_CURL_LAZY_H
#define KS_CURL_LAZY_H

#include <curl/curl.h>

typedef struct ks_curl_api {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *h);
    void (*easy_reset)(CURL *h);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    /* The multi interface (the API server client's I/O thread). */
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra, unsigned n, int timeout_ms, int *numfds);
    CURLMcode (*multi_wakeup)(CURLM *m);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    CURLMcode (*multi_cleanup)(CURLM *m);
    const char *(*multi_strerror)(CURLMcode rc);
    CURLcode (*easy_pause)(CURL *h, int bitmask);
} ks_curl_api;

/* The loaded API (curl_global_init done), or NULL when libcurl cannot be
 * loaded; *why (static text) says why. Thread-safe. */
const ks_curl_api *ks_curl(const char **why);

#endif
