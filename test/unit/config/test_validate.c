/* Strict decoding and validation: exact messages, field paths and lines.
 * Validation messages are upstream's (validation.go and
 * validation_pluginargs.go, as kube-scheduler v1.34 prints them); decoding
 * messages are ours but name the same paths. */
#include "config/config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

/* All errors of loading yaml (and resolving it), one per line. */
static char *errors_of(const char *yaml) {
    ks_config_errors errs;
    ks_config_errors_init(&errs);
    ks_config *cfg = ks_config_load_buffer("c.yaml", yaml, strlen(yaml), &errs);
    if (cfg) {
        ks_config_resolve(cfg, NULL, NULL, &errs);
        ks_config_free(cfg);
    }
    size_t len = 1;
    for (uint32_t i = 0; i < errs.n; i++) len += strlen(errs.msgs[i]) + 1;
    char *out = calloc(1, len);
    for (uint32_t i = 0; i < errs.n; i++) {
        strcat(out, errs.msgs[i]);
        strcat(out, "\n");
    }
    ks_config_errors_free(&errs);
    return out;
}

static void expect(const char *yaml, const char *want) {
    char *got = errors_of(yaml);
    if (strcmp(got, want) != 0) fprintf(stderr, "--- want:\n%s--- got:\n%s", want, got);
    assert_string_equal(got, want);
    free(got);
}

/* ---- strict decoding ------------------------------------------------------ */

static void test_unknown_fields(void **state) {
    (void)state;
    expect(HDR "parallelizm: 8\n"
               "profiles:\n"
               "- schedulerName: a\n"
               "  pluginz:\n"
               "    score: {}\n"
               "  pluginConfig:\n"
               "  - name: DefaultPreemption\n"
               "    args:\n"
               "      minCandidateNodesPercent: 5\n"
               "  - name: NodeResourcesFit\n"
               "    args:\n"
               "      scoringStrategy:\n"
               "        typo: 1\n"
               "extenders:\n"
               "- urlPrefix: http://x\n"
               "  tlsConfig: {certdata: x}\n",
           "c.yaml:3: unknown field \"parallelizm\"\n"
           "c.yaml:6: unknown field \"profiles[0].pluginz\"\n"
           "c.yaml:18: unknown field \"extenders[0].tlsConfig.certdata\"\n"
           "c.yaml:11: unknown field \"profiles[0].pluginConfig[0].args.minCandidateNodesPercent\"\n"
           "c.yaml:15: unknown field \"profiles[0].pluginConfig[1].args.scoringStrategy.typo\"\n");
    /* field names are case-sensitive, as in Go's strict decoding */
    expect(HDR "Parallelism: 8\n", "c.yaml:3: unknown field \"Parallelism\"\n");
}

static void test_wrong_types(void **state) {
    (void)state;
    expect(HDR "parallelism: sixteen\n"
               "percentageOfNodesToScore: 1.5\n"
               "podMaxBackoffSeconds: 3000000000000\n"
               "leaderElection:\n"
               "  leaseDuration: 15\n"
               "  renewDeadline: 10 seconds\n"
               "  retryPeriod: 2x\n"
               "profiles:\n"
               "- schedulerName: 7\n"
               "  plugins:\n"
               "    score:\n"
               "      enabled: {name: x}\n"
               "extenders:\n"
               "- urlPrefix: http://x\n"
               "  weight: 1e400x\n"
               "  tlsConfig:\n"
               "    caData: 'abc'\n",
           "c.yaml:3: parallelism: cannot unmarshal string \"sixteen\" into Go value of type int32\n"
           "c.yaml:4: percentageOfNodesToScore: cannot unmarshal number 1.5 into Go value of type int32\n"
           "c.yaml:7: leaderElection.leaseDuration: cannot unmarshal number 15 into Go value of type string\n"
           "c.yaml:8: leaderElection.renewDeadline: time: unknown unit \" seconds\" in duration \"10 seconds\"\n"
           "c.yaml:9: leaderElection.retryPeriod: time: unknown unit \"x\" in duration \"2x\"\n"
           "c.yaml:11: profiles[0].schedulerName: cannot unmarshal number 7 into Go value of type string\n"
           "c.yaml:14: profiles[0].plugins.score.enabled: cannot unmarshal object into Go value of type []Plugin\n"
           "c.yaml:17: extenders[0].weight: cannot unmarshal string \"1e400x\" into Go value of type int64\n"
           "c.yaml:19: extenders[0].tlsConfig.caData: illegal base64 data at input byte 3\n");
    /* 2.0 is an integer, as YAML -> JSON makes it */
    expect(HDR "parallelism: 2.0\n", "");
}

static void test_type_meta(void **state) {
    (void)state;
    expect("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
           "c.yaml:1: apiVersion \"kubescheduler.config.k8s.io/v1beta3\" is not supported: only "
           "kubescheduler.config.k8s.io/v1 is (v1beta2 and v1beta3 were removed from kube-scheduler; convert the "
           "file to v1)\n");
    expect("apiVersion: v1\nkind: Pod\n", "c.yaml:1: apiVersion \"v1\" is not supported: want "
                                          "kubescheduler.config.k8s.io/v1\n"
                                          "c.yaml:2: kind \"Pod\" is not supported: want KubeSchedulerConfiguration\n");
    expect("kind: KubeSchedulerConfiguration\n",
           "c.yaml:1: apiVersion is missing: want apiVersion: kubescheduler.config.k8s.io/v1\n");
    expect("", "c.yaml: the file is empty: want a KubeSchedulerConfiguration (apiVersion: "
               "kubescheduler.config.k8s.io/v1)\n");
    expect("- a\n", "c.yaml:1: the document is not a mapping: want a KubeSchedulerConfiguration\n");
    /* JSON has no lines */
    expect("{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": \"KubeSchedulerConfiguration\", "
           "\"profiles\": [{\"pluginz\": 1}]}",
           "c.yaml: unknown field \"profiles[0].pluginz\"\n");
}

static void test_args_decoding(void **state) {
    (void)state;
    expect(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
               "      kind: InterPodAffinityArgs\n",
           "c.yaml:7: profiles[0].pluginConfig[0].args: args for plugin DefaultPreemption were not of type "
           "DefaultPreemptionArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io\n");
    expect(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
               "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
           "c.yaml:7: profiles[0].pluginConfig[0].args: decoding args for plugin DefaultPreemption: no kind "
           "\"DefaultPreemptionArgs\" is registered for version \"kubescheduler.config.k8s.io/v1beta3\"\n");
    expect(HDR "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: [1]\n",
           "c.yaml:6: profiles[0].pluginConfig[0].args: decoding args for plugin VolumeBinding: cannot unmarshal "
           "array into Go value of type VolumeBindingArgs\n");
    /* apiVersion and kind that match are accepted */
    expect(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
               "      apiVersion: kubescheduler.config.k8s.io/v1\n      kind: DefaultPreemptionArgs\n",
           "");
    /* nested core/v1 types are strict too */
    expect(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
               "      defaultingType: List\n      defaultConstraints:\n      - maxSkew: 1\n"
               "        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n        skew: 2\n",
           "c.yaml:12: unknown field \"profiles[0].pluginConfig[0].args.defaultConstraints[0].skew\"\n");
}

/* ---- validation ------------------------------------------------------------ */

static void test_top_level_validation(void **state) {
    (void)state;
    expect(HDR "parallelism: 0\npercentageOfNodesToScore: 101\npodInitialBackoffSeconds: 0\n"
               "podMaxBackoffSeconds: -1\nclientConnection:\n  burst: -1\n",
           "c.yaml:8: clientConnection.burst: Invalid value: -1: must be non-negative\n"
           "c.yaml:3: parallelism: Invalid value: 0: should be an integer value greater than zero\n"
           "c.yaml:4: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]\n"
           "c.yaml:5: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0\n"
           "c.yaml:6: podMaxBackoffSeconds: Invalid value: -1: must be greater than or equal to "
           "PodInitialBackoffSeconds\n");
    expect(HDR "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 6s\n  retryPeriod: -1s\n"
               "  resourceLock: endpoints\n",
           "c.yaml:6: leaderElection.retryPeriod: Invalid value: \"-1s\": must be greater than zero\n"
           "c.yaml:4: leaderElection.leaseDuration: Invalid value: \"6s\": must be greater than `RenewDeadline`\n"
           "c.yaml:7: leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value must be "
           "\"leases\"\n");
    /* without leader election those are not checked */
    expect(HDR "leaderElection:\n  leaderElect: false\n  leaseDuration: 5s\n  renewDeadline: 6s\n"
               "  resourceLock: endpoints\n",
           "");
}

static void test_profiles_validation(void **state) {
    (void)state;
    expect(HDR "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n- schedulerName: a\n"
               "- plugins: {}\n",
           "c.yaml:5: profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]\n"
           "c.yaml:6: profiles[1].schedulerName: Duplicate value: {}\n"
           "c.yaml:7: profiles[2].schedulerName: Required value\n");
    expect(HDR "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: DefaultPreemption\n"
               "  - name: Custom\n  - name: DefaultPreemption\n",
           "c.yaml:8: profiles[0].pluginConfig[2]: Duplicate value: \"DefaultPreemption\"\n");
    expect(HDR "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n"
               "      - name: PrioritySort\n      - name: Other\n"
               "- schedulerName: b\n  pluginConfig:\n  - name: PrioritySort\n    args: {x: 1}\n",
           "c.yaml:6: profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be "
           "enabled\n"
           "c.yaml:10: profiles[1].plugins.queueSort: Invalid value: {\"Enabled\":null,\"Disabled\":null}: must be "
           "the same for all profiles\n"
           "c.yaml:11: profiles[1].pluginConfig.args: Invalid value: {\"x\":1}: queueSort must be the same for all "
           "profiles\n");
    expect(HDR "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n      enabled:\n"
               "      - name: GCEPDLimits\n  pluginConfig:\n  - name: CinderLimits\n",
           "c.yaml:8: profiles[0].plugins.filter.enabled[0]: Invalid value: \"GCEPDLimits\": was invalid in version "
           "\"v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")\n"
           "c.yaml:10: profiles[0].pluginConfig[0]: Invalid value: \"CinderLimits\": was invalid in version \"v1\" "
           "(KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")\n");
}

static void test_extenders_validation(void **state) {
    (void)state;
    expect(HDR "extenders:\n"
               "- urlPrefix: http://a\n  prioritizeVerb: p\n  bindVerb: b\n"
               "  managedResources:\n  - name: cpu\n  - name: example.com/foo\n  - name: example.com/foo\n"
               "  - name: requests.example.com/x\n  - name: kubernetes.io/x\n"
               "- urlPrefix: http://b\n  bindVerb: b\n  managedResources:\n  - name: a/b/c\n  - name: /x\n",
           "c.yaml:4: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it\n"
           "c.yaml:8: extenders[0].managedResources[0].name: Invalid value: \"cpu\": is an invalid extended "
           "resource name\n"
           "c.yaml:10: extenders[0].managedResources[2].name: Invalid value: \"example.com/foo\": duplicate "
           "extender managed resource name\n"
           "c.yaml:11: extenders[0].managedResources[3].name: Invalid value: \"requests.example.com/x\": is an "
           "invalid extended resource name\n"
           "c.yaml:12: extenders[0].managedResources[4].name: Invalid value: \"kubernetes.io/x\": is an invalid "
           "extended resource name\n"
           "c.yaml:16: extenders[1].managedResources[0].name: Invalid value: \"a/b/c\": a qualified name must "
           "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
           "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
           "'example.com/MyName')\n"
           "c.yaml:17: extenders[1].managedResources[1].name: Invalid value: \"/x\": prefix part must be "
           "non-empty\n"
           "c.yaml:3: extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can "
           "implement bind\n");
}

static void test_args_validation(void **state) {
    (void)state;
    expect(HDR "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
               "      minCandidateNodesPercentage: 120\n      minCandidateNodesAbsolute: -1\n"
               "  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: -1}\n"
               "  - name: VolumeBinding\n    args:\n      bindTimeoutSeconds: -5\n      shape: []\n"
               "  - name: DynamicResources\n    args: {filterTimeout: -1ms}\n"
               "  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n"
               "      - {name: cpu, weight: 3}\n      - {name: cpu}\n",
           "c.yaml:7: profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 120: not in "
           "valid range [0, 100]\n"
           "c.yaml:8: profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid "
           "range [0, inf)\n"
           "c.yaml:10: profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: -1: not in valid "
           "range [0, 100]\n"
           "c.yaml:13: profiles[0].pluginConfig[2].args.bindTimeoutSeconds: Invalid value: -5: invalid "
           "BindTimeoutSeconds, should not be a negative value\n"
           "c.yaml:14: profiles[0].pluginConfig[2].args.shape: Invalid value: []: unexpected field `shape`, remove "
           "it or turn on the feature gate StorageCapacityScoring\n"
           "c.yaml:16: profiles[0].pluginConfig[3].args.filterTimeout: Invalid value: \"-1ms\": must be zero or "
           "positive\n"
           "c.yaml:20: profiles[0].pluginConfig[4].args.resources[0].weight: Invalid value: 3: must be 1\n"
           "c.yaml:21: profiles[0].pluginConfig[4].args.resources[1].name: Duplicate value: \"cpu\"\n");
}

static void test_topology_spread_args(void **state) {
    (void)state;
    expect(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
               "      defaultingType: System\n      defaultConstraints:\n"
               "      - maxSkew: 0\n        topologyKey: ''\n        whenUnsatisfiable: Sometimes\n"
               "        labelSelector: {matchLabels: {app: web}}\n"
               "      - maxSkew: 1\n        topologyKey: 'a b'\n"
               "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
               "      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
               "  - name: Other\n",
           "c.yaml:7: profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when "
           ".defaultConstraints are not empty\n"
           "c.yaml:9: profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in "
           "valid range (0, inf)\n"
           "c.yaml:10: profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey: Required value: can not "
           "be empty\n"
           "c.yaml:11: profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported "
           "value: \"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"\n"
           "c.yaml:12: profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: constraint "
           "must not define a selector, as they deduced for each pod\n"
           "c.yaml:14: profiles[0].pluginConfig[0].args.defaultConstraints[1].topologyKey: Invalid value: \"a b\": "
           "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
           "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n"
           "c.yaml:13: profiles[0].pluginConfig[0].args.defaultConstraints[1].whenUnsatisfiable: Required value: "
           "can not be empty\n"
           "c.yaml:16: profiles[0].pluginConfig[0].args.defaultConstraints[3]: Duplicate value: \"{zone, "
           "DoNotSchedule}\"\n");
    expect(HDR "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: Some}\n",
           "c.yaml:6: profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: \"Some\": supported "
           "values: \"System\", \"List\"\n");
}

static void test_node_affinity_args(void **state) {
    (void)state;
    expect(HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
               "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
               "          - matchExpressions:\n"
               "            - {key: 'node pool', operator: In}\n"
               "            - {key: cpus, operator: Gt, values: ['8', x]}\n"
               "            - {key: zone, operator: Near}\n"
               "            - {key: zone, operator: In, values: ['bad value']}\n"
               "            matchFields:\n"
               "            - {key: metadata.name, operator: Exists}\n"
               "          - {}\n"
               "        preferredDuringSchedulingIgnoredDuringExecution:\n"
               "        - weight: 5\n          preference:\n            matchExpressions:\n"
               "            - {key: disk, operator: DoesNotExist, values: [ssd]}\n"
               "        - weight: 0\n          preference:\n            matchExpressions:\n"
               "            - {key: ignored, operator: Bad}\n",
           "c.yaml:11: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: \"node pool\": name part must consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
           "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n"
           "c.yaml:11: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: null: for 'in', 'notin' operators, "
           "values set can't be empty\n"
           "c.yaml:12: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[1].values: Invalid value: [\"8\",\"x\"]: for 'Gt', 'Lt' "
           "operators, exactly one value is required\n"
           "c.yaml:12: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[1].values[1]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
           "the value must be an integer\n"
           "c.yaml:13: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[2].operator: Unsupported value: \"Near\": supported values: "
           "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"\n"
           "c.yaml:14: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[3].values[0][zone]: Invalid value: \"bad value\": a valid label "
           "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
           "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
           "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')\n"
           "c.yaml:16: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", "
           "\"NotIn\"\n"
           "c.yaml:19: profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
           "[0].matchExpressions[0].values: Invalid value: [\"ssd\"]: values set must be empty for exists and does "
           "not exist\n");
}

/* An empty list and a missing one render as Go renders [] and nil. */
static void test_selector_values_rendering(void **state) {
    (void)state;
    expect(HDR "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
               "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
               "          - matchFields:\n            - {key: metadata.name, operator: In, values: []}\n"
               "            - {key: metadata.name, operator: In}\n",
           "c.yaml:11: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchFields[0].values: Invalid value: []: must have one element\n"
           "c.yaml:12: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchFields[1].values: Invalid value: null: must have one element\n");
}

/* NodeResourcesFit args are checked when the plugin is used (upstream
 * checks them when it creates the plugin). */
static void test_fit_args(void **state) {
    (void)state;
    expect(HDR "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
               "      ignoredResources: ['a b']\n      ignoredResourceGroups: [example.com/x]\n"
               "      scoringStrategy:\n        type: Balanced\n        resources:\n        - {name: cpu, weight: 101}\n"
               "- schedulerName: b\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
               "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
               "- schedulerName: c\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
               "      scoringStrategy:\n        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
               "          shape:\n          - {utilization: 60, score: 11}\n          - {utilization: 50, score: 2}\n",
           "c.yaml:8: profiles[0].pluginConfig[0].args.ignoredResources[0]: Invalid value: \"a b\": name part must "
           "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
           "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n"
           "c.yaml:9: profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: \"example.com/x\": "
           "resource group name can't contain '/'\n"
           "c.yaml:11: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Balanced\": "
           "supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"\n"
           "c.yaml:13: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: "
           "resource weight of cpu not in valid range (0, 100]\n"
           "c.yaml:18: profiles[1].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: "
           "the shape is needed for type RequestedToCapacityRatio\n"
           "c.yaml:24: profiles[2].pluginConfig[0].args.scoringStrategy.shape[1].utilization: Invalid value: 50: "
           "values must be sorted in increasing order\n"
           "c.yaml:24: profiles[2].pluginConfig[0].args.scoringStrategy.shape[0].score: Invalid value: 11: not in "
           "valid range [0, 10]\n");
    /* a profile that does not use NodeResourcesFit never creates it */
    expect(HDR "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n"
               "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: Nope}\n",
           "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_fields),       cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_type_meta),            cmocka_unit_test(test_args_decoding),
        cmocka_unit_test(test_top_level_validation), cmocka_unit_test(test_profiles_validation),
        cmocka_unit_test(test_extenders_validation), cmocka_unit_test(test_args_validation),
        cmocka_unit_test(test_topology_spread_args), cmocka_unit_test(test_node_affinity_args),
        cmocka_unit_test(test_fit_args),           cmocka_unit_test(test_selector_values_rendering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
