#include "server/pprof.h"
#include "util/cpuprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Go's net/http/pprof reads ?seconds as an integer; anything else (or
 * <= 0) is its default, 30. */
static int seconds_of(const char *query) {
    for (const char *p = query; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n > 8 && strncmp(p, "seconds=", 8) == 0) {
            char *end;
            long v = strtol(p + 8, &end, 10);
            if (end == p + n && v > 0) return v > 3600 ? 3600 : (int)v;
        }
        p = amp ? amp + 1 : NULL;
    }
    return 30;
}

static void index_page(ks_strbuf *b) {
    ks_sb_puts(b, "<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n/debug/pprof/\n<br>\n"
                  "<p>Set debug=1 as a query parameter to export in legacy text format</p>\n<br>\n"
                  "Types of profiles available:\n<table>\n<thead><td>Count</td><td>Profile</td></thead>\n"
                  "<tr><td></td><td><a href='cmdline'>cmdline</a></td></tr>\n"
                  "<tr><td></td><td><a href='profile'>profile</a></td></tr>\n</table>\n"
                  "<br>\n<p>\nProfile Descriptions:\n<ul>\n"
                  "<li><div class=profile-name>cmdline: </div> The command line invocation of the current "
                  "program</li>\n"
                  "<li><div class=profile-name>profile: </div> CPU profile. You can specify the duration in the "
                  "seconds GET parameter. After you get the profile file, use the go tool pprof command to "
                  "investigate the profile.</li>\n"
                  "</ul>\n</p>\n</body>\n</html>\n");
}

int ks_pprof_route(void *arg, const char *method, const char *path, const char *query, ks_strbuf *body,
                   const char **content_type) {
    (void)arg;
    (void)method;
    const char *name = path + strlen("/debug/pprof/");
    if (!*name) {
        index_page(body);
        *content_type = "text/html; charset=utf-8";
        return 200;
    }
    if (strcmp(name, "cmdline") == 0) {
        FILE *f = fopen("/proc/self/cmdline", "re");
        char chunk[4096];
        size_t n;
        while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) ks_sb_putn(body, chunk, n);
        if (f) fclose(f);
        /* Go separates the arguments with NUL and ends without one */
        if (body->len && body->s[body->len - 1] == '\0') body->len--;
        *content_type = "text/plain; charset=utf-8";
        return 200;
    }
    if (strcmp(name, "profile") == 0) {
        char *out = NULL, *err = NULL;
        size_t len = 0;
        if (!ks_cpuprof_collect(seconds_of(query), &out, &len, &err)) {
            ks_sb_printf(body, "Could not enable CPU profiling: %s\n", err);
            free(err);
            *content_type = "text/plain; charset=utf-8";
            return 500;
        }
        ks_sb_putn(body, out, len);
        free(out);
        *content_type = "application/octet-stream";
        return 200;
    }
    ks_sb_puts(body, "Unknown profile\n");
    *content_type = "text/plain; charset=utf-8";
    return 404;
}
