# tvmcc: ONNX to C ahead-of-time compiler. Hand-written; GNU make.
#
#   make          build ./tvmcc
#   make demo     build, compile a generated model, build and run its C
#   make test     unit, golden, bad-input, conformance (host + Cortex-M4) tests
#
# Dependencies are checked (and installed when run as root) by scripts/deps.sh.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wno-unused-parameter
DEFS    := -D_POSIX_C_SOURCE=200809L
INCS    := -Ibuild/gen -I/usr/include/cjson
LIBS    := -lprotobuf-c -lcjson -lm
PROTO   ?= /usr/include/onnx/onnx.proto
PYTHON  ?= /usr/bin/python3

SRCS    := $(wildcard ir/*.c frontend/*.c passes/*.c quant/*.c lower/*.c emit_c/*.c pipeline/*.c cmd/*.c)
OBJS    := $(patsubst %.c,build/%.o,$(SRCS)) build/gen/onnx.pb-c.o build/gen/embedded.o
LIBOBJS := $(filter-out build/cmd/%,$(OBJS))
EMBED   := runtime_min/tvmrt.h runtime_min/tvmrt.c $(sort $(wildcard targets/*.json)) \
           verify/verify_driver.c test/model_io.h test/arm/startup.c test/arm/mps2-an386.ld \
           test/arm/mps2-an500.ld bench/arm/m4est/m4est.c bench/arm/m4est/qemu_api.h

.PHONY: all deps demo test test-unit test-conformance test-arm bench clean
all: tvmcc build/tensortool build/unit build/sched_test build/sched_arm_test build/qconv_test build/equalize_test build/ranges_test

deps:
	@scripts/deps.sh build

build/.deps-ok: scripts/deps.sh
	@scripts/deps.sh build
	@mkdir -p build && touch $@

# On a fresh machine the system's onnx.proto is missing until deps.sh has
# installed libonnx-dev: this rule makes that happen before make would give
# up on a missing prerequisite (as another user, deps.sh prints the install
# command and stops the build).
$(PROTO):
	@scripts/deps.sh build
	@test -f $@ || { echo "make: $@ is still missing after scripts/deps.sh build (set PROTO=path/to/onnx.proto)" >&2; exit 1; }

build/gen/onnx.pb-c.c build/gen/onnx.pb-c.h &: $(PROTO) build/.deps-ok
	@mkdir -p build/gen
	protoc-c --c_out=build/gen -I$(dir $(PROTO)) $(PROTO)

build/gen/onnx.pb-c.o: build/gen/onnx.pb-c.c
	$(CC) $(CFLAGS) -std=c99 $(INCS) -c $< -o $@

# The runtime and target descriptions are embedded into the binary so that
# tvmcc works from any directory.
build/embedtool: scripts/embedtool.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $< -o $@

build/gen/embedded.c: build/embedtool $(EMBED)
	@mkdir -p build/gen
	build/embedtool $(EMBED) > $@

build/gen/embedded.o: build/gen/embedded.c
	$(CC) $(CFLAGS) -std=c99 -c $< -o $@

build/%.o: %.c build/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) -MMD -MP -c $< -o $@

-include $(OBJS:.o=.d)

tvmcc: $(OBJS)
	$(CC) $(CFLAGS) $(OBJS) $(LIBS) -o $@

build/tensortool: test/tools/tensortool.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

build/unit: test/unit/unit.c runtime_min/tvmrt.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< runtime_min/tvmrt.c $(LIBOBJS) $(LIBS) -o $@

build/sched_test: test/unit/sched_test.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

build/qconv_test: test/unit/qconv_test.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

build/ranges_test: test/unit/ranges_test.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

build/equalize_test: test/unit/equalize_test.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

build/sched_arm_test: test/unit/sched_arm_test.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(WARN) $(DEFS) $(INCS) $< $(LIBOBJS) $(LIBS) -o $@

# The dependency sets are installed first, before anything needs them:
# `demo` the build set, `test` the test set (which includes the build set).
# A missing test package lets the tests go on (deps.sh prints the install
# command; the suites that need it fail or skip); a missing build package
# stops the build.
demo:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory all
	@test/demo.sh

# The builds make test starts use every core unless make was given -j.
JOBS_FLAG = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))

test:
	-@scripts/deps.sh test
	@$(MAKE) --no-print-directory $(JOBS_FLAG) all
	@TVMCC_DEPS_CHECKED=1 test/run_all.sh

test-conformance: all
	@test/conformance/run.sh

test-arm: all
	@test/conformance/run.sh --arm

bench: all
	@bench/run.sh

# test/fresh mounts /proc (and, where mknod is refused, /dev) in its root
# under build/fresh: a run killed before its cleanup may leave them
# mounted, so unmount first and never cross into another file system.
clean:
	-@for m in build/fresh/root/proc build/fresh/root/dev; do \
	    mountpoint -q $$m 2>/dev/null && umount -l $$m; done; true
	rm -rf --one-file-system build tvmcc

# ---- sanitized build, malformed-input corpus and fuzzing (test/malformed,
# test/fuzz; see test/fuzz/README.md and test/malformed/run.sh) ----
#
#   make build/asan/tvmcc      tvmcc with ASan+UBSan (objects in build/asan/)
#   make test-asan             the malformed-input corpus and a conformance
#                              subset (pytorch-converted) under that build
#   make fuzz FUZZ_SECONDS=N   both libFuzzer harnesses, N seconds each
ASAN_CFLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_OBJS   := $(patsubst build/%,build/asan/%,$(OBJS))
FUZZ_CC     ?= clang
FUZZ_CFLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS   := $(patsubst build/%,build/fuzz/obj/%,$(LIBOBJS))
FUZZ_SECONDS ?= 60

.PHONY: test-asan fuzz
# reached only through pattern rules: keep them (make would delete them as
# intermediate files)
.SECONDARY: $(ASAN_OBJS) $(FUZZ_OBJS)

build/asan/gen/%.o: build/gen/%.c build/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -std=c99 $(INCS) -c $< -o $@

build/asan/%.o: %.c build/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $(WARN) $(DEFS) $(INCS) -MMD -MP -c $< -o $@

build/asan/tvmcc: $(ASAN_OBJS)
	$(CC) $(ASAN_CFLAGS) $(ASAN_OBJS) $(LIBS) -o $@

# The corpus, then a conformance subset with tvmcc and the emitted C (and
# test/driver.c) both built with ASan+UBSan; leak checks are off for the
# latter since the test driver's buffers are not freed.
ASAN_CC_HOST ?= gcc -fsanitize=address,undefined -fno-sanitize-recover=all
test-asan: build/asan/tvmcc build/tensortool
	@rc=0; test/malformed/run.sh || rc=1; \
	ASAN_OPTIONS=detect_leaks=0 TVMCC=build/asan/tvmcc CC_HOST='$(ASAN_CC_HOST)' \
	    CONFORMANCE_WORK=build/conformance-asan \
	    test/conformance/run.sh --suite pytorch-converted -j 2 || rc=1; exit $$rc

build/fuzz/obj/gen/%.o: build/gen/%.c build/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -std=c99 $(INCS) -c $< -o $@

build/fuzz/obj/%.o: %.c build/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(WARN) $(DEFS) $(INCS) -MMD -MP -c $< -o $@

build/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(WARN) $(DEFS) $(INCS) -MMD -MP -MF $@.d $< $(FUZZ_OBJS) $(LIBS) -o $@

fuzz: build/fuzz/fuzz_reader build/fuzz/fuzz_compile
	@test/fuzz/run.sh $(FUZZ_SECONDS)

-include $(ASAN_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) build/fuzz/fuzz_reader.d build/fuzz/fuzz_compile.d

# ---------------------------------------------------------------- Arm (issue 7)
#   make example-arm    examples/cortex-m4 built with make and CMake, run on qemu
#   make test-arm-all   conformance on Cortex-M4, M7, M0, M55 (build only), AArch64
#   make bench-arm      bench/arm: MLPerf-Tiny-style models on qemu, bench/arm/results.md
.PHONY: example-arm test-arm-all bench-arm

example-arm: all
	@examples/cortex-m4/check.sh

test-arm-all: all
	@test/arm/run_all.sh

bench-arm: all
	@bench/arm/run.sh
