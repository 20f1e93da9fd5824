# tapless — one entry point. See README.md.
#
#   make            build bin/ (programs) with -Werror
#   make check      install missing packages (root), unit tests and
#                   replay tests on files under ASan+UBSan
#                   (build/san/bin/tapless), man page lint, namespace
#                   tests (root)
#   make demo       the main job: see README.md
#   make bench      benchmarks (figures printed, never pass/fail)
#   make fuzz       fuzz targets, FUZZ_SECONDS each (clang/libFuzzer)
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages (root)

ifeq ($(origin CC),default)
CC := gcc
endif
PREFIX ?= /usr/local
DESTDIR ?=
datadir ?= $(PREFIX)/share
PKGS := libnl-3.0 libnl-genl-3.0 libnl-route-3.0 libpcap

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -Isrc -Iptp $(PKG_CFLAGS) \
	-DTAPLESS_LIBEXECDIR='"$(PREFIX)/lib/tapless"' \
	-DTAPLESS_DATADIR='"$(datadir)/tapless"'
CFLAGS ?=
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The library: everything in src/ and ptp/ except the programs' own files.
PROG_SRCS := src/tapless.c $(wildcard src/cmd_*.c) src/capd.c ptp/syncd.c
LIB_SRCS := $(filter-out $(PROG_SRCS),$(wildcard src/*.c) $(wildcard ptp/*.c))
# Profile templates (ptp/profiles/*.cfg) are built in as C strings.
PROFILES := $(wildcard ptp/profiles/*.cfg)
LIB_OBJS := $(patsubst %.c,build/obj/%.o,$(notdir $(LIB_SRCS))) build/obj/profiles.o
SAN_LIB_OBJS := $(patsubst %.c,build/san/%.o,$(notdir $(LIB_SRCS))) build/san/profiles.o
vpath %.c src ptp

# Probes: probes/NAME.c is bin/tapless-NAME, one file each on the library.
PROBE_SRCS := $(wildcard probes/*.c)
PROBE_BINS := $(PROBE_SRCS:probes/%.c=bin/tapless-%)

PROGS := bin/tapless bin/tapless-capd bin/tapless-syncd $(PROBE_BINS)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=build/san/unit/%)
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=build/tools/%)

.PHONY: all check unit replay system manlint demo bench fuzz install deps clean
all: $(PROGS) $(TOOL_BINS)

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<
build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -MMD -MP -c -o $@ $<

build/gen/profiles.c: $(PROFILES) scripts/embed-profiles
	@mkdir -p $(dir $@)
	scripts/embed-profiles $(PROFILES) > $@.tmp && mv $@.tmp $@
build/obj/profiles.o: build/gen/profiles.c
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<
build/san/profiles.o: build/gen/profiles.c
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -c -o $@ $<

build/libtapless.a: $(LIB_OBJS)
	ar rcs $@ $^
build/san/libtapless.a: $(SAN_LIB_OBJS)
	ar rcs $@ $^

# tapless report and tapless validate find their gnuplot templates here once
# installed.

TAPLESS_OBJS := build/obj/tapless.o $(patsubst src/%.c,build/obj/%.o,$(wildcard src/cmd_*.c))
bin/tapless: $(TAPLESS_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# The same CLI built on the sanitizer library (ASan+UBSan, no recovery):
# the replay tier runs it (TAPLESS=build/san/bin/tapless). It finds the
# plot templates as bin/tapless does, through bin/../scripts.
SAN_TAPLESS_OBJS := $(TAPLESS_OBJS:build/obj/%=build/san/%)
build/san/bin/tapless: $(SAN_TAPLESS_OBJS) build/san/libtapless.a
	@mkdir -p $(dir $@)
	@ln -sfn ../../scripts build/san/scripts
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

bin/tapless-capd: build/obj/capd.o build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

bin/tapless-syncd: build/obj/syncd.o build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

build/obj/probes/%.o: probes/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(PROBE_BINS): bin/tapless-%: build/obj/probes/%.o build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# Helper programs for the tests and the demo; not installed.
build/tools/%: tests/tools/%.c build/libtapless.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

build/san/unit/%: tests/unit/%.c tests/unit/unit.h build/san/libtapless.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CHECK_CFLAGS) $(CFLAGS) -Itests/unit -o $@ \
		$< build/san/libtapless.a $(PKG_LIBS) $(CHECK_LIBS) -lm

deps:
	@if [ "$$(id -u)" -eq 0 ]; then scripts/install-deps; \
	elif ! scripts/install-deps --check; then \
		echo "make: as root, run: sudo scripts/install-deps"; exit 1; fi

check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS) build/san/bin/tapless
	@$(MAKE) --no-print-directory unit replay manlint system

unit: $(UNIT_BINS)
	@tests/run-unit $(UNIT_BINS)

replay: all build/san/bin/tapless
	@TAPLESS=build/san/bin/tapless tests/replay/run

manlint: all
	@tests/manlint

system: all
	@tests/system/run

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo

bench: all
	@if ls bench/*.sh >/dev/null 2>&1; then for b in bench/*.sh; do $$b || exit 1; done; \
	else echo "bench: no benchmarks yet"; fi

fuzz:
	@if [ "$$(id -u)" -eq 0 ]; then scripts/install-deps --fuzz; fi
	@tests/fuzz/run

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	for m in man/*.[158]; do s=$${m##*.}; \
		install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/ || exit 1; done
	install -d $(DESTDIR)$(PREFIX)/lib/tapless
	install -m 755 scripts/lab $(DESTDIR)$(PREFIX)/lib/tapless/lab
	install -d $(DESTDIR)$(datadir)/tapless/plot
	install -m 644 scripts/plot/*.gp $(DESTDIR)$(datadir)/tapless/plot/
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	for u in scripts/*.service.in; do n=$$(basename $$u .in); \
		sed 's|@BINDIR@|$(PREFIX)/bin|g' $$u > $(DESTDIR)$(PREFIX)/lib/systemd/system/$$n || exit 1; done

clean:
	rm -rf build bin

-include $(LIB_OBJS:.o=.d) $(SAN_LIB_OBJS:.o=.d) $(PROBE_SRCS:probes/%.c=build/obj/probes/%.d) \
	$(TAPLESS_OBJS:.o=.d) $(SAN_TAPLESS_OBJS:.o=.d) build/obj/capd.d build/obj/syncd.d
