# pgolf build. `make` builds ./pgolf; see README.md for the other targets.
#
# Determinism: no -ffast-math / -Ofast / -march=native, and floating-point
# contraction is off, so the CPU path gives the same bits on any x86-64.

CC      ?= cc
BUILD   ?= build/release
CFLAGS_BASE = -std=c11 -Wall -Wextra -Werror -O2 -g -ffp-contract=off -fno-strict-aliasing \
              -D_GNU_SOURCE -fopenmp -I. -I$(BUILD)
CFLAGS  ?=
EXTRA_CFLAGS ?=
LDLIBS  = -fopenmp -lcrypto -ljansson -lz -llzma -lpthread -lm

# Sources: every .c in the parts is library code; common/pgolf.c is main.
PARTS   = common formats kernels manifests trainer verifier
LIB_SRC = $(filter-out common/pgolf.c,$(foreach p,$(PARTS),$(wildcard $(p)/*.c)))
HDRS    = $(foreach p,$(PARTS),$(wildcard $(p)/*.h))
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ = $(BUILD)/obj/common/pgolf.o
TEST_SRC = $(wildcard tests/test_*.c)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)

# CUDA: compiled in when nvcc exists and there are kernels; never required.
NVCC   ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CU_SRC  = $(wildcard kernels/*.cu)
ifneq ($(and $(NVCC),$(CU_SRC)),)
  CU_OBJ = $(CU_SRC:%.cu=$(BUILD)/obj/%.cu.o)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CFLAGS_BASE += -DPGOLF_HAVE_CUDA -I$(CUDA_HOME)/include
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart -lstdc++
endif

ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(EXTRA_CFLAGS)

.PHONY: all build test run-tests demo sanitize fuzz fuzz-smoke bench clean deps
# Plain `make` first checks (as root: installs) the build's Debian packages,
# as `make test` and `make demo` do.
all:
	@sh ci/deps.sh build
	@$(MAKE) --no-print-directory pgolf

# The release binary lives at the repository root.
pgolf: $(BUILD)/pgolf
	@if [ "$(BUILD)" = build/release ]; then cp $< $@; fi

$(BUILD)/pgolf: $(MAIN_OBJ) $(BUILD)/libpgolf.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libpgolf.a: $(LIB_OBJ) $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Header dependencies as the compiler saw them (-MMD), with an empty rule
# per header (-MP) so a removed header does not break the build.
DEPFLAGS = -MMD -MP
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/%.cu.o: %.cu $(HDRS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -I. -c -o $@ $<

$(BUILD)/obj/common/version.o: $(BUILD)/build_gen/source_digest.h

# Code identity: a digest of every source file, recomputed when one changes.
SOURCES_FOR_DIGEST = $(sort $(LIB_SRC) common/pgolf.c $(HDRS) $(CU_SRC) Makefile)
$(BUILD)/build_gen/source_digest.h: $(SOURCES_FOR_DIGEST)
	@mkdir -p $(dir $@)
	@d=$$(sha256sum $(SOURCES_FOR_DIGEST) | sha256sum | cut -c1-64); \
	  printf '#define PGOLF_SOURCE_DIGEST "%s"\n' "$$d" > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%: tests/%.c $(BUILD)/libpgolf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -MF $@.d -o $@ $< $(BUILD)/libpgolf.a -lcmocka $(LDLIBS)

build: pgolf $(TEST_BIN)

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_BIN:=.d)

# `make test` and `make demo` first check (as root: install) their Debian packages.
test:
	@sh ci/deps.sh test
	@$(MAKE) --no-print-directory run-tests

run-tests: build
	@sh tests/run.sh $(BUILD)

demo:
	@sh ci/deps.sh demo
	@$(MAKE) --no-print-directory pgolf
	@sh ci/demo.sh

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
sanitize:
	@sh ci/deps.sh test
	@$(MAKE) --no-print-directory BUILD=build/sanitize EXTRA_CFLAGS="$(SAN_FLAGS)" \
	  build/sanitize/pgolf $(TEST_SRC:tests/%.c=build/sanitize/tests/%)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  sh tests/run.sh build/sanitize

# libFuzzer targets, one per parser of outside input (clang only).
FUZZ_FLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -O1 -g
fuzz:
	@sh ci/deps.sh fuzz
	@$(MAKE) --no-print-directory CC=clang BUILD=build/fuzz EXTRA_CFLAGS="$(FUZZ_FLAGS)" \
	  build/fuzz/libpgolf.a $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libpgolf.a
	clang $(CFLAGS_BASE) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -O1 -g \
	  -o $@ $< build/fuzz/libpgolf.a $(LDLIBS)

FUZZ_SECONDS ?= 10
fuzz-smoke: fuzz
	@sh ci/fuzz-smoke.sh $(FUZZ_SECONDS) $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

# Every ci/bench*.sh, each printing ratios against a baseline it measures
# in the same run.
bench:
	@sh ci/deps.sh test
	@$(MAKE) --no-print-directory pgolf
	@for b in ci/bench*.sh; do echo "== $$b"; sh "$$b" || exit 1; done

clean:
	rm -rf build pgolf
