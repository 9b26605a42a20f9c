# ksched build. GNU Make; see docs/building.md.
#
#   make            build ksched, libksched.{a,so}, example plugins (release)
#   make demo       install missing deps, build, simulate the demo cluster
#   make test       install missing deps, build release, ASan/UBSan and TSan, run every test
#   make tsan       the threaded tests only, under ThreadSanitizer
#   make bench      scheduler_perf-style benchmarks (see bench/)
#   make bench-api  the same through a real kube-apiserver + etcd, next to kube-scheduler
#   make coverage   line and branch coverage by the unit and scenario tests
#   make fuzz       libFuzzer targets with clang (build/fuzz/fuzz_*)
#   make fuzz-run SECONDS=N   run each fuzz target for N seconds
#   make install PREFIX=/usr/local

CC      ?= gcc
FUZZ_CC ?= clang
PREFIX  ?= /usr/local
PKGS    := yaml-0.1 jansson libpcre2-8 libcurl openssl libnghttp2 libevent_openssl libevent_pthreads libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl, OpenSSL, nghttp2 and libevent are loaded at run time when first
# needed (src/util/curl_lazy.c, src/util/openssl_lazy.c,
# src/util/nghttp2_lazy.c, src/server/evhttp_lazy.c), so only their headers
# are used here; libmicrohttpd, nghttp2 and OpenSSL are linked into the
# tests' fake servers.
PKG_LIBS   := $(shell pkg-config --libs yaml-0.1 jansson libpcre2-8 2>/dev/null)
LIBS    := $(PKG_LIBS) -lz -lpthread -ldl -lm
TEST_LIBS  := $(shell pkg-config --libs libmicrohttpd libnghttp2 openssl 2>/dev/null) -lcmocka

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC $(WARN) -Isrc -Iinclude $(PKG_CFLAGS)

# Build flavours share the source list: release, asan (ASan+UBSan, debug
# checks such as the NodeInfo immutability check enabled), tsan
# (ThreadSanitizer), fuzz and debug.
MODE ?= release
ifeq ($(MODE),asan)
  # float-cast-overflow: part of clang's "undefined", not of gcc's
  OPT := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
         -fno-sanitize-recover=undefined,float-cast-overflow -DKS_DEBUG=1
  LDOPT := -fsanitize=address,undefined,float-cast-overflow
else ifeq ($(MODE),fuzz)
  # libFuzzer (clang only): the library instrumented for coverage, ASan
  # and UBSan; the targets link the fuzzer's main (see docs/fuzzing.md).
  CC := $(FUZZ_CC)
  OPT := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
         -fno-sanitize-recover=undefined -DKS_DEBUG=1 -DKS_FUZZING=1
  LDOPT := -fsanitize=address,undefined
else ifeq ($(MODE),tsan)
  # ThreadSanitizer, for the tests that run threads (make tsan).
  OPT := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
  LDOPT := -fsanitize=thread
else ifeq ($(MODE),debug)
  OPT := -O0 -g -DKS_DEBUG=1
  LDOPT :=
else ifeq ($(MODE),coverage)
  # gcov counters for make coverage (scripts/coverage.sh); -O0 so that
  # lines and branches are the source's; atomic counters, as tests run
  # threads (racing updates leave negative counts gcov cannot read).
  OPT := -O0 -g --coverage -fprofile-update=atomic
  LDOPT := --coverage
else
  OPT := -O2 -g
  LDOPT :=
endif
CFLAGS ?=
CFLAGS += $(BASE_CFLAGS) $(OPT)
B := build/$(MODE)

# Everything but main() is in libksched, so that a custom scheduler binary
# can link it and call ks_main() (see examples/plugins/embed).
LIB_SRCS  := $(shell find src -name '*.c' -not -path 'src/cmd/main.c' | sort)
CMD_SRCS  := $(wildcard src/cmd/main.c)
# Unit tests mirror src/: test/unit/<dir>/test_<file>.c tests
# src/<dir>/<file>.c and builds to $(B)/test/unit/<dir>/test_<file>
# (docs/building.md, "Tests").
TEST_SRCS := $(shell find test/unit -name 'test_*.c' | sort)
TEST_UTIL := $(wildcard test/unit/testutil*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/obj/%.o) $(B)/obj/gen/report_assets.o
CMD_OBJS  := $(CMD_SRCS:%.c=$(B)/obj/%.o)
TEST_BINS := $(TEST_SRCS:%.c=$(B)/%)
TEST_UTIL_OBJS := $(TEST_UTIL:%.c=$(B)/obj/%.o)
# Tests of plugins (in-tree and examples) and of the loader get the whole
# library exported to the plugins they load, as the ksched binary does.
TEST_DLOPEN := $(filter $(B)/test/unit/plugins/% $(B)/test/unit/examples/% $(B)/test/unit/framework/test_loader \
                        $(B)/test/unit/config/test_args,$(TEST_BINS))
# The tests that run threads, built and run under ThreadSanitizer too
# (every test that starts one: strace -f -e clone over the test binaries).
TSAN_TESTS := util/test_cpuprof util/test_taskpool scheduler/test_scheduler backend/test_api_dispatcher framework/test_parallelize \
              scheduler/test_scheduler_churn backend/test_listers metrics/test_metrics server/test_server \
              server/test_ops scheduler/test_extender framework/test_runtime \
              backend/test_queue metrics/test_sched_metrics \
              plugins/helper/test_topocount plugins/test_scenario_topology \
              plugins/defaultpreemption/test_default_preemption plugins/dynamicresources/test_dynamic_resources \
              plugins/nodevolumelimits/test_node_volume_limits plugins/test_scenario_nodes \
              plugins/volumebinding/test_volume_binding plugins/volumerestrictions/test_volume_restrictions \
              plugins/volumezone/test_volume_zone cmd/test_run_cmd cmd/test_shadow_cmd sim/test_two_schedulers \
              $(patsubst test/unit/%.c,%,$(wildcard test/unit/kube/test_*.c))
# Fuzz targets: test/fuzz/fuzz_<name>.c. Built with libFuzzer in MODE=fuzz,
# elsewhere with test/fuzz/driver.c, a main() that replays files (make
# test runs the asan ones over the corpora: test/sh/fuzz_regress.sh).
FUZZ_SRCS := $(wildcard test/fuzz/fuzz_*.c)
FUZZ_DIR  := $(if $(filter fuzz,$(MODE)),$(B),$(B)/fuzz)
FUZZ_BINS := $(FUZZ_SRCS:test/fuzz/%.c=$(FUZZ_DIR)/%)
# Example plugins: examples/plugins/<name>/<name>.c -> $(B)/plugins/<name>.so
# (one directory, so that --plugin-dir $(B)/plugins loads them all).
PLUGIN_NAMES := $(filter-out embed,$(notdir $(patsubst %/,%,$(dir $(wildcard examples/plugins/*/*.c)))))
PLUGIN_SOS  := $(foreach p,$(PLUGIN_NAMES),$(B)/plugins/$(p).so)

.PHONY: all build deps demo test test-bins tsan tsan-bins test-reference test-e2e test-upstream-e2e bench bench-quick bench-bin bench-api \
        install clean fuzz fuzz-bins fuzz-run coverage
all: build
build: $(B)/ksched $(B)/libksched.a $(B)/libksched.so $(PLUGIN_SOS) $(B)/examples/embed-scheduler

deps:
	@scripts/deps.sh

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The HTML report's stylesheet and renderer (src/sim/html/) are plain
# .css/.js files, compiled into the library as strings (docs/report.md).
REPORT_ASSETS := src/sim/html/page.css src/sim/html/page.js
$(B)/gen/report_assets.c: $(REPORT_ASSETS) scripts/embed_text.sh
	@mkdir -p $(dir $@)
	scripts/embed_text.sh ks_report_page_css src/sim/html/page.css ks_report_page_js src/sim/html/page.js >$@.tmp
	@mv $@.tmp $@

$(B)/obj/gen/report_assets.o: $(B)/gen/report_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libksched.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/libksched.so: $(LIB_OBJS)
	$(CC) -shared $(LDOPT) -o $@ $^ $(LIBS)

# -rdynamic: out-of-tree plugins resolve the ks_* API from the executable.
$(B)/ksched: $(CMD_OBJS) $(B)/libksched.a
	$(CC) $(LDOPT) -rdynamic -o $@ $(CMD_OBJS) -Wl,--whole-archive $(B)/libksched.a -Wl,--no-whole-archive $(LIBS)

# examples/plugins/embed: a custom scheduler binary with a plugin compiled
# in, linking libksched as an installed program would (public headers
# only); -rdynamic so that it can still load .so plugins.
$(B)/examples/embed-scheduler: examples/plugins/embed/main.c include/ksched/ksched.h $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Iinclude $(OPT) $(LDOPT) -rdynamic -o $@ $< \
	    -Wl,--whole-archive $(B)/libksched.a -Wl,--no-whole-archive $(LIBS)

# Plugins see only the public headers, as out-of-tree ones do.
define plugin_rule
$(B)/plugins/$(1).so: examples/plugins/$(1)/$(1).c include/ksched/ksched.h
	@mkdir -p $$(dir $$@)
	$$(CC) -std=c11 -fPIC -shared $$(WARN) -Iinclude $$(OPT) $$(LDOPT) -o $$@ $$<
endef
$(foreach p,$(PLUGIN_NAMES),$(eval $(call plugin_rule,$(p))))

# Test plugins (loader error paths, a C++ plugin): built like out-of-tree
# ones, against the public header only.
TEST_PLUGIN_SOS := $(patsubst test/fixtures/plugins/%.c,$(B)/test/plugins/%.so,$(wildcard test/fixtures/plugins/*.c)) \
                   $(patsubst test/fixtures/plugins/%.cpp,$(B)/test/plugins/%.so,$(wildcard test/fixtures/plugins/*.cpp))
CXX ?= g++

$(B)/test/plugins/%.so: test/fixtures/plugins/%.c include/ksched/ksched.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -fPIC -shared $(WARN) -Iinclude $(OPT) $(LDOPT) -o $@ $<

$(B)/test/plugins/%.so: test/fixtures/plugins/%.cpp include/ksched/ksched.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -pedantic -fPIC -shared $(WARN:-Wstrict-prototypes=) -Iinclude $(OPT) $(LDOPT) -o $@ $<

$(TEST_DLOPEN): $(B)/test/unit/%: test/unit/%.c $(TEST_UTIL_OBJS) $(B)/libksched.a $(PLUGIN_SOS) $(TEST_PLUGIN_SOS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit -DKS_BUILD_DIR='"$(B)"' $(LDOPT) -rdynamic -o $@ $< $(TEST_UTIL_OBJS) \
	    -Wl,--whole-archive $(B)/libksched.a -Wl,--no-whole-archive $(LIBS) $(TEST_LIBS)

$(filter-out $(TEST_DLOPEN),$(TEST_BINS)): $(B)/test/unit/%: test/unit/%.c $(TEST_UTIL_OBJS) $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/unit $(LDOPT) -o $@ $< $(TEST_UTIL_OBJS) $(B)/libksched.a $(LIBS) $(TEST_LIBS)

demo: deps
	@$(MAKE) --no-print-directory build
	./$(B)/ksched simulate examples/clusters/demo

# make test: every flavour, every suite, one summary line at the end.
test: deps
	@$(MAKE) --no-print-directory MODE=release build test-bins
	@$(MAKE) --no-print-directory MODE=asan build test-bins
	@$(MAKE) --no-print-directory MODE=tsan tsan-bins
	@test/run.sh

# make tsan: the threaded tests under ThreadSanitizer only.
tsan: deps
	@$(MAKE) --no-print-directory MODE=tsan tsan-bins
	@KS_TEST_MODES=tsan KS_TEST_UNIT_ONLY=1 test/run.sh

tsan-bins: $(TSAN_TESTS:%=$(B)/test/unit/%)

# The test plugins are named here so that make builds them as ordinary
# targets (as intermediates of the test_plugin_% rule they were not found).
test-bins: $(TEST_PLUGIN_SOS) $(TEST_BINS) $(FUZZ_BINS) $(B)/bench/gpu_study

ifeq ($(MODE),fuzz)
$(FUZZ_DIR)/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/fuzz.h $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/fuzz -fsanitize=fuzzer $(LDOPT) -o $@ $< $(B)/libksched.a $(LIBS)
else
$(FUZZ_DIR)/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/driver.c test/fuzz/fuzz.h $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest/fuzz $(LDOPT) -o $@ $< test/fuzz/driver.c $(B)/libksched.a $(LIBS)
endif
fuzz-bins: $(FUZZ_BINS)

# clang and libFuzzer come from Debian (scripts/deps.sh fuzz); make test
# does not need them.
fuzz:
	@scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory MODE=fuzz fuzz-bins

# Each target for SECONDS (default 60), nice'd, one at a time; new inputs
# go to build/fuzz/corpus/<target>, crashes to build/fuzz/artifacts.
SECONDS ?= 60
fuzz-run: fuzz
	@test/fuzz/run.sh --seconds $(SECONDS) $(TARGETS)

# Line and branch coverage of src/ by the unit and scenario tests, per
# folder and in total (gcovr from Debian: scripts/deps.sh coverage).
coverage: deps
	@scripts/deps.sh coverage
	@$(MAKE) --no-print-directory MODE=coverage build test-bins
	@scripts/coverage.sh

test-reference: deps
	@$(MAKE) --no-print-directory MODE=release build
	@test/reference/run.sh --ksched $(CURDIR)/build/release/ksched $(if $(SEEDS),--seeds $(SEEDS))

# End-to-end suite on a real kube-apiserver + etcd (test/e2e; needs Go).
test-e2e: deps
	@$(MAKE) --no-print-directory MODE=release build
	@test/sh/e2e.sh

# Upstream's [sig-scheduling] e2e tests (e2e.test v1.34.1) on KWOK nodes,
# with ksched and with kube-scheduler (test/e2e/upstream.py,
# docs/upstream-e2e.md). E2E_ARGS: e.g. --quick, --focus REGEX, --jobs 2.
test-upstream-e2e: deps
	@$(MAKE) --no-print-directory MODE=release build
	@test/e2e/build.sh upstream
	@python3 test/e2e/upstream.py --ksched build/release/ksched $(E2E_ARGS)

# Benchmarks (not tests): bench/ksched_bench next to upstream's scheduler
# (test/reference, kschedref --bench); see bench/README.md.
$(B)/bench/ksched_bench: bench/ksched_bench.c $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDOPT) -o $@ $< $(B)/libksched.a $(LIBS)

# The churn benchmark: memory of a long-running scheduler (bench/churn.c).
$(B)/bench/ksched_churn: bench/churn.c $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDOPT) -o $@ $< $(B)/libksched.a $(LIBS)

# The GPU-sharing study (bench/gpu-study, docs/gpu-sharing.md): loads the
# GpuShare plugin, so the library is exported to it as by ksched.
$(B)/bench/gpu_study: bench/gpu_study.c $(B)/libksched.a $(B)/plugins/GpuShare.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDOPT) -rdynamic -o $@ $< -Wl,--whole-archive $(B)/libksched.a -Wl,--no-whole-archive $(LIBS)

# One object's update through the listers (bench/listers_bench.c).
$(B)/bench/ksched_listers: bench/listers_bench.c $(B)/libksched.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDOPT) -o $@ $< $(B)/libksched.a $(LIBS)

bench-bin: $(B)/bench/ksched_bench $(B)/bench/ksched_churn $(B)/bench/gpu_study $(B)/bench/ksched_listers

bench: deps
	@$(MAKE) -s --no-print-directory MODE=release build bench-bin
	@bench/run.sh --nodes 5000

# Through a real kube-apiserver and etcd: ksched run, kube-scheduler and
# the API server's ceiling (bench/api.py).
bench-api: deps
	@bench/run.sh --api

bench-quick: deps
	@$(MAKE) -s --no-print-directory MODE=release build bench-bin
	@bench/run.sh --nodes 500 --quick

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/ksched \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(B)/ksched $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/libksched.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libksched.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/ksched/*.h $(DESTDIR)$(PREFIX)/include/ksched/
	install -d $(DESTDIR)$(PREFIX)/lib/ksched/plugins
	$(if $(PLUGIN_SOS),install -m 755 $(PLUGIN_SOS) $(DESTDIR)$(PREFIX)/lib/ksched/plugins/)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBS@|$(LIBS)|g' scripts/ksched.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ksched.pc

clean:
	rm -rf build

# Test helpers too: a header change must rebuild them with the library.
-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(TEST_UTIL_OBJS:.o=.d)
