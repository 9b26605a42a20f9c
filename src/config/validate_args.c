/* Validation of in-tree plugin args with upstream's paths and wording
 * (validation_pluginargs.go, component-helpers nodeaffinity, apimachinery
 * label and qualified-name checks). Args arrive defaulted, in v1 shape. */
#include "config/feature_gates.h"
#include "config/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- apimachinery name checks ------------------------------------------- */

static const char qname_fmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
static const char qname_msg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
static const char dns1123_sub_fmt[] = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
static const char dns1123_sub_msg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
static const char label_value_fmt[] = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
static const char label_value_msg[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

static bool is_alnum(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static bool match_qname(const char *s, size_t n) {
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    }
    return true;
}

static bool match_dns1123_subdomain(const char *s, size_t n) {
    /* labels of [a-z0-9-], each starting and ending alphanumeric */
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            size_t len = i - start;
            if (len == 0) return false;
            const char *l = s + start;
            for (size_t k = 0; k < len; k++) {
                char ch = l[k];
                bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
                if (!ok) return false;
            }
            if (l[0] == '-' || l[len - 1] == '-') return false;
            start = i + 1;
        }
    }
    return true;
}

/* RegexError(msg, fmt, examples...) */
static const char *regex_error(ks_arena *a, const char *msg, const char *fmt, const char *const *ex, size_t nex) {
    ks_strbuf b;
    ks_sb_init(&b);
    ks_sb_puts(&b, msg);
    ks_sb_puts(&b, " (e.g. ");
    for (size_t i = 0; i < nex; i++) {
        if (i) ks_sb_puts(&b, " or ");
        ks_sb_printf(&b, "'%s', ", ex[i]);
    }
    ks_sb_printf(&b, "regex used for validation is '%s')", fmt);
    const char *r = ks_arena_strdup(a, ks_sb_str(&b));
    ks_sb_free(&b);
    return r;
}

static const char *const qname_examples[] = {"MyName", "my.name", "123-abc"};

size_t is_qualified_name(const char *v, const char *msgs[4], ks_arena *a) {
    size_t n = 0;
    const char *slash = strchr(v, '/');
    const char *name = v;
    if (slash && strchr(slash + 1, '/')) {
        msgs[n++] = ks_arena_printf(a, "a qualified name %s with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                                    regex_error(a, qname_msg, qname_fmt, qname_examples, 3));
        return n;
    }
    if (slash) {
        size_t plen = (size_t)(slash - v);
        name = slash + 1;
        if (plen == 0) {
            msgs[n++] = "prefix part must be non-empty";
        } else {
            if (plen > 253) msgs[n++] = "prefix part must be no more than 253 characters";
            if (!match_dns1123_subdomain(v, plen)) {
                static const char *const ex[] = {"example.com"};
                msgs[n++] = ks_arena_printf(a, "prefix part %s", regex_error(a, dns1123_sub_msg, dns1123_sub_fmt, ex, 1));
            }
        }
    }
    size_t len = strlen(name);
    if (len == 0) {
        msgs[n++] = "name part must be non-empty";
    } else if (len > 63) {
        msgs[n++] = "name part must be no more than 63 characters";
    }
    if (!match_qname(name, len) && n < 4) {
        msgs[n++] = ks_arena_printf(a, "name part %s", regex_error(a, qname_msg, qname_fmt, qname_examples, 3));
    }
    return n;
}

size_t is_valid_label_value(const char *v, const char *msgs[2], ks_arena *a) {
    static const char *const ex[] = {"MyValue", "my_value", "12345"};
    size_t n = 0, len = strlen(v);
    if (len > 63) msgs[n++] = "must be no more than 63 characters";
    if (len && !match_qname(v, len)) msgs[n++] = regex_error(a, label_value_msg, label_value_fmt, ex, 3);
    return n;
}

/* metav1validation.ValidateLabelName: one error per message */
static void validate_label_name(cfg_ctx *c, const char *path, const char *v) {
    const char *msgs[4];
    size_t n = is_qualified_name(v, msgs, c->arena);
    for (size_t i = 0; i < n; i++) fe_invalid(c, path, fe_str(c, v), msgs[i]);
}

/* ---- small readers --------------------------------------------------------- */

static int64_t get_int(const ks_tree *m, const char *key) {
    int64_t v = 0;
    kt_as_int(kt_field(m, key), &v);
    return v;
}

static const char *get_str(const ks_tree *m, const char *key) {
    const char *s = kt_as_str(kt_field(m, key));
    return s ? s : "";
}

static const ks_tree *get_list(const ks_tree *m, const char *key) {
    const ks_tree *t = kt_field(m, key);
    return t && t->type == KT_SEQ ? t : NULL;
}

#define P(...) ks_arena_printf(c->arena, __VA_ARGS__)

/* ---- DefaultPreemption ------------------------------------------------------ */

void va_default_preemption(cfg_ctx *c, const char *path, const ks_tree *args) {
    int64_t pct = get_int(args, "minCandidateNodesPercentage");
    int64_t abs = get_int(args, "minCandidateNodesAbsolute");
    const char *pp = P("%s.minCandidateNodesPercentage", path);
    const char *ap = P("%s.minCandidateNodesAbsolute", path);
    if (pct < 0 || pct > 100) fe_invalid(c, pp, fe_int(c, pct), "not in valid range [0, 100]");
    if (abs < 0) fe_invalid(c, ap, fe_int(c, abs), "not in valid range [0, inf)");
    if (pct == 0 && abs == 0) {
        fe_invalid(c, pp, fe_int(c, pct), "cannot be zero at the same time as minCandidateNodesAbsolute");
        fe_invalid(c, ap, fe_int(c, abs), "cannot be zero at the same time as minCandidateNodesPercentage");
    }
}

/* ---- InterPodAffinity ------------------------------------------------------- */

void va_inter_pod_affinity(cfg_ctx *c, const char *path, const ks_tree *args) {
    int64_t w = get_int(args, "hardPodAffinityWeight");
    if (w < 0 || w > 100) fe_invalid(c, P("%s.hardPodAffinityWeight", path), fe_int(c, w), "not in valid range [0, 100]");
}

/* ---- shapes and resources ---------------------------------------------------- */

#define MAX_CUSTOM_PRIORITY_SCORE 10

static void validate_function_shape(cfg_ctx *c, const ks_tree *shape, const char *path) {
    if (!shape || shape->n == 0) {
        fe_required(c, path, "at least one point must be specified");
        return;
    }
    for (uint32_t i = 1; i < shape->n; i++) {
        int64_t prev = get_int(shape->items[i - 1], "utilization");
        int64_t cur = get_int(shape->items[i], "utilization");
        if (prev >= cur) {
            fe_invalid(c, P("%s[%u].utilization", path, i), fe_int(c, cur), "values must be sorted in increasing order");
            break;
        }
    }
    for (uint32_t i = 0; i < shape->n; i++) {
        int64_t u = get_int(shape->items[i], "utilization");
        int64_t s = get_int(shape->items[i], "score");
        if (u < 0 || u > 100) fe_invalid(c, P("%s[%u].utilization", path, i), fe_int(c, u), "not in valid range [0, 100]");
        if (s < 0 || s > MAX_CUSTOM_PRIORITY_SCORE) {
            fe_invalid(c, P("%s[%u].score", path, i), fe_int(c, s), "not in valid range [0, 10]");
        }
    }
}

static void validate_resources(cfg_ctx *c, const ks_tree *res, const char *path) {
    for (uint32_t i = 0; res && i < res->n; i++) {
        int64_t w = get_int(res->items[i], "weight");
        if (w <= 0 || w > 100) {
            fe_invalid(c, P("%s[%u].weight", path, i), fe_int(c, w),
                       P("resource weight of %s not in valid range (0, 100]", get_str(res->items[i], "name")));
        }
    }
}

/* ---- NodeResourcesFit --------------------------------------------------------- */

void va_node_resources_fit(cfg_ctx *c, const char *path, const ks_tree *args) {
    const ks_tree *ir = get_list(args, "ignoredResources");
    for (uint32_t i = 0; ir && i < ir->n; i++) {
        validate_label_name(c, P("%s.ignoredResources[%u]", path, i), kt_as_str(ir->items[i]) ? kt_as_str(ir->items[i]) : "");
    }
    const ks_tree *ig = get_list(args, "ignoredResourceGroups");
    for (uint32_t i = 0; ig && i < ig->n; i++) {
        const char *g = kt_as_str(ig->items[i]) ? kt_as_str(ig->items[i]) : "";
        const char *gp = P("%s.ignoredResourceGroups[%u]", path, i);
        if (strchr(g, '/')) fe_invalid(c, gp, fe_str(c, g), "resource group name can't contain '/'");
        validate_label_name(c, gp, g);
    }
    const ks_tree *ss = kt_field(args, "scoringStrategy");
    if (!ss) return;
    const char *sp = P("%s.scoringStrategy", path);
    const char *type = get_str(ss, "type");
    static const char *const types[] = {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"};
    if (strcmp(type, types[0]) && strcmp(type, types[1]) && strcmp(type, types[2])) {
        fe_not_supported(c, P("%s.type", sp), fe_str(c, type), types, 3);
    }
    validate_resources(c, get_list(ss, "resources"), P("%s.resources", sp));
    const ks_tree *rtcr = kt_field(ss, "requestedToCapacityRatio");
    if (rtcr) {
        /* upstream names the path scoringStrategy.shape */
        validate_function_shape(c, get_list(rtcr, "shape"), P("%s.shape", sp));
    } else if (strcmp(type, "RequestedToCapacityRatio") == 0) {
        /* upstream would dereference a nil pointer here and crash */
        fe_required(c, P("%s.requestedToCapacityRatio", sp), "the shape is needed for type RequestedToCapacityRatio");
    }
}

/* ---- PodTopologySpread ------------------------------------------------------- */

void va_pod_topology_spread(cfg_ctx *c, const char *path, const ks_tree *args) {
    const char *dt = get_str(args, "defaultingType");
    const ks_tree *dc = get_list(args, "defaultConstraints");
    const char *dtp = P("%s.defaultingType", path);
    static const char *const dts[] = {"System", "List"};
    if (strcmp(dt, "System") && strcmp(dt, "List")) {
        fe_not_supported(c, dtp, fe_str(c, dt), dts, 2);
    } else if (strcmp(dt, "System") == 0 && dc && dc->n > 0) {
        fe_invalid(c, dtp, fe_str(c, dt), "when .defaultConstraints are not empty");
    }
    const char *dcp = P("%s.defaultConstraints", path);
    for (uint32_t i = 0; dc && i < dc->n; i++) {
        const ks_tree *k = dc->items[i];
        const char *p = P("%s[%u]", dcp, i);
        int64_t skew = get_int(k, "maxSkew");
        if (skew <= 0) fe_invalid(c, P("%s.maxSkew", p), fe_int(c, skew), "not in valid range (0, inf)");
        const char *tk = get_str(k, "topologyKey");
        if (!*tk) {
            fe_required(c, P("%s.topologyKey", p), "can not be empty");
        } else {
            validate_label_name(c, P("%s.topologyKey", p), tk);
        }
        const char *wu = get_str(k, "whenUnsatisfiable");
        static const char *const actions[] = {"DoNotSchedule", "ScheduleAnyway"};
        if (!*wu) {
            fe_required(c, P("%s.whenUnsatisfiable", p), "can not be empty");
        } else if (strcmp(wu, actions[0]) && strcmp(wu, actions[1])) {
            fe_not_supported(c, P("%s.whenUnsatisfiable", p), fe_str(c, wu), actions, 2);
        }
        if (kt_field(k, "labelSelector")) {
            fe_forbidden(c, P("%s.labelSelector", p), "constraint must not define a selector, as they deduced for each pod");
        }
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(get_str(dc->items[j], "topologyKey"), tk) == 0 &&
                strcmp(get_str(dc->items[j], "whenUnsatisfiable"), wu) == 0) {
                fe_duplicate(c, p, fe_str(c, P("{%s, %s}", tk, wu)));
                break;
            }
        }
    }
}

/* ---- NodeResourcesBalancedAllocation ----------------------------------------- */

void va_balanced_allocation(cfg_ctx *c, const char *path, const ks_tree *args) {
    const ks_tree *res = get_list(args, "resources");
    for (uint32_t i = 0; res && i < res->n; i++) {
        const char *name = get_str(res->items[i], "name");
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(get_str(res->items[j], "name"), name) == 0) {
                fe_duplicate(c, P("%s.resources[%u].name", path, i), fe_str(c, name));
                break;
            }
        }
        int64_t w = get_int(res->items[i], "weight");
        if (w != 1) fe_invalid(c, P("%s.resources[%u].weight", path, i), fe_int(c, w), "must be 1");
    }
}

/* ---- VolumeBinding --------------------------------------------------------- */

void va_volume_binding(cfg_ctx *c, const char *path, const ks_tree *args) {
    int64_t t = get_int(args, "bindTimeoutSeconds");
    if (t < 0) {
        fe_invalid(c, P("%s.bindTimeoutSeconds", path), fe_int(c, t),
                   "invalid BindTimeoutSeconds, should not be a negative value");
    }
    /* StorageCapacityScoring is off in v1.34: any shape, even an empty one,
     * is refused (the canonical args drop an empty list, so look at the
     * file). */
    const ks_tree *shape = kt_field(args, "shape");
    const ks_tree *src = cfg_path_node(c, P("%s.shape", path));
    if (shape || (src && !kt_is_null(src))) {
        ks_tree tmp = {0};
        tmp.type = KT_SEQ;
        const ks_tree *s = shape ? shape : &tmp;
        /* the internal type has no json tags: {"Utilization":..,"Score":..} */
        ks_strbuf b;
        ks_sb_init(&b);
        ks_sb_putc(&b, '[');
        for (uint32_t i = 0; i < s->n; i++) {
            if (i) ks_sb_putc(&b, ',');
            ks_sb_printf(&b, "{\"Utilization\":%lld,\"Score\":%lld}", (long long)get_int(s->items[i], "utilization"),
                         (long long)get_int(s->items[i], "score"));
        }
        ks_sb_putc(&b, ']');
        fe_invalid(c, P("%s.shape", path), ks_arena_strdup(c->arena, ks_sb_str(&b)),
                   "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring");
        ks_sb_free(&b);
    }
}

/* ---- NodeAffinity ---------------------------------------------------------- */

/* Go renders a nil slice as null and an empty one as []; the canonical
 * args drop empty lists, so the file tells which one it was. */
static const char *strings_json(cfg_ctx *c, const ks_tree *vals, const ks_tree *src_vals) {
    if (!vals || vals->n == 0) return src_vals && src_vals->type == KT_SEQ ? "[]" : "null";
    return fe_json(c, vals);
}

/* strconv.ParseInt(v, 10, 64) succeeds */
static bool parses_as_int64(const char *v) {
    const char *d = v;
    bool neg = *d == '-';
    if (*d == '+' || *d == '-') d++;
    size_t n = strlen(d);
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        if (d[i] < '0' || d[i] > '9') return false;
    }
    while (n > 1 && *d == '0') {
        d++;
        n--;
    }
    if (n != 19) return n < 19;
    return strcmp(d, neg ? "9223372036854775808" : "9223372036854775807") <= 0;
}

/* labels.NewRequirement's checks for one node selector requirement. */
static void validate_label_requirement(cfg_ctx *c, const char *p, const char *key, const char *op,
                                       const ks_tree *vals, const ks_tree *src_vals) {
    const char *msgs[4];
    size_t n = is_qualified_name(key, msgs, c->arena);
    if (n) {
        ks_strbuf b;
        ks_sb_init(&b);
        for (size_t i = 0; i < n; i++) {
            if (i) ks_sb_puts(&b, "; ");
            ks_sb_puts(&b, msgs[i]);
        }
        fe_invalid(c, P("%s.key", p), fe_str(c, key), ks_arena_strdup(c->arena, ks_sb_str(&b)));
        ks_sb_free(&b);
    }
    const char *vp = P("%s.values", p);
    uint32_t nv = vals ? vals->n : 0;
    if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
        if (nv == 0) fe_invalid(c, vp, strings_json(c, vals, src_vals), "for 'in', 'notin' operators, values set can't be empty");
    } else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
        if (nv != 0) fe_invalid(c, vp, strings_json(c, vals, src_vals), "values set must be empty for exists and does not exist");
    } else {
        if (nv != 1) fe_invalid(c, vp, strings_json(c, vals, src_vals), "for 'Gt', 'Lt' operators, exactly one value is required");
        for (uint32_t i = 0; i < nv; i++) {
            const char *v = kt_as_str(vals->items[i]) ? kt_as_str(vals->items[i]) : "";
            bool ok = parses_as_int64(v);
            if (!ok) {
                fe_invalid(c, P("%s[%u]", vp, i), fe_str(c, v), "for 'Gt', 'Lt' operators, the value must be an integer");
            }
        }
    }
    for (uint32_t i = 0; i < nv; i++) {
        const char *v = kt_as_str(vals->items[i]) ? kt_as_str(vals->items[i]) : "";
        const char *vm[2];
        size_t k = is_valid_label_value(v, vm, c->arena);
        if (k) {
            ks_strbuf b;
            ks_sb_init(&b);
            for (size_t j = 0; j < k; j++) {
                if (j) ks_sb_puts(&b, "; ");
                ks_sb_puts(&b, vm[j]);
            }
            fe_invalid(c, P("%s[%u][%s]", vp, i, key), fe_str(c, v), ks_arena_strdup(c->arena, ks_sb_str(&b)));
            ks_sb_free(&b);
        }
    }
}

/* src_term: the same term in the file (NULL when not from the file). */
static void validate_selector_term(cfg_ctx *c, const ks_tree *term, const ks_tree *src_term, const char *path) {
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    const ks_tree *me = get_list(term, "matchExpressions");
    const ks_tree *src_me = get_list(src_term, "matchExpressions");
    for (uint32_t j = 0; me && j < me->n; j++) {
        const ks_tree *src_vals = src_me && j < src_me->n ? kt_get(src_me->items[j], "values") : NULL;
        const char *p = P("%s.matchExpressions[%u]", path, j);
        const char *op = get_str(me->items[j], "operator");
        bool known = false;
        for (int k = 0; k < 6; k++) known = known || strcmp(op, ops[k]) == 0;
        if (!known) {
            fe_not_supported(c, P("%s.operator", p), fe_str(c, op), ops, 6);
            continue;
        }
        validate_label_requirement(c, p, get_str(me->items[j], "key"), op, get_list(me->items[j], "values"),
                                   src_vals);
    }
    const ks_tree *mf = get_list(term, "matchFields");
    const ks_tree *src_mf = get_list(src_term, "matchFields");
    for (uint32_t j = 0; mf && j < mf->n; j++) {
        const ks_tree *src_vals = src_mf && j < src_mf->n ? kt_get(src_mf->items[j], "values") : NULL;
        const char *p = P("%s.matchFields[%u]", path, j);
        const char *op = get_str(mf->items[j], "operator");
        const ks_tree *vals = get_list(mf->items[j], "values");
        if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            if (!vals || vals->n != 1) fe_invalid(c, P("%s.values", p), strings_json(c, vals, src_vals), "must have one element");
        } else {
            fe_not_supported(c, P("%s.operator", p), fe_str(c, op), ops, 2);
        }
    }
}

static bool term_empty(const ks_tree *term) {
    const ks_tree *me = get_list(term, "matchExpressions"), *mf = get_list(term, "matchFields");
    return (!me || me->n == 0) && (!mf || mf->n == 0);
}

void va_node_affinity(cfg_ctx *c, const char *path, const ks_tree *args) {
    const ks_tree *aa = kt_field(args, "addedAffinity");
    if (!aa) return;
    const ks_tree *src_aa = kt_field(cfg_path_node(c, path), "addedAffinity");
    const ks_tree *req = kt_field(aa, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req) {
        const ks_tree *terms = get_list(req, "nodeSelectorTerms");
        const ks_tree *src_terms =
            get_list(kt_field(src_aa, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
        for (uint32_t i = 0; terms && i < terms->n; i++) {
            if (term_empty(terms->items[i])) continue;
            validate_selector_term(c, terms->items[i], src_terms && i < src_terms->n ? src_terms->items[i] : NULL,
                                   P("%s.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%u]",
                                     path, i));
        }
    }
    const ks_tree *pref = get_list(aa, "preferredDuringSchedulingIgnoredDuringExecution");
    const ks_tree *src_pref = get_list(src_aa, "preferredDuringSchedulingIgnoredDuringExecution");
    for (uint32_t i = 0; pref && i < pref->n; i++) {
        const ks_tree *t = pref->items[i];
        const ks_tree *pr = kt_field(t, "preference");
        if (get_int(t, "weight") == 0 || !pr || term_empty(pr)) continue;
        /* upstream's path has no ".preference" */
        const ks_tree *src_pr = src_pref && i < src_pref->n ? kt_field(src_pref->items[i], "preference") : NULL;
        validate_selector_term(c, pr, src_pr, P("%s.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[%u]", path, i));
    }
}

/* ---- DynamicResources ------------------------------------------------------- */

void va_dynamic_resources(cfg_ctx *c, const char *path, const ks_tree *args) {
    const char *ft = kt_as_str(kt_field(args, "filterTimeout"));
    if (!ft) return;
    if (!ks_feature_enabled(KS_FEAT_DRA_FILTER_TIMEOUT)) {
        /* upstream's text names the gate DRASchedulingFilterTimeout */
        fe_forbidden(c, P("%s.filterTimeout", path), "DRASchedulingFilterTimeout feature gate is disabled");
        return;
    }
    int64_t ns = 0;
    char *err = NULL;
    if (!go_parse_duration(ft, &ns, &err)) {
        free(err);
        return;
    }
    if (ns < 0) fe_invalid(c, P("%s.filterTimeout", path), fe_str(c, ft), "must be zero or positive");
}
