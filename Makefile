# Makefile: builds libkcc (static and shared), the tests (ASan+UBSan), the fuzzer, the benchmarks
# and the tools. `make test` is the project's test command; `make run` the showcase.
#   make [CC=gcc|clang] [OPT=-O0|-O2|-O3] [BUILD=dir]

CC      ?= cc
CXX     ?= c++
OPT     ?= -O2
BUILD   ?= build
PREFIX  ?= /usr/local
LEVELS  ?= ../shared/levels

# Determinism: no fast-math, no fused multiply-add contraction, SSE2 floats (x86-64 default).
FPFLAGS  = -ffp-contract=off -fno-fast-math
WARN     = -Wall -Wextra -Werror -Wshadow -Wpedantic -Wno-unused-function
CGLM_CFLAGS := $(shell pkg-config --cflags cglm 2>/dev/null)
INCLUDES = -Icollide -Icontroller
CFLAGS_ALL = -std=c11 $(OPT) -g $(WARN) $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) $(CFLAGS)
LDLIBS_ALL = -lm $(LDLIBS)

LIB_SRC  = $(sort $(wildcard collide/*.c controller/*.c))
LIB_HDR  = $(sort $(wildcard collide/*.h controller/*.h))
PUB_HDR  = collide/kcc_base.h collide/kcc_collide.h collide/kcc_level.h \
           controller/kcc_controller.h controller/kcc_trace.h controller/kcc.h
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all lib test unit fuzz bench run install clean deps deps-bench deps-fuzz
all: lib

lib: $(BUILD)/libkcc.a $(BUILD)/libkcc.so

$(BUILD)/obj/%.o: %.c $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/libkcc.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libkcc.so: $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDLIBS_ALL)

# ---------------------------------------------------------------- dependencies (Debian packages)
# Each target installs what is missing (apt-get as root, otherwise it says what to install).
DEPS_BASE  = libcglm-dev libcmocka-dev pkg-config clang libclang-rt-14-dev
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

$(BUILD)/san/%.o: %.c $(LIB_HDR) test/test.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SAN) -DKCC_DEBUG -DKCC_LEVELS_DIR='"$(LEVELS)"' -c $< -o $@

$(BUILD)/kcc_tests: $(TEST_OBJ)
	$(CC) $(SAN) -o $@ $^ -lcmocka $(LDLIBS_ALL)

# `make unit T=pattern` runs only the tests whose names match the pattern.
unit: $(BUILD)/kcc_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/kcc_tests $(T)

# ---------------------------------------------------------------- fuzzer (clang libFuzzer)
FUZZ_SECONDS ?= 60
FUZZ_SRC = $(sort $(wildcard test/fuzz/*.c))
$(BUILD)/fuzz/%: test/fuzz/%.c $(LIB_SRC) $(LIB_HDR) | deps
	@mkdir -p $(dir $@)
	clang -std=c11 -O1 -g $(WARN) $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< $(LIB_SRC) -o $@ -lm

fuzz: $(FUZZ_SRC:test/fuzz/%.c=$(BUILD)/fuzz/%)
	@for f in $^; do \
	  n=$$(basename $$f); mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	  echo "fuzzing $$n for $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 -artifact_prefix=$(BUILD)/fuzz/ \
	      $(BUILD)/fuzz/corpus-$$n test/fuzz/corpus >$(BUILD)/fuzz/$$n.log 2>&1 \
	    || { tail -n 40 $(BUILD)/fuzz/$$n.log; echo "fuzzer $$n found a problem"; exit 1; }; \
	  tail -n 1 $(BUILD)/fuzz/$$n.log; \
	done

# ---------------------------------------------------------------- the test command
test: deps
	$(MAKE) --no-print-directory lib
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory unit

# ---------------------------------------------------------------- benchmarks (never timed tests)
BENCH_C   = $(sort $(wildcard test/bench/*.c))
BENCH_CXX = $(sort $(wildcard test/bench/*.cpp))
BENCH_BIN = $(BENCH_C:test/bench/%.c=$(BUILD)/bench/%) $(BENCH_CXX:test/bench/%.cpp=$(BUILD)/bench/%)
BENCH_LIBS = $(shell pkg-config --libs bullet 2>/dev/null) -lembree3 -lode -lpthread
BENCH_INC  = $(shell pkg-config --cflags bullet ode 2>/dev/null)

$(BUILD)/bench/%: test/bench/%.c $(BUILD)/libkcc.a test/bench/bench.h | deps-bench
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itest/bench $< $(BUILD)/libkcc.a -o $@ $(LDLIBS_ALL)
$(BUILD)/bench/%: test/bench/%.cpp $(BUILD)/libkcc.a test/bench/bench.h | deps-bench
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(OPT) -g -Wall -Wextra $(FPFLAGS) $(INCLUDES) $(CGLM_CFLAGS) $(BENCH_INC) -Itest/bench \
	  $< $(BUILD)/libkcc.a -o $@ $(BENCH_LIBS) $(LDLIBS_ALL)

bench: deps-bench lib
	$(MAKE) --no-print-directory $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b $(LEVELS) || exit 1; done

run: bench

# ---------------------------------------------------------------- install
install: lib
	install -d $(DESTDIR)$(PREFIX)/include/kcc $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(PUB_HDR) $(DESTDIR)$(PREFIX)/include/kcc/
	install -m 644 $(BUILD)/libkcc.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libkcc.so $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' docs/kcc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/kcc.pc

clean:
	rm -rf $(BUILD)
