# Makefile: builds libkcc (static and shared), the tests (ASan+UBSan), the fuzzer, the benchmarks
# and the tools. `make test` is the project's test command; `make run` the showcase.
#   make [CC=gcc|clang] [OPT=-O0|-O2|-O3] [BUILD=dir]

CC      ?= cc
CXX     ?= c++
OPT     ?= -O3
BUILD   ?= build
PREFIX  ?= /usr/local
LEVELS  ?= ../shared/levels

# The library's version, the one place it is written: kcc.pc, the CMake package and the shared
# library's name take it from here. The SONAME carries the major number (libkcc.so.0, a link to
# libkcc.so.0.1.0); libkcc.so, a link to the SONAME, is what -lkcc finds at link time.
VERSION = 0.1.0
SONAME  = libkcc.so.$(firstword $(subst ., ,$(VERSION)))
SHLIB   = libkcc.so.$(VERSION)

# Determinism: no fast-math, no fused multiply-add contraction, SSE2 floats (x86-64 default).
FPFLAGS  = -ffp-contract=off -fno-fast-math -fno-math-errno
WARN     = -Wall -Wextra -Werror -Wshadow -Wpedantic
CGLM_CFLAGS := $(shell pkg-config --cflags cglm 2>/dev/null)
INCLUDES = -Icollide -Icontroller
CFLAGS_ALL = -std=c11 $(OPT) -g $(WARN) $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) $(CFLAGS)
LDLIBS_ALL = -lm $(LDLIBS)

LIB_SRC  = $(sort $(wildcard collide/*.c controller/*.c))
LIB_HDR  = $(sort $(wildcard collide/*.h controller/*.h))
PUB_HDR  = collide/kcc_base.h collide/kcc_collide.h collide/kcc_level.h collide/kcc_world.h \
           controller/kcc_controller.h controller/kcc_trace.h controller/kcc.h
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)

# Runtime ISA dispatch (x86-64; AVX2=0 turns it off): the code of a move and of the mesh and world
# queries is built a second time for AVX2 (VEX-encoded, no FMA: the same IEEE operations, so the same
# results bit for bit) with its symbols renamed kcc_* -> kcc_avx2_*; kcc_character_move and the public
# mesh and world queries (KCC_ISA_DISPATCH) run that build on CPUs that have AVX2 (KCC_ISA=baseline in the
# environment forces the baseline). See docs/controller.md and docs/collide.md, "Cost".
# -mprefer-vector-width=128: the compiler's own vectorising stays 128 bits wide. Left to choose,
# gcc 12 makes the sweep's hit record one 256-bit conversion from memory and returns from it
# without vzeroupper, after which every AVX2 query runs 30% slower until the next vzeroupper
# (docs/collide.md, "Cost"); the 8-wide code written with 256-bit intrinsics (collide/local.c) is
# not affected by the flag.
AVX2      ?= $(if $(findstring x86_64,$(shell $(CC) -dumpmachine 2>/dev/null)),1,0)
AVX2_FLAGS = -mavx2 -mbmi -mbmi2 -mpopcnt -mno-fma -mprefer-vector-width=128
AVX2_SRC   = controller/controller.c controller/ground.c collide/local.c \
             collide/tri_box.c collide/mesh.c collide/ray.c collide/world_query.c
ifeq ($(AVX2),1)
DISPATCH = -DKCC_AVX2_VARIANT=1
LIB_OBJ += $(AVX2_SRC:%.c=$(BUILD)/avx2/%.o)
endif
# The renaming: every kcc_* symbol the AVX2 objects define, in definitions and references alike.
define avx2_names
	nm -g --defined-only $(1) | awk 'NF == 3 && $$3 ~ /^kcc_/ { print $$3, "kcc_avx2_" substr($$3, 5) }' \
	  | sort -u >$(2)
endef
# The AVX2 build of AVX2_SRC in $(BUILD)/DIR (compiled with FLAGS, the AVX2 flags, EXTRA), its
# names collected and renamed: $(call avx2_variant,DIR,FLAGS,EXTRA).
# Instantiated for the library (avx2) and for the sanitized tests (san-avx2).
define avx2_variant
$(BUILD)/$(1)/%.raw.o: %.c $(LIB_HDR) | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$(AVX2_FLAGS) $(3) -c $$< -o $$@
$(BUILD)/$(1)/names.txt: $(AVX2_SRC:%.c=$(BUILD)/$(1)/%.raw.o)
	$$(call avx2_names,$$^,$$@)
$(BUILD)/$(1)/%.o: $(BUILD)/$(1)/%.raw.o $(BUILD)/$(1)/names.txt
	objcopy --redefine-syms=$(BUILD)/$(1)/names.txt $$< $$@
endef
# The library's objects keep their symbols hidden (VISIBILITY) except the KCC_API functions of the
# public headers; the AVX2 copies (kcc_avx2_*) are internal, so there KCC_API marks nothing.
VISIBILITY = -fvisibility=hidden
$(eval $(call avx2_variant,avx2,$$(CFLAGS_ALL),-fPIC $$(VISIBILITY) -DKCC_API=))

.PHONY: all lib test unit fuzz fuzz-check bench run install clean deps deps-bench deps-fuzz
all: lib $(BUILD)/kcc-replay

lib: $(BUILD)/libkcc.a $(BUILD)/libkcc.so

$(BUILD)/obj/%.o: %.c $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DISPATCH) -fPIC $(VISIBILITY) -c $< -o $@

$(BUILD)/libkcc.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/libkcc.so: $(BUILD)/$(SHLIB)
	ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# ---------------------------------------------------------------- dependencies (Debian packages)
# Each target installs what is missing (apt-get as root, otherwise it says what to install).
DEPS_BASE  = libcglm-dev libcmocka-dev pkg-config clang libclang-rt-14-dev g++ binutils cmake
DEPS_BENCH = libembree-dev libbullet-dev libode-dev g++
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null)) \
	     || { echo "apt-get install$$missing failed"; exit 1; }; \
	  else echo "missing Debian packages:$$missing (run: sudo apt-get install$$missing)"; exit 1; fi; \
	fi
endef
deps:
	$(call apt_install,$(DEPS_BASE))
deps-bench: deps
	$(call apt_install,$(DEPS_BENCH))

# ---------------------------------------------------------------- tests (ASan + UBSan, cmocka)
SAN       = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_SRC  = $(sort $(wildcard test/*.c))
TEST_OBJ  = $(LIB_SRC:%.c=$(BUILD)/san/%.o) $(TEST_SRC:%.c=$(BUILD)/san/%.o)
# The tests find the real levels by absolute paths fixed here (from any working directory): the
# shared levels (LEVELS) and the maps `make levels` imports. $(BUILD)/san/levels-dirs.txt holds them
# and changes only when they do, so the test objects are rebuilt exactly then.
LEVELS_DIRS = $(abspath $(LEVELS)) $(abspath $(BUILD))/levels
SAN_FLAGS = $(CFLAGS_ALL) $(SAN) -DKCC_DEBUG -DKCC_LEVELS_DIR='"$(word 1,$(LEVELS_DIRS))"' \
            -DKCC_IMPORTED_LEVELS_DIR='"$(word 2,$(LEVELS_DIRS))"'
ifeq ($(AVX2),1)
TEST_OBJ += $(AVX2_SRC:%.c=$(BUILD)/san-avx2/%.o)
endif
$(eval $(call avx2_variant,san-avx2,$$(SAN_FLAGS)))

$(BUILD)/san/%.o: %.c $(LIB_HDR) test/test.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $(DISPATCH) -c $< -o $@

.PHONY: FORCE
$(BUILD)/san/levels-dirs.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(LEVELS_DIRS)' | cmp -s - $@ || echo '$(LEVELS_DIRS)' >$@
$(TEST_SRC:%.c=$(BUILD)/san/%.o): $(BUILD)/san/levels-dirs.txt

$(BUILD)/kcc_tests: $(TEST_OBJ)
	$(CC) $(SAN) -o $@ $^ -lcmocka $(LDLIBS_ALL)

# `make unit T=pattern` runs only the tests whose names match the pattern. The closing line reads
# "tests: N passed, M failed, K skipped", followed by which real levels the run had. With CI=true
# in the environment (CI sets it) a test that finds the shared levels missing fails.
# `make unit KCC_ISA=baseline` runs them with the baseline build of the move (see AVX2 above).
UNIT_LOG = $(BUILD)/unit$(if $(KCC_ISA),-$(KCC_ISA)).log
unit: $(BUILD)/kcc_tests
	@KCC_ISA=$(KCC_ISA) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/kcc_tests $(T) \
	  >$(UNIT_LOG) 2>&1; rc=$$?; cat $(UNIT_LOG); exit $$rc

# ---------------------------------------------------------------- fuzzer (clang libFuzzer)
# Two ways to run it. `make fuzz` explores: FUZZ_SECONDS from a random seed (FUZZ_SEED=N to pick
# one), with comparison tracing, keeping what it finds in build/fuzz/corpus-NAME; run it
# deliberately, for as long as you like, and add a fixed finding to test/fuzz/corpus/<target>.
# `make fuzz-check` (part of `make test`) repeats: FUZZ_RUNS_<target> inputs from seed 1 on a fresh
# corpus grown from test/fuzz/corpus/<target>, without comparison tracing (its dictionary picks up
# heap and stack addresses, which differ from run to run) and without corpus reloads (timed), so
# every machine and every run executes the same inputs: CI's verdict does not depend on the clock.
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 0
FUZZ_RUNS ?= 100000
FUZZ_SRC = $(sort $(wildcard test/fuzz/*.c))
FUZZ_BIN = $(FUZZ_SRC:test/fuzz/%.c=$(BUILD)/fuzz/%)
# A fuzz target with the whole library, sanitized and with KCC_DEBUG checks (a move query reaching
# outside its list's region aborts): $(FUZZ_CC) [EXTRA FLAGS] $< $(LIB_SRC) -o $@ -lm
FUZZ_CC = clang -std=c11 -O1 -g $(WARN) $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) -DKCC_DEBUG \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(BUILD)/fuzz/%: test/fuzz/%.c test/fuzz/fuzz.h $(LIB_SRC) $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $< $(LIB_SRC) -o $@ -lm
# The move's AVX2 build (what the library runs on every CPU with AVX2) fuzzed as well, compiled
# whole with the AVX2 flags, where this machine can run it; it shares fuzz_move's corpus.
FUZZ_AVX2 ?= $(if $(filter 1,$(AVX2)),$(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && \
  grep -qw bmi1 /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo && \
  grep -qw popcnt /proc/cpuinfo && echo 1))
ifeq ($(FUZZ_AVX2),1)
FUZZ_BIN += $(BUILD)/fuzz/fuzz_move_avx2
endif
$(BUILD)/fuzz/%_avx2: test/fuzz/%.c test/fuzz/fuzz.h $(LIB_SRC) $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(AVX2_FLAGS) $< $(LIB_SRC) -o $@ -lm

# One fuzzer run: $(1) the target, $(2) the corpus it grows (from test/fuzz/corpus/<target>),
# $(3) its log, $(4) libFuzzer's options.
define fuzz_run
n=$(notdir $(1)); mkdir -p $(2); echo "fuzzing $$n: $(strip $(4))"; \
$(1) $(4) -print_final_stats=0 -artifact_prefix=$(BUILD)/fuzz/ \
    $(2) test/fuzz/corpus/$${n%_avx2} >$(3) 2>&1 \
  || { tail -n 40 $(3); echo "fuzzer $$n found a problem"; exit 1; }; \
tail -n 1 $(3)
endef

fuzz: $(FUZZ_BIN)
	@$(foreach f,$^,$(call fuzz_run,$(f),$(BUILD)/fuzz/corpus-$(notdir $(f)),\
	  $(BUILD)/fuzz/$(notdir $(f)).log,-seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS));)

# inputs per target in fuzz-check (about a minute each here)
FUZZ_RUNS_fuzz_obj  ?= 500000
FUZZ_RUNS_fuzz_move ?= 100000
FUZZ_RUNS_fuzz_world ?= 20000
FUZZ_RUNS_fuzz_sphere ?= 80000
FUZZ_RUNS_fuzz_mesh_mesh ?= 15000
FUZZ_RUNS_fuzz_heightfield ?= 5000
FUZZ_RUNS_fuzz_world_trace ?= 150000
fuzz-check: $(FUZZ_BIN)
	@$(foreach f,$^,rm -rf $(BUILD)/fuzz/check-$(notdir $(f)); \
	  $(call fuzz_run,$(f),$(BUILD)/fuzz/check-$(notdir $(f)),$(BUILD)/fuzz/$(notdir $(f)).check.log,\
	    -seed=1 -runs=$(or $(FUZZ_RUNS_$(notdir $(f))),$(FUZZ_RUNS)) -use_cmp=0 -reload=0);)

# ---------------------------------------------------------------- traces: kcc-replay, goldens, determinism
# `make replay` replays every golden trace bit-exactly; `make determinism` builds kcc-replay with each
# compiler and optimisation level (separate dirs $(BUILD)/det-CC-OPT, normal flags) and checks that
# every variant replays every golden byte for byte the same (whether or not the goldens are up to
# date: that is `make replay`'s job), the world goldens on 1 and 2 workers; `make goldens`
# re-records the goldens (the world ones with kcc-record-world-goldens and kcc-record-q3-goldens).
# The Quake 3 goldens (test/traces/q3_*.trace, recorded from the demo's game) name the maps `make
# levels` imports into build/levels (the path relative to the repository, whatever BUILD is) and the
# movers' and triggers' meshes kcc-record-q3-goldens --meshes writes beside them (q3-meshes, before
# every replay: a game that builds them otherwise replays as a changed level); without the maps,
# replay and determinism skip them, saying so.
Q3_LEVELS = build/levels
Q3_TRACES = $(sort $(wildcard test/traces/q3_*.trace))
TRACES   = $(filter-out $(Q3_TRACES),$(sort $(wildcard test/traces/*.trace)))
Q3_SKIP  = the Quake 3 goldens ($(notdir $(Q3_TRACES))): skipped: no imported maps ($(Q3_LEVELS)/levels.txt; make levels)
# The traces a replay runs: every golden, the Quake 3 ones when the maps are there (shell).
ALL_TRACES = $(TRACES) $$([ -f $(Q3_LEVELS)/levels.txt ] && echo $(Q3_TRACES))
DET_CCS  ?= gcc clang
DET_OPTS ?= -O0 -O2 -O3
.PHONY: replay determinism goldens q3-meshes

$(BUILD)/kcc-replay: demo/replay.c demo/isa_env.h demo/jobs.h $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) $< $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL) -lpthread
$(BUILD)/kcc-record-goldens: test/traces/record_goldens.c $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) $< $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
$(BUILD)/kcc-record-world-goldens: test/traces/record_world_goldens.c test/world_scene.h $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) $< $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
$(BUILD)/kcc-record-q3-goldens: test/traces/record_q3_goldens.c $(DEMO_CORE) $(DEMO_HDR) $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) -Idemo $< $(DEMO_CORE) $(BUILD)/libkcc.a -o $@ -lpng $(LDLIBS_ALL)

q3-meshes: $(BUILD)/kcc-record-q3-goldens
	@if [ -f $(Q3_LEVELS)/levels.txt ]; then $(BUILD)/kcc-record-q3-goldens --meshes $(Q3_LEVELS) test/traces >/dev/null; fi

replay: $(BUILD)/kcc-replay q3-meshes
	@$(BUILD)/kcc-replay $(ALL_TRACES) || { echo "replay: golden traces diverge (if the controller changed on purpose: make goldens, review git diff test/traces)"; exit 1; }
	@[ -f $(Q3_LEVELS)/levels.txt ] || echo "replay: $(Q3_SKIP)"

goldens: $(BUILD)/kcc-record-goldens $(BUILD)/kcc-record-world-goldens $(BUILD)/kcc-record-q3-goldens
	$(BUILD)/kcc-record-goldens test/traces
	$(BUILD)/kcc-record-world-goldens test/traces
	@if [ -f $(Q3_LEVELS)/levels.txt ]; then $(BUILD)/kcc-record-q3-goldens $(Q3_LEVELS) test/traces; \
	  else echo "goldens: $(Q3_SKIP)"; fi

determinism: q3-meshes
	@traces="$(ALL_TRACES)"; ref=""; for cc in $(DET_CCS); do for opt in $(DET_OPTS); do \
	  d=$(BUILD)/det-$$cc$$opt; mkdir -p $$d; \
	  $(MAKE) --no-print-directory CC=$$cc OPT=$$opt BUILD=$$d $$d/kcc-replay >$$d/build.log 2>&1 \
	    || { cat $$d/build.log; echo "determinism: building CC=$$cc OPT=$$opt failed"; exit 1; }; \
	  $$d/kcc-replay --print $$traces >$$d/replay.txt 2>$$d/replay.err; \
	  [ $$? -le 1 ] || { cat $$d/replay.err; echo "determinism: CC=$$cc OPT=$$opt cannot replay the traces"; exit 1; }; \
	  KCC_ISA=baseline $$d/kcc-replay --print $$traces 2>/dev/null | cmp -s - $$d/replay.txt \
	    || { echo "determinism: CC=$$cc OPT=$$opt: the baseline build of the move (KCC_ISA=baseline) differs from $$($$d/kcc-replay --isa)"; exit 1; }; \
	  $$d/kcc-replay --print --workers 2 $$traces 2>/dev/null | cmp -s - $$d/replay.txt \
	    || { echo "determinism: CC=$$cc OPT=$$opt: the world traces replayed on 2 workers (--workers 2) differ from 1 worker"; exit 1; }; \
	  if [ -n "$$ref" ] && ! cmp -s $$ref/replay.txt $$d/replay.txt; then \
	    n=$$(cmp $$ref/replay.txt $$d/replay.txt 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p'); \
	    echo "determinism: CC=$$cc OPT=$$opt differs from $$ref at line $$n of the replay output"; \
	    awk -v n="$$n" 'NR<=n+0 && /^# /{h=$$0} NR==n+0{print "  in trace " substr(h,3); exit}' $$d/replay.txt; \
	    echo "  $$ref: $$(sed -n "$${n}p" $$ref/replay.txt)"; \
	    echo "  $$d: $$(sed -n "$${n}p" $$d/replay.txt)"; exit 1; \
	  fi; \
	  if [ -z "$$ref" ]; then ref=$$d; \
	    $$d/kcc-replay --print $$traces 2>/dev/null | cmp -s - $$d/replay.txt \
	      || { echo "determinism: two runs of CC=$$cc OPT=$$opt differ"; exit 1; }; \
	  fi; \
	done; done; \
	[ -f $(Q3_LEVELS)/levels.txt ] || echo "determinism: $(Q3_SKIP)"; \
	echo "determinism: $$(echo $$traces | wc -w) traces, $$(grep -c '^[0-9]' $$ref/replay.txt) frames and $$(grep -c '^step ' $$ref/replay.txt) world steps replay bit-identically across runs, with CC=$(DET_CCS) x OPT=$(DET_OPTS), with the $$($$ref/kcc-replay --isa) and baseline builds of the move, and on 1 and 2 workers"

# `make replay-check` (part of `make test`) runs kcc-replay's command line the way a user does, on
# inputs made here from a golden with sed: the golden replays (exit 0); one expected position edited
# diverges (exit 1, naming file:line); a trace cut before its `end` line and one whose level_hash
# does not match its level cannot be replayed (exit 2, counted as such; the second named "level
# changed"); all four at once exit 2 with every count in the summary; a bad KCC_ISA is warned about;
# --help exits 0. Each case says what it expected when it fails.
RC_DIR    = $(BUILD)/replay-check
RC_GOLDEN = test/traces/flat_idle.trace
.PHONY: replay-check
replay-check: $(BUILD)/kcc-replay
	@rm -rf $(RC_DIR); mkdir -p $(RC_DIR)
	@sed 's|^level obj |level obj $(abspath $(dir $(RC_GOLDEN)))/|' $(RC_GOLDEN) >$(RC_DIR)/good.trace
	@sed '0,/^f /s/^\(f [^|]*\)| [^|]* |/\1| 9 9 9 |/' $(RC_DIR)/good.trace >$(RC_DIR)/edited.trace
	@sed '/^end /d' $(RC_DIR)/good.trace >$(RC_DIR)/cut.trace
	@sed '/^start /a level_hash 0123456789abcdef' $(RC_DIR)/good.trace >$(RC_DIR)/changed.trace
	@r=$(RC_DIR); edited_line=$$(grep -n -m1 '^f ' $$r/edited.trace | cut -d: -f1); \
	check() { want=$$1; pattern=$$2; shift 2; "$$@" >$$r/out.txt 2>&1; rc=$$?; \
	  if [ $$rc != $$want ] || ! grep -qF -- "$$pattern" $$r/out.txt; then cat $$r/out.txt; \
	    echo "replay-check: '$$*' should exit $$want and print '$$pattern'; it exited $$rc"; exit 1; fi; }; \
	check 0 "1 trace, 120 frames: all match" $(BUILD)/kcc-replay $$r/good.trace && \
	check 1 "$$r/edited.trace:$$edited_line: frame 0: expected position (9 9 9)" $(BUILD)/kcc-replay $$r/edited.trace && \
	check 2 "$$r/cut.trace:" $(BUILD)/kcc-replay $$r/cut.trace && \
	check 2 "1 could not be replayed (0 frames replayed): ERRORS" $(BUILD)/kcc-replay $$r/cut.trace && \
	check 2 "(level changed: KCC_ERR_LEVEL_CHANGED)" $(BUILD)/kcc-replay $$r/changed.trace && \
	check 2 "4 traces: 1 match, 1 diverges, 2 could not be replayed (1 level changed; 240 frames replayed): ERRORS" \
	  $(BUILD)/kcc-replay $$r/good.trace $$r/edited.trace $$r/cut.trace $$r/changed.trace && \
	check 0 "kcc-replay: warning: KCC_ISA=bogus is not baseline, avx2 or empty" env KCC_ISA=bogus $(BUILD)/kcc-replay $$r/good.trace && \
	check 0 "usage: kcc-replay" $(BUILD)/kcc-replay --help && \
	echo "replay-check: kcc-replay exits 0 on a golden and --help, 1 on an edited outcome, 2 on a cut trace and a changed level, and warns about KCC_ISA=bogus"

# ---------------------------------------------------------------- the test command
test: deps
	$(MAKE) --no-print-directory lib
	$(MAKE) --no-print-directory test-levels
	$(MAKE) --no-print-directory fuzz-check
	$(MAKE) --no-print-directory unit
	$(if $(filter 1,$(AVX2)),$(MAKE) --no-print-directory unit KCC_ISA=baseline)
	$(MAKE) --no-print-directory install-check
	$(MAKE) --no-print-directory replay
	$(MAKE) --no-print-directory determinism
	$(MAKE) --no-print-directory soak-movers
	@echo "make test: test-levels, fuzz, install-check, replay, determinism, demo-check, soak-movers and replay-check passed; the unit tests:"
	@grep -H '^tests:' $(BUILD)/unit*.log
	@! grep -q '^tests: .* [1-9][0-9]* skipped' $(BUILD)/unit*.log \
	  || echo "make test: some unit tests were skipped (their reasons are in $(BUILD)/unit*.log)"

# ---------------------------------------------------------------- benchmarks (never timed tests)
BENCH_C   = $(sort $(wildcard test/bench/*.c))
BENCH_CXX = $(sort $(wildcard test/bench/*.cpp))
BENCH_BIN = $(BENCH_C:test/bench/%.c=$(BUILD)/bench/%) $(BENCH_CXX:test/bench/%.cpp=$(BUILD)/bench/%)
BENCH_LIBS = $(shell pkg-config --libs bullet 2>/dev/null) -lembree3 -lode -lpthread
BENCH_INC  = $(shell pkg-config --cflags bullet ode 2>/dev/null)

$(BUILD)/bench/%: test/bench/%.c $(BUILD)/libkcc.a test/bench/bench.h test/bench/bench_crowd.h | deps-bench
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itest/bench $< $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
$(BUILD)/bench/%: test/bench/%.cpp $(BUILD)/libkcc.a test/bench/bench.h | deps-bench
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(OPT) -g -Wall -Wextra $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) $(BENCH_INC) -Itest/bench \
	  $< $(BUILD)/libkcc.a -o $@ $(BENCH_LIBS) $(LDLIBS_ALL)

bench: deps-bench lib
	$(MAKE) --no-print-directory $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b $(LEVELS) || exit 1; done
	@# the maps `make levels` imported, when present: every one, with shorter runs
	@if [ -f $(BUILD)/levels/levels.txt ]; then for b in $(BENCH_BIN); do \
	  echo "== $$b on the imported maps ($(BUILD)/levels)"; \
	  KCC_BENCH_NO_BIG=1 KCC_BENCH_QUERIES=4000 KCC_BENCH_FRAMES=600 KCC_BENCH_BULLET_FRAMES=60 \
	    $$b $(BUILD)/levels || exit 1; done; fi

# The showcase: the viewer when a display is available, else the headless showcase and its picture.
run: lib tools
	$(BUILD)/kcc-demo --png $(BUILD)/showcase.png

# ---------------------------------------------------------------- demo: kcc-demo, kcc-bsp2obj, levels
# `make` also builds kcc-demo (GLFW viewer + headless showcase) and kcc-bsp2obj (Quake 3 BSP importer).
# The test binary links the demo's window-free parts (importer, rasterizer, headless run); `make test`
# also runs the headless showcase (demo-check). `make levels` fetches Debian's openarena-081-maps with
# apt-get download (no root needed) and imports its maps into $(BUILD)/levels. `make run`: see README.
DEPS_DEMO     = libglfw3-dev libgl-dev libpng-dev xvfb unzip
DEMO_CORE     = demo/q3bsp.c demo/raster.c demo/app.c demo/world_view.c demo/game.c demo/game_movers.c \
                demo/game_soak.c
DEMO_HDR      = $(wildcard demo/*.h)
DEMO_LEVELS   = $(BUILD)/levels
.PHONY: tools levels demo-check deps-demo docs-images
all: tools
tools: $(BUILD)/kcc-demo $(BUILD)/kcc-bsp2obj $(BUILD)/kcc-docs-images $(BUILD)/kcc-check
deps: deps-demo
deps-demo:
	$(call apt_install,$(DEPS_DEMO))

$(BUILD)/kcc-bsp2obj: demo/bsp2obj.c demo/q3bsp.c $(DEMO_HDR) $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) -Idemo demo/bsp2obj.c demo/q3bsp.c $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
# kcc-check LEVEL: a level's self-intersections, degenerate and sliver triangles, open edges and
# duplicate faces (docs/levels.md); the test binary links its checks without the main.
$(BUILD)/kcc-check: demo/check.c demo/q3bsp.c $(DEMO_HDR) $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) -Idemo demo/check.c demo/q3bsp.c $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
$(BUILD)/kcc_tests: $(BUILD)/san/demo/check_run.o
$(BUILD)/san/demo/check_run.o: demo/check.c $(DEMO_HDR) $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -DKCC_CHECK_NO_MAIN -c $< -o $@
$(BUILD)/kcc-demo: demo/main.c demo/viewer.c $(DEMO_CORE) $(DEMO_HDR) $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) -Idemo demo/main.c demo/viewer.c $(DEMO_CORE) $(BUILD)/libkcc.a -o $@ \
	  -lglfw -lGL -lpng $(LDLIBS_ALL)

# The pictures of docs/controller.md and docs/world.md, drawn from real moves (kcc_character_move_debug)
# and a real world by the demo's renderer: `make docs-images` rewrites docs/img/scheme_*.png and
# world_*.png (not part of `make test`; the program is built by `make` / `make tools`, so it keeps
# compiling).
DOCS_IMAGES_SRC = demo/docs_images.c demo/docs_images_world.c demo/raster.c
$(BUILD)/kcc-docs-images: $(DOCS_IMAGES_SRC) demo/docs_images.h $(DEMO_HDR) $(BUILD)/libkcc.a
	$(CC) $(CFLAGS_ALL) -Idemo $(DOCS_IMAGES_SRC) $(BUILD)/libkcc.a -o $@ -lpng $(LDLIBS_ALL)
docs-images: $(BUILD)/kcc-docs-images
	$(BUILD)/kcc-docs-images docs/img

# The window-free demo code is tested inside the one test binary (test/test_demo.c).
$(BUILD)/kcc_tests: $(DEMO_CORE:%.c=$(BUILD)/san/%.o)
$(DEMO_CORE:%.c=$(BUILD)/san/%.o) $(BUILD)/san/test/test_demo.o $(BUILD)/san/test/test_movers.o: $(DEMO_HDR)
$(BUILD)/kcc_tests: LDLIBS += -lpng

# Headless showcase and a world trace's picture with the real binary: each must exit 0 and write a
# PNG (the unit tests check pixels); a world trace cut short exits 2 with a file:line: message.
test: demo-check replay-check
demo-check: $(BUILD)/kcc-demo
	$(BUILD)/kcc-demo --headless --characters 12 --frames 900 --png $(BUILD)/demo-check.png
	$(BUILD)/kcc-demo --headless --trace test/traces/world_movers.trace --png $(BUILD)/demo-check-world.png
	@for p in demo-check demo-check-world; do sig=$$(od -An -tx1 -N8 $(BUILD)/$$p.png | tr -d ' \n'); \
	  [ "$$sig" = "89504e470d0a1a0a" ] && [ $$(wc -c <$(BUILD)/$$p.png) -gt 20000 ] \
	  || { echo "demo-check: $(BUILD)/$$p.png is not a plausible picture"; exit 1; }; done
	@rm -f $(BUILD)/demo-check-broken.png; sed '/^end /d' test/traces/world_movers.trace >$(BUILD)/demo-check-broken.trace; \
	  $(BUILD)/kcc-demo --headless --trace $(BUILD)/demo-check-broken.trace --png $(BUILD)/demo-check-broken.png \
	    >$(BUILD)/demo-check-broken.txt 2>&1; rc=$$?; \
	  [ $$rc = 2 ] && grep -q '^kcc-demo: $(BUILD)/demo-check-broken.trace:[0-9]*: ' $(BUILD)/demo-check-broken.txt \
	  && [ ! -e $(BUILD)/demo-check-broken.png ] \
	  || { cat $(BUILD)/demo-check-broken.txt; echo "demo-check: a world trace cut before its end line should exit 2" \
	       "with a file:line: message and no picture; it exited $$rc"; exit 1; }
	@echo "demo-check: the headless showcase and a world trace's picture are plausible; a broken world trace gets a file:line: message"

# The movers soak (docs/demo.md): every imported map's game with its movers and triggers live, a rider
# on every plat, a jumper on every jump pad, bots wandering: `soak-movers` (part of `make test`, about
# half a minute) runs each map for at least 300 steps; `soak-movers-long` for 3600 (a minute of play a
# map) with more bots. Both skip, saying so, when `make levels` has not been run.
.PHONY: soak-movers soak-movers-long
soak-movers: $(BUILD)/kcc-demo
	@if [ -f $(DEMO_LEVELS)/levels.txt ]; then $(BUILD)/kcc-demo --soak-movers $(DEMO_LEVELS) --quiet; \
	  else echo "soak-movers: no imported maps ($(DEMO_LEVELS)/levels.txt; make levels): skipped"; fi
soak-movers-long: $(BUILD)/kcc-demo
	@if [ -f $(DEMO_LEVELS)/levels.txt ]; then $(BUILD)/kcc-demo --soak-movers $(DEMO_LEVELS) --soak-steps 3600 --bots 32; \
	  else echo "soak-movers-long: no imported maps ($(DEMO_LEVELS)/levels.txt; make levels): skipped"; fi

levels: $(BUILD)/kcc-bsp2obj $(BUILD)/kcc-record-q3-goldens
	@mkdir -p $(DEMO_LEVELS)/pkg
	@cd $(DEMO_LEVELS)/pkg && { ls openarena-081-maps_*.deb >/dev/null 2>&1 || apt-get download openarena-081-maps; }
	@rm -rf $(DEMO_LEVELS)/pkg/x $(DEMO_LEVELS)/pkg/maps $(DEMO_LEVELS)/levels.txt
	dpkg-deb -x $$(ls $(DEMO_LEVELS)/pkg/openarena-081-maps_*.deb | head -n 1) $(DEMO_LEVELS)/pkg/x
	@for p in $$(find $(DEMO_LEVELS)/pkg/x -name '*.pk3' | sort); do \
	  unzip -q -o $$p 'maps/*.bsp' -d $(DEMO_LEVELS)/pkg 2>/dev/null; done; true
	@n=0; : >$(DEMO_LEVELS)/levels.tmp; for b in $(DEMO_LEVELS)/pkg/maps/*.bsp; do m=$$(basename $$b .bsp); \
	  $(BUILD)/kcc-bsp2obj --quiet $$b $(DEMO_LEVELS)/$$m.obj || exit 1; echo $$m >>$(DEMO_LEVELS)/levels.tmp; \
	  n=$$((n+1)); done; \
	  mv $(DEMO_LEVELS)/levels.tmp $(DEMO_LEVELS)/levels.txt; \
	  echo "levels: $$n maps imported into $(DEMO_LEVELS) (OBJ + .spawns; names in levels.txt)"
	@$(BUILD)/kcc-record-q3-goldens --meshes $(DEMO_LEVELS) test/traces

# `make test` imports the maps when they are not there yet (levels.txt is written last: a failed
# import leaves none). Without them (no network for apt-get download) it says so and goes on: the
# steps that need them (soak-movers, the Quake 3 goldens of replay and determinism) skip, saying so.
.PHONY: test-levels
test-levels:
	@if [ -f $(DEMO_LEVELS)/levels.txt ]; then \
	  echo "test-levels: $$(wc -l <$(DEMO_LEVELS)/levels.txt) maps already imported in $(DEMO_LEVELS)"; \
	elif ! $(MAKE) --no-print-directory levels; then \
	  echo "test-levels: skipped: the maps could not be imported (apt-get download openarena-081-maps: no network?);" \
	    "soak-movers and the Quake 3 goldens will say skipped"; fi

# ---------------------------------------------------------------- install
# What API.md lists (headers under include/kcc/, libkcc.a, libkcc.so, lib/pkgconfig/kcc.pc) plus the
# SONAME links and the CMake package lib/cmake/kcc (find_package(kcc): kcc::kcc, kcc::kcc_static).
# The CMake files find the prefix from where they are, so DESTDIR staging and moved trees work.
LIBDIR = $(DESTDIR)$(PREFIX)/lib
install: lib $(BUILD)/kcc-replay
	install -d $(DESTDIR)$(PREFIX)/include/kcc $(LIBDIR)/pkgconfig $(LIBDIR)/cmake/kcc $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(PUB_HDR) $(DESTDIR)$(PREFIX)/include/kcc/
	install -m 644 $(BUILD)/libkcc.a $(LIBDIR)/
	install -m 755 $(BUILD)/$(SHLIB) $(LIBDIR)/
	ln -sf $(SHLIB) $(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(LIBDIR)/libkcc.so
	install -m 755 $(BUILD)/kcc-replay $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' docs/kcc.pc.in >$(LIBDIR)/pkgconfig/kcc.pc
	pointer=$$($(CC) -dM -E -x c /dev/null | awk '$$2 == "__SIZEOF_POINTER__" { print $$3 }'); \
	for f in kccConfig kccConfigVersion; do \
	  sed -e 's|@VERSION@|$(VERSION)|' -e 's|@SHLIB@|$(SHLIB)|' -e 's|@SONAME@|$(SONAME)|' \
	    -e "s|@SIZEOF_POINTER@|$$pointer|" docs/$$f.cmake.in >$(LIBDIR)/cmake/kcc/$$f.cmake || exit 1; done

# The installed copy used the way a program outside the repository uses it, each program run with
# no environment variables (env -i): test/install/app.c built with pkg-config against libkcc.so
# (found at run time through the rpath to pkg-config's libdir; it needs the SONAME, libkcc.so.0),
# with `pkg-config --static` against libkcc.a (Libs.private brings -lm; no libkcc.so needed), and
# with CMake (test/install/CMakeLists.txt: find_package(kcc), kcc::kcc and kcc::kcc_static). The
# installed headers also compile as C++, and libkcc.so exports exactly the functions they declare
# (every name followed by "(" in the preprocessed headers, typedefs of function types such as
# kcc_task_fn aside): a declaration without KCC_API, or an internal function that is not hidden,
# fails here.
IC     = $(abspath $(BUILD))/install-check
IC_PC  = PKG_CONFIG_PATH=$(IC)/lib/pkgconfig pkg-config
IC_CC  = $(CC) -std=c11 -Wall -Wextra -Werror test/install/app.c
.PHONY: install-check
install-check: lib
	@rm -rf $(IC)
	@$(MAKE) --no-print-directory install PREFIX=$(IC) >/dev/null
	$(IC_CC) $$($(IC_PC) --cflags --libs kcc) -Wl,-rpath,$$($(IC_PC) --variable=libdir kcc) -o $(IC)/app-shared
	$(IC_CC) $$($(IC_PC) --cflags kcc) \
	  $$($(IC_PC) --static --libs kcc | sed 's/-lkcc\b/-Wl,-Bstatic -lkcc -Wl,-Bdynamic/') -o $(IC)/app-static
	@cmake -S test/install -B $(IC)/cmake -DCMAKE_PREFIX_PATH=$(IC) -DCMAKE_C_COMPILER=$(CC) \
	  >$(IC)/cmake.log 2>&1 && cmake --build $(IC)/cmake >>$(IC)/cmake.log 2>&1 \
	  || { cat $(IC)/cmake.log; echo "install-check: the CMake build against the installed kcc failed"; exit 1; }
	@readelf -d $(IC)/app-shared | grep -q 'NEEDED.*\[$(SONAME)\]' \
	  || { echo "install-check: app-shared does not load $(SONAME)"; exit 1; }
	@for a in app-static cmake/app_cmake_static; do ! readelf -d $(IC)/$$a | grep -q 'NEEDED.*libkcc' \
	  || { echo "install-check: $$a loads libkcc.so instead of linking libkcc.a"; exit 1; }; done
	@for a in app-shared app-static cmake/app_cmake cmake/app_cmake_static; do \
	  env -i $(IC)/$$a >$(IC)/run.log 2>&1 || { cat $(IC)/run.log; echo "install-check: $$a failed"; exit 1; }; \
	  echo "install-check: $$a: $$(cat $(IC)/run.log)"; done
	echo '#include <kcc/kcc.h>' | $(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only \
	  $$($(IC_PC) --cflags kcc) -
	@echo '#include <kcc/kcc.h>' | $(CC) -E -P $$($(IC_PC) --cflags kcc) -x c - \
	  | grep -v '^[[:space:]]*typedef' \
	  | grep -o '\bkcc_[A-Za-z0-9_]*[[:space:]]*(' | tr -d ' \t(' | sort -u >$(IC)/declared.txt
	@nm -D --defined-only $(IC)/lib/libkcc.so | awk '{ print $$NF }' | sort -u >$(IC)/exported.txt
	@comm -23 $(IC)/declared.txt $(IC)/exported.txt >$(IC)/unexported.txt; \
	comm -13 $(IC)/declared.txt $(IC)/exported.txt >$(IC)/leaked.txt; \
	[ -s $(IC)/declared.txt ] || { echo "install-check: no function found in the installed headers"; exit 1; }; \
	[ ! -s $(IC)/unexported.txt ] || { echo "install-check: declared in the installed headers but not exported by" \
	  "libkcc.so (KCC_API missing?):" $$(cat $(IC)/unexported.txt); exit 1; }; \
	[ ! -s $(IC)/leaked.txt ] || { echo "install-check: exported by libkcc.so but declared in no installed header" \
	  "(an internal symbol; make it static or hidden):" $$(cat $(IC)/leaked.txt); exit 1; }; \
	echo "install-check: libkcc.so exports the $$(wc -l <$(IC)/declared.txt) functions the installed headers declare, nothing else"
	@for f in $$(cat $(IC)/exported.txt); do grep -q "\`$$f\`" docs/reference.md || echo $$f; done >$(IC)/unlisted.txt; \
	[ ! -s $(IC)/unlisted.txt ] || { echo "install-check: exported but missing from docs/reference.md:" \
	  $$(cat $(IC)/unlisted.txt); exit 1; }; \
	echo "install-check: docs/reference.md lists every exported function"

clean:
	rm -rf $(BUILD)
