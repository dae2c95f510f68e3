# vramtrace — one non-recursive GNU Makefile (see `make help`).
# preload/ -> build/libvramtrace.so (LD_PRELOAD capture), analyzer/ -> build/vramtrace (CLI),
# tests/fakecuda/ -> a fake CUDA runtime + driver, tests/ -> cmocka unit tests + integration.

CC        ?= cc
CXX       ?= c++
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
V         ?= 0
CFLAGS    ?= -O2 -g
LDFLAGS   ?=
# DEPS_PREFIX=DIR: build against libunwind / cJSON / cmocka unpacked into DIR (dpkg -x),
# with an rpath to it, for machines without a package registry (see README).
DEPS_PREFIX ?=

Q := $(if $(filter 1,$(V)),,@)
E := $(if $(filter 1,$(V)),@true,@printf '  %-6s %s\n')

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ifneq ($(DEPS_PREFIX),)
DEPS_CPPFLAGS := -I$(DEPS_PREFIX)/include -I$(DEPS_PREFIX)/include/$(MULTIARCH)
DEPS_LIBDIRS  := $(DEPS_PREFIX)/lib/$(MULTIARCH) $(DEPS_PREFIX)/lib
DEPS_LDFLAGS  := $(foreach d,$(DEPS_LIBDIRS),-L$(d) -Wl,-rpath,$(d))
DEPS_STAMP    :=
else
DEPS_STAMP    := $(BUILD)/.deps-ok
endif

# analyzer/ layers, lowest first (docs/architecture.md); model/ is four layers of its own (facts
# measured from the trace -> recognition -> formula -> advice). A file's include path holds its
# own layer and the ones below, so an include from a higher layer does not compile.
ANALYZER_LAYERS := trace model/facts model/recognize model/formula model/advice report views cmd
layers_upto = $(if $(filter $(1),$(firstword $(2))),$(1),$(firstword $(2)) $(call layers_upto,$(1),$(wordlist 2,99,$(2))))
ANALYZER_INC    := $(foreach l,$(ANALYZER_LAYERS),-Ianalyzer/$(l))
$(foreach l,$(ANALYZER_LAYERS),$(eval $(BUILD)/obj/analyzer/$(l)/%.o: LAYER_INC := $(foreach u,$(call layers_upto,$(l),$(ANALYZER_LAYERS)),-Ianalyzer/$(u))))
$(BUILD)/obj/tests/unit/%.o: LAYER_INC := $(ANALYZER_INC)
$(BUILD)/obj/tests/bench/%.o: LAYER_INC := -Ianalyzer/trace -Ianalyzer/model/facts
$(BUILD)/obj/tests/bench/capture_threads.o: LAYER_INC := -Ipreload
WARN      := -Wall -Wextra -Wshadow -Wno-missing-field-initializers
BASEFLAGS := -std=gnu11 -pthread -D_GNU_SOURCE -Iinclude $(DEPS_CPPFLAGS) $(WARN) -MMD -MP
PICFLAGS  := -fPIC -fvisibility=hidden -ftls-model=initial-exec

# --- sources --------------------------------------------------------------------------
# preload/: hooks/ (exported shims) -> core/ (admission, records, devices, config) and
# stacks/ (native + Python) -> writer*.c; torch/ attaches to PyTorch's allocator tracker.
# libvtcore.a = everything but the hooks (unit tests).
# Preload files include "core/x.h" (the include path is preload/).
PRELOAD_INC   := -Ipreload
PRELOAD_SRC   := $(sort $(shell find preload -name '*.c'))
# preload/torch/bridge.cpp: the one C++ file (builds a std::function; needs no libstdc++.so)
PRELOAD_CXX   := $(sort $(shell find preload -name '*.cpp'))
PRELOAD_HOOKS := $(sort $(wildcard preload/hooks/*.c))
PRELOAD_CORE  := $(filter-out $(PRELOAD_HOOKS),$(PRELOAD_SRC))
ANALYZER_SRC  := $(sort $(shell find analyzer -name '*.c'))
ANALYZER_LIB  := $(filter-out analyzer/cmd/main.c,$(ANALYZER_SRC))
FAKERT_SRC    := $(sort $(wildcard tests/fakecuda/cudart*.c))
FAKEDRV_SRC   := $(sort $(wildcard tests/fakecuda/driver*.c))
UNIT_SRC      := $(sort $(wildcard tests/unit/test_*.c))
PROG_SRC      := $(sort $(wildcard tests/prog/*.c))
BENCH_SRC     := $(sort $(wildcard tests/bench/*.c))
EXAMPLE_SRC   := $(sort $(wildcard examples/sim/*.c))

obj = $(patsubst %.cpp,$(BUILD)/obj/%.o,$(patsubst %.c,$(BUILD)/obj/%.o,$(1)))

PRELOAD_SO   := $(BUILD)/libvramtrace.so
PRELOAD_A    := $(BUILD)/libvtcore.a
ANALYZER_A   := $(BUILD)/libvtanalyzer.a
VRAMTRACE    := $(BUILD)/vramtrace
FAKE_DIR     := $(BUILD)/fakecuda
FAKE_RT      := $(FAKE_DIR)/libcudart.so.13
FAKE_DRV     := $(FAKE_DIR)/libcuda.so.1
UNIT_BINS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
PROG_BINS    := $(patsubst tests/prog/%.c,$(BUILD)/tests/prog/%,$(PROG_SRC))
BENCH_BINS   := $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRC))
EXAMPLE_LIBS := $(patsubst examples/sim/%.c,$(BUILD)/examples/%.so,$(filter examples/sim/lib%.c,$(EXAMPLE_SRC)))
EXAMPLE_BINS := $(patsubst examples/sim/%.c,$(BUILD)/examples/%,$(filter-out examples/sim/lib%.c,$(EXAMPLE_SRC))) $(EXAMPLE_LIBS)

PRELOAD_LIBS  := -ldl -lunwind -lzstd -lpthread
# the analyzer's allocations go through analyzer/trace/mem.c, which remembers a failed one
# (mem.h: a command then exits 2 "out of memory" rather than answer without it)
MEM_WRAP      := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=strdup,--wrap=strndup
# libdw is loaded when first needed (symbolize.c); libstdc++'s archive gives the demangler
# alone: the analyzer starts without loading either (0.75 ms of CPU less for every command);
# libzstd from its archive too (a shared object less to load: ~0.4 ms; libm's archive cannot
# go into a PIE, and Debian's cJSON has none)
ANALYZER_LIBS := -lcjson -lm -ldl -Wl,-Bstatic -lzstd -lstdc++ -Wl,-Bdynamic $(MEM_WRAP)
TEST_LIBS     := -lcmocka $(ANALYZER_LIBS) $(PRELOAD_LIBS)

.PHONY: all test test-build mutate check demo demo-gpu bench install uninstall clean help deps fake progs format format-check fuzz fuzz-build wheel
all: $(VRAMTRACE) $(PRELOAD_SO)

help:
	@echo 'vramtrace make targets:'
	@echo '  all        build build/vramtrace and build/libvramtrace.so (default)'
	@echo '  progs      the test and example programs (build/tests/prog/, build/examples/)'
	@echo '  fake       the fake CUDA runtime and driver the tests and the demo run on (build/fakecuda/)'
	@echo '  test       build everything and run unit + integration tests (no GPU needed)'
	@echo '  check      test, then the unit tests again under ASan+UBSan'
	@echo '  mutate     each bug of tests/mutations.txt in a scratch copy must fail a test (slow)'
	@echo '  demo       simulated GPT-2 124M OOM on a 12 GiB card, diagnosed and fixed (no GPU)'
	@echo '  demo-gpu   the same with examples/gpt on a real GPU with PyTorch'
	@echo '  bench      capture cost, trace size, analyzer throughput (build/bench.json)'
	@echo '  fuzz       libFuzzer (clang, ASan+UBSan) on the trace report path and the config'
	@echo '             evaluator, FUZZ_SECONDS per target (default 60)'
	@echo '  install    install to $$(DESTDIR)$$(PREFIX) (bin/vramtrace, lib/vramtrace/)'
	@echo '  uninstall  remove what install put there'
	@echo '  wheel      a pip wheel in $$(BUILD)/dist/ (bin/vramtrace + lib/vramtrace/ + python -m vramtrace)'
	@echo '  clean      remove build/'
	@echo 'variables: CC CFLAGS LDFLAGS PREFIX DESTDIR BUILD=DIR DEPS_PREFIX=DIR V=1'
	@echo '           VRAMTRACE_NO_INSTALL=1 (list missing packages, install nothing)'

# --- dependencies (installed from Debian packages when missing) ------------------------
$(BUILD)/.deps-ok: scripts/install-deps.sh
	$(Q)mkdir -p $(@D)
	$(Q)sh scripts/install-deps.sh
	$(Q)touch $@
deps: $(DEPS_STAMP)

# --- compile rules --------------------------------------------------------------------
$(BUILD)/obj/preload/%.o: preload/%.c | $(DEPS_STAMP)
	$(E) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(PRELOAD_INC) $(PICFLAGS) $(CFLAGS) -c $< -o $@

CXXFLAGS_BRIDGE := -std=c++17 -Iinclude -Wall -Wextra -MMD -MP -fno-exceptions -fno-rtti
$(BUILD)/obj/preload/%.o: preload/%.cpp | $(DEPS_STAMP)
	$(E) CXX $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CXXFLAGS_BRIDGE) $(PICFLAGS) $(filter-out -std=%,$(CFLAGS)) -c $< -o $@

$(BUILD)/obj/tests/fakecuda/%.o: tests/fakecuda/%.c | $(DEPS_STAMP)
	$(E) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -fPIC $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	$(E) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(LAYER_INC) $(CFLAGS) -c $< -o $@

# --- products -------------------------------------------------------------------------
$(PRELOAD_SO): $(call obj,$(PRELOAD_SRC) $(PRELOAD_CXX))
	$(E) LD $@
	$(Q)$(CC) -shared -Wl,-z,nodelete -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(PRELOAD_LIBS)

$(PRELOAD_A): $(call obj,$(PRELOAD_CORE) $(PRELOAD_CXX))
	$(E) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(ANALYZER_A): $(call obj,$(ANALYZER_LIB))
	$(E) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(VRAMTRACE): $(call obj,analyzer/cmd/main.c) $(ANALYZER_A)
	$(E) LD $@
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(ANALYZER_LIBS)

$(FAKE_DRV): $(call obj,$(FAKEDRV_SRC)) tests/fakecuda/libcuda.map
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script,tests/fakecuda/libcuda.map \
	  -Wl,-Bsymbolic -o $@ $(filter %.o,$^) $(LDFLAGS) -lpthread
	$(Q)ln -sf libcuda.so.1 $(FAKE_DIR)/libcuda.so

# Everything linked against the fake CUDA carries DT_RPATH (--disable-new-dtags), searched
# before LD_LIBRARY_PATH, so another libcudart / libcuda on the user's LD_LIBRARY_PATH (a GPU
# machine's /usr/local/cuda/lib64) never replaces it; the fake runtime dlopens the fake driver
# beside itself by path.
FAKE_RPATH := -Wl,--disable-new-dtags

# The fake runtime finds libcuda.so.1 beside itself (by path, then rpath $$ORIGIN), versions its symbols
# libcudart.so.13 like the real one, and never links libcuda (it dlopens it). Both fakes bind
# their internal calls locally (-Bsymbolic), so a preload sees only the caller's own calls.
$(FAKE_RT): $(call obj,$(FAKERT_SRC)) tests/fakecuda/cudart.map Makefile | $(FAKE_DRV)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script,tests/fakecuda/cudart.map \
	  $(FAKE_RPATH) -Wl,-rpath,'$$ORIGIN' -Wl,-Bsymbolic -o $@ $(filter %.o,$^) $(LDFLAGS) -ldl -lpthread
	$(Q)ln -sf libcudart.so.13 $(FAKE_DIR)/libcudart.so

# A fake libc10_cuda.so per TraceEntry layout (tests/fakecuda/c10/): cda = 2.10/2.11+ namespace,
# cca = 2.1-2.9 namespace, odd = a namespace no release has (the tracker must refuse it),
# noinit = cda without an initialized() method.
FAKE_C10_VARIANTS := cda cca odd noinit
FAKE_C10 := $(foreach v,$(FAKE_C10_VARIANTS),$(FAKE_DIR)/c10/$(v)/libc10_cuda.so)
$(FAKE_DIR)/c10/%/libc10_cuda.so: tests/fakecuda/c10/fake_c10.cpp $(wildcard tests/fakecuda/c10/*.h) $(FAKE_RT) Makefile
	$(E) CXX $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O1 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -DFAKE_C10_LAYOUT_$* \
	  -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) $(FAKE_RPATH) -Wl,-rpath,'$$ORIGIN/../..' -lcudart -lpthread

fake: $(FAKE_RT) $(FAKE_DRV) $(FAKE_C10)

# mem.o linked whole: the wrapped allocation calls of both archives need it (ANALYZER_LIBS)
$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(call obj,analyzer/trace/mem.c) $(ANALYZER_A) $(PRELOAD_A)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(TEST_LIBS)

# test_writer_seal: writer.c built again with VT_WRITER_TEST_HOOKS (a record's call between its
# load of the current window and its hold of it), linked before libvtcore.a, whose writer.o is
# then not pulled in; no other binary has the hook
$(BUILD)/obj/tests/hooked/writer.o: preload/writer.c | $(DEPS_STAMP)
	$(E) CC $< "(VT_WRITER_TEST_HOOKS)"
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(PRELOAD_INC) $(PICFLAGS) $(CFLAGS) -DVT_WRITER_TEST_HOOKS -c $< -o $@
$(BUILD)/tests/test_writer_seal: $(call obj,tests/unit/test_writer_seal.c) $(BUILD)/obj/tests/hooked/writer.o $(call obj,analyzer/trace/mem.c) $(ANALYZER_A) $(PRELOAD_A)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(TEST_LIBS)

# make bench's own programs (tests/bench/): the analyzer's reader and nothing else of it
$(BUILD)/tests/bench/%: $(call obj,tests/bench/%.c) $(ANALYZER_A)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(ANALYZER_LIBS)

# capture_threads: the preload's recording path alone (libvtcore.a), no CUDA runtime under it
$(BUILD)/tests/bench/capture_threads: $(call obj,tests/bench/capture_threads.c) $(PRELOAD_A)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(PRELOAD_LIBS)

# Integration programs link the fake runtime (DT_NEEDED libcudart.so.13, rpath to it), like
# PyTorch links the real one; they also get -ldl for the programs that dlopen libcuda.
$(BUILD)/tests/prog/%: $(call obj,tests/prog/%.c) $(FAKE_RT) Makefile
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -rdynamic -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) $(FAKE_RPATH) -Wl,-rpath,'$$ORIGIN/../../fakecuda' -lcudart -ldl

$(BUILD)/examples/%: $(call obj,examples/sim/%.c) $(FAKE_RT) Makefile
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -rdynamic -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) $(FAKE_RPATH) -Wl,-rpath,'$$ORIGIN/../fakecuda' -lcudart -ldl -lm

# tests/fault/failmalloc.c: an LD_PRELOAD library that fails the Nth allocation of a program
FAILMALLOC := $(BUILD)/tests/libfailmalloc.so
$(FAILMALLOC): tests/fault/failmalloc.c Makefile
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -fPIC $(CFLAGS) -shared -o $@ $< $(LDFLAGS) -ldl

# (the simulation loads the fake libc10_cuda.so: the quick start's `make progs` builds it)
progs: $(PROG_BINS) $(EXAMPLE_BINS) $(FAKE_C10)
# examples/sim/lib*.c: shared helpers the simulation loads with ctypes (fake cudart, rpath).
$(BUILD)/examples/lib%.so: examples/sim/lib%.c $(FAKE_RT) Makefile
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -fPIC -fvisibility=hidden $(CFLAGS) -shared -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) $(FAKE_RPATH) -Wl,-rpath,'$$ORIGIN/../fakecuda' -lcudart -ldl -lpthread


# --- test / check / demo / bench --------------------------------------------------------
# test-build: everything the tests run (what `make mutate` rebuilds after each mutation)
test-build: all fake $(FAKE_C10) $(UNIT_BINS) $(PROG_BINS) $(EXAMPLE_BINS) $(FAILMALLOC)

# `make test` builds with a job per processor unless its command line chose (-j): on 2 cores the
# build and the fuzz targets take ~100 s instead of ~190 (recursive: MAKEFLAGS holds -j only
# while a recipe runs); tests/run.sh runs the tests as many at a time (TEST_JOBS)
NPROC          := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
TEST_JOBS_FLAG = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
test:
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS_FLAG) BUILD=$(BUILD) test-build
	$(Q)if [ -n "$(FUZZ_OK)" ]; then $(MAKE) --no-print-directory $(TEST_JOBS_FLAG) BUILD=$(BUILD) fuzz-build; \
	  else echo "  (no clang with libFuzzer: the fuzz round is skipped)"; fi
	$(Q)$(if $(DEPS_PREFIX),true,sh scripts/install-deps.sh --test) || \
	  echo "  (a test tool is missing: its test is skipped, saying why)"
	$(Q)BUILD=$(BUILD) sh tests/run.sh $(UNIT_BINS)

# (intercept_tls_get_addr=0: LeakSanitizer's tracer can die on libdw's thread-local data with
# the sanitizer runtimes of GCC <= 13 and LLVM <= 16; tests/fuzz/sanopts.c says how)
check: test
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan \
	  CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer' \
	  LDFLAGS='-fsanitize=address,undefined' \
	  $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(UNIT_BINS)) $(BUILD)/asan/vramtrace
	$(Q)ASAN_OPTIONS="intercept_tls_get_addr=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}" \
	  BUILD=$(BUILD)/asan UNIT_ONLY=1 sh tests/run.sh $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(UNIT_BINS))

# mutate: one-line bugs put into a scratch copy, one at a time; each must fail a test
# (scripts/mutate.sh, tests/mutations.txt; not part of `make test`: ~30 s an entry on 2 cores,
# ~8 hours for the whole list)
# (MUTATE_IDS="id ..." runs only those entries)
mutate:
	$(Q)sh scripts/mutate.sh $(MUTATE_IDS)

demo: all fake $(EXAMPLE_BINS)
	$(Q)BUILD=$(BUILD) sh scripts/demo.sh

demo-gpu: all
	$(Q)BUILD=$(BUILD) sh scripts/demo-gpu.sh

bench: all fake $(PROG_BINS) $(EXAMPLE_BINS) $(BENCH_BINS)
	$(Q)BUILD=$(BUILD) sh scripts/bench.sh

# --- fuzzing (clang's libFuzzer with ASan + UBSan; see tests/fuzz/run.sh) ---------------
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
# two checks recover so that tests/fuzz/known.supp can set aside an open finding while the
# fuzzing goes on (tests/fuzz/run.sh halts on every other report: UBSAN_OPTIONS=halt_on_error=1)
FUZZ_FLAGS   := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  -fsanitize-recover=pointer-overflow,nonnull-attribute -fno-omit-frame-pointer
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_OBJ     := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(ANALYZER_LIB))

# the analyzer's layer include paths, as in the plain build; the targets see every layer
$(foreach l,$(ANALYZER_LAYERS),$(eval $(FUZZ_DIR)/obj/analyzer/$(l)/%.o: LAYER_INC := $(foreach u,$(call layers_upto,$(l),$(ANALYZER_LAYERS)),-Ianalyzer/$(u))))
$(FUZZ_DIR)/obj/tests/fuzz/%.o: LAYER_INC := $(ANALYZER_INC)
$(FUZZ_DIR)/obj/%.o: %.c | $(DEPS_STAMP)
	$(E) FUZZCC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(BASEFLAGS) $(LAYER_INC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# the trace targets share harness.c (input file, quiet commands, the structure-aware mutator
# vtmutate.c); fuzz_config keeps libFuzzer's own mutation
FUZZ_HARNESS := $(patsubst %,$(FUZZ_DIR)/obj/tests/fuzz/%.o,harness vtmutate vtmutate_rec)
# sanopts.c: the sanitizer options of every target (why: the file's comment)
FUZZ_SANOPTS := $(FUZZ_DIR)/obj/tests/fuzz/sanopts.o
$(FUZZ_DIR)/fuzz_config: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_config.o $(FUZZ_SANOPTS) $(FUZZ_OBJ)
	$(E) LD $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(DEPS_LDFLAGS) $(ANALYZER_LIBS)

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_HARNESS) $(FUZZ_SANOPTS) $(FUZZ_OBJ)
	$(E) LD $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(DEPS_LDFLAGS) $(ANALYZER_LIBS)

# FUZZ_OK: clang links a libFuzzer target here (asked only by the recipes that need it)
FUZZ_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' | \
  $(FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1 && echo yes)

fuzz-build: $(FUZZ_TARGETS)
fuzz: fuzz-build
	$(Q)BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh $(FUZZ_TARGETS)

# --- install --------------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/vramtrace
	install -m 0755 $(VRAMTRACE) $(DESTDIR)$(PREFIX)/bin/vramtrace
	install -m 0755 $(PRELOAD_SO) $(DESTDIR)$(PREFIX)/lib/vramtrace/libvramtrace.so
	install -d $(DESTDIR)$(PREFIX)/share/doc/vramtrace/docs
	install -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/vramtrace/README.md
	install -m 0644 docs/* $(DESTDIR)$(PREFIX)/share/doc/vramtrace/docs/

# The wheel is packed by the in-tree PEP 517 backend that `pip install .` uses (pyproject.toml).
PYTHON ?= python3
wheel: all
	$(Q)BUILD=$(BUILD) $(PYTHON) -c 'import sys; sys.path.insert(0, "python/backend"); \
	  import vramtrace_build as b; print("  WHEEL  $(BUILD)/dist/" + b.build_wheel(sys.argv[1]))' $(BUILD)/dist

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vramtrace $(DESTDIR)$(PREFIX)/lib/vramtrace/libvramtrace.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/vramtrace
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/vramtrace

clean:
	rm -rf $(BUILD)

FORMAT_FILES = $(wildcard include/vramtrace/*.h $(shell find preload analyzer -name "*.[ch]") tests/*/*.[ch] examples/*/*.c)

format:
	clang-format -i $(FORMAT_FILES)

# format-check: what `make format` would change, as errors (tests/integration/format_check.sh)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

.SECONDARY:

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
