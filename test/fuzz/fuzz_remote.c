/* The API server's small answers that are not objects of a kind: the
 * first byte chooses the reader, the rest is the body. 0: a Status (the
 * message of an error answer, ks_kube_status_message); 1: a TokenReview
 * and 2: a SubjectAccessReview (the ops server's delegated authentication
 * and authorization); 3: a Retry-After header value. A body either reads
 * or is refused with a message; nothing leaks. */
#include "fuzz.h"

#include "kube/client.h"
#include "server/auth.h"
#include "server/delegated.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ks_log_set_verbosity(0);
    if (size < 1) return 0;
    unsigned which = data[0] % 4;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    char *err = NULL;
    switch (which) {
    case 0: {
        char *m = ks_kube_status_message(body, len);
        FZ_CHECK(!m || strlen(m) <= len, "a message longer than the body");
        free(m);
        break;
    }
    case 1: {
        ks_user_info u = {0};
        int r = ks_token_review_decode(body, len, &u, &err);
        FZ_CHECK(r >= -1 && r <= 1, "TokenReview: %d", r);
        FZ_CHECK((r == -1) == (err != NULL), "TokenReview: %d with%s a message", r, err ? "" : "out");
        FZ_CHECK(r != 1 || u.name, "TokenReview: authenticated without a name");
        ks_user_info_free(&u);
        free(err);
        break;
    }
    case 2: {
        char *reason = NULL;
        int r = ks_access_review_decode(body, len, &reason, &err);
        FZ_CHECK(r >= -1 && r <= 1, "SubjectAccessReview: %d", r);
        FZ_CHECK((r == -1) == (err != NULL), "SubjectAccessReview: %d with%s a message", r, err ? "" : "out");
        free(reason);
        free(err);
        break;
    }
    default: {
        long s = ks_kube_parse_retry_after(body, len);
        FZ_CHECK(s >= -1 && s <= 999999999, "Retry-After: %ld", s);
        break;
    }
    }
    return 0;
}
