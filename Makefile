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
LDLIBS  = -fopenmp -lcrypto -ljansson -lz -llzma -lbrotlidec -lpthread -ldl -lm

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
# The device flags are pinned, because the GPU must reproduce the CPU
# twins' bits: sm_90 (H100), no fused multiply-add (--fmad=false, as gcc's
# -ffp-contract=off), IEEE division and square root, denormals kept, no fast
# math. The runtime is linked statically, so ./pgolf runs (and refuses
# cleanly, exit 2) on a machine without the CUDA toolkit or a driver.
NVCC   ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CU_SRC  = $(foreach p,$(PARTS),$(wildcard $(p)/*.cu))
NVCC_FLAGS = -std=c++17 -O3 -arch=sm_90 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
             -Werror all-warnings -Xcompiler -Wall,-Wextra -D_GNU_SOURCE -DPGOLF_HAVE_CUDA -I.
ifneq ($(and $(NVCC),$(CU_SRC)),)
  CU_OBJ = $(CU_SRC:%.cu=$(BUILD)/obj/%.cu.o)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CFLAGS_BASE += -DPGOLF_HAVE_CUDA -I$(CUDA_HOME)/include
  # cuBLASLt is opened at first use (kernels/matmul.cu), not linked; the
  # rpath is where that dlopen looks first.
  LDLIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
endif

# MPI: compiled in when Open MPI's development files are there (pkg-config
# ompi-c; Debian's libopenmpi-dev), never required. The binary initialises
# MPI only when mpirun started it (trainer/comm.h).
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null)
ifneq ($(MPI_LIBS),)
  CFLAGS_BASE += -DPGOLF_HAVE_MPI $(MPI_CFLAGS)
  LDLIBS += $(MPI_LIBS)
endif

ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(EXTRA_CFLAGS)

.PHONY: all build test run-tests demo sanitize fuzz fuzz-smoke bench clean deps print-nvcc-flags
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
# per header (-MP) so a removed header does not break the build. Objects
# also depend on this Makefile: a change of flags rebuilds them.
DEPFLAGS = -MMD -MP
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/%.cu.o: %.cu Makefile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/common/version.o: $(BUILD)/build_gen/source_digest.h

# Code identity: a digest of every source file, recomputed when one changes.
SOURCES_FOR_DIGEST = $(sort $(LIB_SRC) common/pgolf.c $(HDRS) $(CU_SRC) Makefile)
$(BUILD)/build_gen/source_digest.h: $(SOURCES_FOR_DIGEST)
	@mkdir -p $(dir $@)
	@d=$$(sha256sum $(SOURCES_FOR_DIGEST) | sha256sum | cut -c1-64); \
	  { printf '#define PGOLF_SOURCE_DIGEST "%s"\n' "$$d"; \
	    printf '#define PGOLF_SOURCE_PARTS "%s"\n' "$(PARTS)"; } > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%: tests/%.c $(BUILD)/libpgolf.a Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -MF $@.d -o $@ $< $(BUILD)/libpgolf.a -lcmocka -lbrotlienc $(LDLIBS)

# A stand-in NVML for the attestation tests (tests/fake_nvml.c), built
# without the sanitizers: it is dlopen'ed the way the real library is.
FAKE_NVML = $(BUILD)/tests/libfake_nvml.so
$(FAKE_NVML): tests/fake_nvml.c Makefile
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -fPIC -shared -Wall -Wextra -Werror -o $@ $<

build: pgolf $(TEST_BIN) $(FAKE_NVML)

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_BIN:=.d) $(CU_OBJ:.o=.d)

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

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer,
# but for the e2e files that check the sources rather than a build
# ("# suite: sources", run by make test; tests/run.sh). PGOLF_TEST_SAMPLED=1:
# the few tests whose exhaustive sweeps or 20 training steps take minutes
# under the sanitizers run a sample of their cases (tests/test_util.h);
# make test runs them whole.
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
sanitize:
	@sh ci/deps.sh test
	@$(MAKE) --no-print-directory BUILD=build/sanitize EXTRA_CFLAGS="$(SAN_FLAGS)" \
	  build/sanitize/pgolf $(TEST_SRC:tests/%.c=build/sanitize/tests/%) build/sanitize/tests/libfake_nvml.so
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  PGOLF_SOURCES_CHECKED=1 PGOLF_TEST_SAMPLED=1 sh tests/run.sh build/sanitize

# libFuzzer targets, one per parser of outside input (clang only). The
# parsers are host code and never call the GPU, so the library is built
# without the CUDA objects (NVCC=): no nvcc time, no CUDA runtime to link.
FUZZ_FLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -O1 -g
fuzz:
	@sh ci/deps.sh fuzz
	@$(MAKE) --no-print-directory CC=clang NVCC= BUILD=build/fuzz EXTRA_CFLAGS="$(FUZZ_FLAGS)" \
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

# The pinned device flags, for the static checks (ci/cuda-static.sh).
print-nvcc-flags:
	@echo $(NVCC_FLAGS)
