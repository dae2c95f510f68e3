# vramtrace — one non-recursive GNU Makefile (see `make help`).
# preload/ -> build/libvramtrace.so (LD_PRELOAD capture), analyzer/ -> build/vramtrace (CLI),
# tests/fakecuda/ -> a fake CUDA runtime + driver, tests/ -> cmocka unit tests + integration.

CC        ?= cc
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

WARN      := -Wall -Wextra -Wshadow -Wno-missing-field-initializers
BASEFLAGS := -std=gnu11 -pthread -D_GNU_SOURCE -Iinclude $(DEPS_CPPFLAGS) $(WARN) -MMD -MP
PICFLAGS  := -fPIC -fvisibility=hidden -ftls-model=initial-exec

# --- sources --------------------------------------------------------------------------
PRELOAD_SRC   := $(sort $(wildcard preload/*.c))
PRELOAD_HOOKS := $(filter preload/hook_%.c,$(PRELOAD_SRC))
PRELOAD_CORE  := $(filter-out $(PRELOAD_HOOKS),$(PRELOAD_SRC))
ANALYZER_SRC  := $(sort $(wildcard analyzer/*.c))
ANALYZER_LIB  := $(filter-out analyzer/main.c,$(ANALYZER_SRC))
FAKERT_SRC    := $(sort $(wildcard tests/fakecuda/cudart*.c))
FAKEDRV_SRC   := $(sort $(wildcard tests/fakecuda/driver*.c))
UNIT_SRC      := $(sort $(wildcard tests/unit/test_*.c))
PROG_SRC      := $(sort $(wildcard tests/prog/*.c))
EXAMPLE_SRC   := $(sort $(wildcard examples/sim/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

PRELOAD_SO   := $(BUILD)/libvramtrace.so
PRELOAD_A    := $(BUILD)/libvtcore.a
ANALYZER_A   := $(BUILD)/libvtanalyzer.a
VRAMTRACE    := $(BUILD)/vramtrace
FAKE_DIR     := $(BUILD)/fakecuda
FAKE_RT      := $(FAKE_DIR)/libcudart.so.13
FAKE_DRV     := $(FAKE_DIR)/libcuda.so.1
UNIT_BINS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
PROG_BINS    := $(patsubst tests/prog/%.c,$(BUILD)/tests/prog/%,$(PROG_SRC))
EXAMPLE_LIBS := $(patsubst examples/sim/%.c,$(BUILD)/examples/%.so,$(filter examples/sim/lib%.c,$(EXAMPLE_SRC)))
EXAMPLE_BINS := $(patsubst examples/sim/%.c,$(BUILD)/examples/%,$(filter-out examples/sim/lib%.c,$(EXAMPLE_SRC))) $(EXAMPLE_LIBS)

PRELOAD_LIBS  := -ldl -lunwind -lpthread
ANALYZER_LIBS := -lcjson -ldw -lelf -lm -lstdc++
TEST_LIBS     := -lcmocka $(ANALYZER_LIBS) $(PRELOAD_LIBS)

.PHONY: all test check demo demo-gpu bench install uninstall clean help deps fake progs format wheel
all: $(VRAMTRACE) $(PRELOAD_SO)

help:
	@echo 'vramtrace make targets:'
	@echo '  all        build build/vramtrace and build/libvramtrace.so (default)'
	@echo '  test       build everything and run unit + integration tests (no GPU needed)'
	@echo '  check      test, then the unit tests again under ASan+UBSan'
	@echo '  demo       simulated GPT-2 124M OOM on a 12 GiB card, diagnosed and fixed (no GPU)'
	@echo '  demo-gpu   the same with examples/gpt on a real GPU with PyTorch'
	@echo '  bench      capture cost, trace size, analyzer throughput (build/bench.json)'
	@echo '  install    install to $$(DESTDIR)$$(PREFIX) (bin/vramtrace, lib/vramtrace/)'
	@echo '  uninstall  remove what install put there'
	@echo '  wheel      a pip wheel in $$(BUILD)/dist/ (bin/vramtrace + lib/vramtrace/ + python -m vramtrace)'
	@echo '  clean      remove build/'
	@echo 'variables: CC CFLAGS LDFLAGS PREFIX DESTDIR DEPS_PREFIX=DIR V=1'

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
	$(Q)$(CC) $(BASEFLAGS) $(PICFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/fakecuda/%.o: tests/fakecuda/%.c | $(DEPS_STAMP)
	$(E) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -fPIC $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	$(E) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) $(CFLAGS) -c $< -o $@

# --- products -------------------------------------------------------------------------
$(PRELOAD_SO): $(call obj,$(PRELOAD_SRC))
	$(E) LD $@
	$(Q)$(CC) -shared -Wl,-z,nodelete -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(PRELOAD_LIBS)

$(PRELOAD_A): $(call obj,$(PRELOAD_CORE))
	$(E) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(ANALYZER_A): $(call obj,$(ANALYZER_LIB))
	$(E) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(VRAMTRACE): $(call obj,analyzer/main.c) $(ANALYZER_A)
	$(E) LD $@
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(ANALYZER_LIBS)

$(FAKE_DRV): $(call obj,$(FAKEDRV_SRC)) tests/fakecuda/libcuda.map
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script,tests/fakecuda/libcuda.map \
	  -Wl,-Bsymbolic -o $@ $(filter %.o,$^) $(LDFLAGS) -lpthread
	$(Q)ln -sf libcuda.so.1 $(FAKE_DIR)/libcuda.so

# The fake runtime finds libcuda.so.1 beside itself (rpath $$ORIGIN), versions its symbols
# libcudart.so.13 like the real one, and never links libcuda (it dlopens it). Both fakes bind
# their internal calls locally (-Bsymbolic), so a preload sees only the caller's own calls.
$(FAKE_RT): $(call obj,$(FAKERT_SRC)) tests/fakecuda/cudart.map | $(FAKE_DRV)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script,tests/fakecuda/cudart.map \
	  -Wl,-rpath,'$$ORIGIN' -Wl,-Bsymbolic -o $@ $(filter %.o,$^) $(LDFLAGS) -ldl -lpthread
	$(Q)ln -sf libcudart.so.13 $(FAKE_DIR)/libcudart.so

fake: $(FAKE_RT) $(FAKE_DRV)

$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(ANALYZER_A) $(PRELOAD_A)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -o $@ $^ $(LDFLAGS) $(DEPS_LDFLAGS) $(TEST_LIBS)

# Integration programs link the fake runtime (DT_NEEDED libcudart.so.13, rpath to it), like
# PyTorch links the real one; they also get -ldl for the programs that dlopen libcuda.
$(BUILD)/tests/prog/%: $(call obj,tests/prog/%.c) $(FAKE_RT)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -rdynamic -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) -Wl,-rpath,'$$ORIGIN/../../fakecuda' -lcudart -ldl

$(BUILD)/examples/%: $(call obj,examples/sim/%.c) $(FAKE_RT)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -pthread -rdynamic -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) -Wl,-rpath,'$$ORIGIN/../fakecuda' -lcudart -ldl -lm

progs: $(PROG_BINS) $(EXAMPLE_BINS)
# examples/sim/lib*.c: shared helpers the simulation loads with ctypes (fake cudart, rpath).
$(BUILD)/examples/lib%.so: examples/sim/lib%.c $(FAKE_RT)
	$(E) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASEFLAGS) -fPIC -fvisibility=hidden $(CFLAGS) -shared -o $@ $< $(LDFLAGS) -L$(FAKE_DIR) -Wl,-rpath,'$$ORIGIN/../fakecuda' -lcudart -lpthread


# --- test / check / demo / bench --------------------------------------------------------
test: all fake $(UNIT_BINS) $(PROG_BINS) $(EXAMPLE_BINS)
	$(Q)BUILD=$(BUILD) sh tests/run.sh $(UNIT_BINS)

check: test
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan \
	  CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer' \
	  LDFLAGS='-fsanitize=address,undefined' \
	  $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(UNIT_BINS)) $(BUILD)/asan/vramtrace
	$(Q)BUILD=$(BUILD)/asan UNIT_ONLY=1 sh tests/run.sh $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(UNIT_BINS))

demo: all fake $(EXAMPLE_BINS)
	$(Q)BUILD=$(BUILD) sh scripts/demo.sh

demo-gpu: all
	$(Q)BUILD=$(BUILD) sh scripts/demo-gpu.sh

bench: all fake $(PROG_BINS) $(EXAMPLE_BINS)
	$(Q)BUILD=$(BUILD) sh scripts/bench.sh

# --- install --------------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/vramtrace
	install -m 0755 $(VRAMTRACE) $(DESTDIR)$(PREFIX)/bin/vramtrace
	install -m 0755 $(PRELOAD_SO) $(DESTDIR)$(PREFIX)/lib/vramtrace/libvramtrace.so

# The wheel is packed by the in-tree PEP 517 backend that `pip install .` uses (pyproject.toml).
PYTHON ?= python3
wheel: all
	$(Q)BUILD=$(BUILD) $(PYTHON) -c 'import sys; sys.path.insert(0, "python/backend"); \
	  import vramtrace_build as b; print("  WHEEL  $(BUILD)/dist/" + b.build_wheel(sys.argv[1]))' $(BUILD)/dist

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vramtrace $(DESTDIR)$(PREFIX)/lib/vramtrace/libvramtrace.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/vramtrace

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $(wildcard include/vramtrace/*.h preload/*.[ch] analyzer/*.[ch] tests/*/*.[ch] examples/*/*.c)

.SECONDARY:

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
