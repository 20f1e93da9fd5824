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
#   make deb        build/deb/*.deb: the packages tapless, libtapless-stamp
#   make deps       install missing Debian packages (root)

ifeq ($(origin CC),default)
CC := gcc
endif
PREFIX ?= /usr/local
DESTDIR ?=
datadir ?= $(PREFIX)/share
# The units read /etc/tapless whatever the PREFIX (scripts/*.service.in).
sysconfdir ?= /etc
# Debian 12's packages keep their units in /lib/systemd/system (make deb).
unitdir ?= $(PREFIX)/lib/systemd/system
PKGS := libnl-3.0 libnl-genl-3.0 libnl-route-3.0 libpcap

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
# libcurl: tapless export's ClickHouse client (src/export/chttp.c). Only the
# CLI and the unit tests link it: the daemons never pull chttp.o from the
# archive.
CURL_CFLAGS := $(shell pkg-config --cflags libcurl 2>/dev/null)
CURL_LIBS := $(shell pkg-config --libs libcurl 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Includes name their folder ("base/xalloc.h", "ptp/journal.h"), so every
# file says which part of the tree it leans on.
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -Isrc -I. $(PKG_CFLAGS) $(CURL_CFLAGS)
CFLAGS ?=
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LIBS := $(PKG_LIBS) -lm

# The library, libtapless.a: one folder per concept (README, "Architecture
# in brief"), and no main in any of them.
LIB_DIRS := src/base src/stamp src/live src/files src/fix src/corr src/sim \
	src/report src/validate src/export src/hwsim ptp
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
# Generated: the ptp4l profile templates (ptp/profiles/*.cfg) as C strings,
# the installed paths (base/datadir.h) and the version (base/prog.h).
PROFILES := $(wildcard ptp/profiles/*.cfg)
GEN_SRCS := build/gen/profiles.c build/gen/paths.c build/gen/version.c
# The version every program prints ("tapless-capd 0.1-g857864a"). In a git
# tree, git describe: the last tag, or VERSION and the commit while there
# is no tag, "-dirty" with uncommitted changes; outside one (a release
# tarball), VERSION. PROG_VERSION=... on the command line gives it
# instead: make deb's copy of the tree, no git checkout, keeps the tree's.
VERSION := 0.1
PROG_VERSION = $(shell if [ -z "$$(git rev-parse --show-cdup 2>/dev/null || echo no)" ]; then \
	git describe --tags --dirty 2>/dev/null || \
	{ h=$$(git describe --always --dirty 2>/dev/null) && echo "$(VERSION)-g$$h"; } || \
	echo '$(VERSION)'; else echo '$(VERSION)'; fi)

# The programs: each folder holds one program and nothing else, except the
# probes, which share probes/probe.c: each probes/*.c but probe.c is a
# program, and probes/pingpong/ is tapless-pingpong alone.
TAPLESS_SRCS := $(wildcard src/cli/*.c)
CAPD_SRCS := $(wildcard src/capd/*.c)
SYNCD_SRCS := $(wildcard ptp/syncd/*.c)
PROBE_COMMON := probes/probe.c
PROBE_MAINS := $(filter-out $(PROBE_COMMON),$(wildcard probes/*.c))
PROBE_BINS := $(PROBE_MAINS:probes/%.c=bin/tapless-%)
PINGPONG_SRCS := $(wildcard probes/pingpong/*.c)
# tapless-stamp: the wrapper, and the preload library it puts under a
# program. The library is its own sources and the few library modules it
# needs (the stamp hand-over, frame parsing, a log level's name), built
# position-independent into objects of their own: nothing else of
# libtapless.a (no libnl, no libpcap) enters the programs it is loaded
# into, and it exports only the functions it interposes. hmap gives the
# wire hash; xalloc, which hmap's tables need, is linked for them, and
# --gc-sections drops both tables and xalloc: no path of the library can
# end the program on an allocation failure.
SHIMRUN_SRCS := $(wildcard src/shimrun/*.c)
SHIM_SRCS := $(wildcard src/shim/*.c)
SHIM_LIB_SRCS := src/live/txsock.c src/files/frame.c src/base/log.c src/base/hmap.c \
	src/base/xalloc.c src/base/errbuf.c
SHIM_LIB := bin/libtapless-stamp.so
# tapless-hwsim: the wrapper, and the preload library that simulates a
# host's NIC clocks and stamps (src/hwsimlib), built like the shim's from
# position-independent objects: its own sources and the simulated host's
# state (src/hwsim) and the errbuf_set() its messages go through, nothing
# else of libtapless.a.
HWSIMRUN_SRCS := $(wildcard src/hwsimrun/*.c)
HWSIM_LIB_SRCS := $(wildcard src/hwsimlib/*.c) \
	$(filter-out src/hwsim/hwsim_truth.c,$(wildcard src/hwsim/*.c)) \
	src/base/errbuf.c
HWSIM_LIB := bin/libtapless-hwsim.so

# capd --stamp-cgroup: the BPF program src/bpf/stamp.bpf.c, compiled by
# clang against a vmlinux.h that bpftool dumps from the kernel's BTF, and
# loaded through a libbpf skeleton (build/gen/stamp.skel.h). Without
# clang, bpftool, libbpf or a BTF with BPF TX timestamping (Linux >= 6.15)
# everything else builds, and capd and 'tapless ifinfo' say why cgroup
# stamping is unavailable. BPF=0 leaves it out; BPF_BTF=FILE builds
# against another kernel's BTF (CO-RE: any kernel from 6.15 on runs it).
# src/bpf is not part of libtapless.a: only capd links libbpf; the CLI
# takes bpfstamp_check.o, which does without.
BPF ?= auto
BPF_CLANG ?= clang
BPF_BTF ?= /sys/kernel/btf/vmlinux
BPFTOOL ?= $(firstword $(shell command -v bpftool 2>/dev/null) \
	$(wildcard /usr/sbin/bpftool /sbin/bpftool))
ifeq ($(BPF),auto)
override BPF := $(shell command -v $(BPF_CLANG) >/dev/null 2>&1 && \
	[ -n "$(BPFTOOL)" ] && pkg-config --exists libbpf 2>/dev/null && \
	grep -qa bpf_sock_ops_enable_tx_tstamp $(BPF_BTF) 2>/dev/null && \
	echo 1 || echo 0)
endif
ifeq ($(BPF),1)
BPF_SRCS := src/bpf/bpfstamp.c src/bpf/bpfstamp_check.c src/bpf/bpfstamp_ports.c
BPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null)
else
BPF_SRCS := src/bpf/bpfstamp_none.c src/bpf/bpfstamp_check.c \
	src/bpf/bpfstamp_ports.c
BPF_LIBS :=
endif

# Objects mirror their sources' paths (build/obj/src/base/xalloc.o): two
# files of one name in two folders never collide.
obj = $(patsubst %.c,build/obj/%.o,$(1))
san = $(patsubst %.c,build/san/%.o,$(1))
pic = $(patsubst %.c,build/pic/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS) $(GEN_SRCS))
SAN_LIB_OBJS := $(call san,$(LIB_SRCS) $(GEN_SRCS))
TAPLESS_OBJS := $(call obj,$(TAPLESS_SRCS))
SAN_TAPLESS_OBJS := $(call san,$(TAPLESS_SRCS))
CAPD_OBJS := $(call obj,$(CAPD_SRCS))
BPF_OBJS := $(call obj,$(BPF_SRCS))
BPF_CHECK_OBJ := $(call obj,src/bpf/bpfstamp_check.c)
SAN_BPF_CHECK_OBJ := $(call san,src/bpf/bpfstamp_check.c)
SYNCD_OBJS := $(call obj,$(SYNCD_SRCS))
PROBE_COMMON_OBJS := $(call obj,$(PROBE_COMMON))
PINGPONG_OBJS := $(call obj,$(PINGPONG_SRCS))
SHIMRUN_OBJS := $(call obj,$(SHIMRUN_SRCS) src/shim/shim_filter.c)
SHIM_OBJS := $(call pic,$(SHIM_SRCS) $(SHIM_LIB_SRCS))
HWSIMRUN_OBJS := $(call obj,$(HWSIMRUN_SRCS))
HWSIM_OBJS := $(call pic,$(HWSIM_LIB_SRCS))

PROGS := bin/tapless bin/tapless-capd bin/tapless-syncd bin/tapless-stamp \
	bin/tapless-hwsim $(PROBE_BINS) bin/tapless-pingpong
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=build/san/unit/%)
TOOL_SRCS := $(filter-out %.bpf.c,$(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=build/tools/%)
# tc programs the tests attach (tests/tools/*.bpf.c): need only clang and
# libbpf's headers, not the kernel's TX-stamping BTF; a test without the
# object skips what needs it.
ifneq ($(shell command -v $(BPF_CLANG) >/dev/null 2>&1 && \
	[ -e /usr/include/bpf/bpf_helpers.h ] && echo 1),)
TOOL_BINS += $(patsubst tests/tools/%.bpf.c,build/tools/%.bpf.o,\
	$(wildcard tests/tools/*.bpf.c))
endif
ifneq ($(shell pkg-config --exists liburing 2>/dev/null && echo 1),1)
TOOL_BINS := $(filter-out build/tools/uring_send build/tools/uring_rcv,$(TOOL_BINS))
endif
ALL_OBJS := $(LIB_OBJS) $(SAN_LIB_OBJS) $(TAPLESS_OBJS) $(SAN_TAPLESS_OBJS) \
	$(CAPD_OBJS) $(BPF_OBJS) $(SAN_BPF_CHECK_OBJ) $(SYNCD_OBJS) \
	$(PROBE_COMMON_OBJS) $(call obj,$(PROBE_MAINS)) $(PINGPONG_OBJS) \
	$(SHIMRUN_OBJS) $(SHIM_OBJS) $(call san,src/shim/shim_filter.c src/shim/shim_errq.c) \
	$(HWSIMRUN_OBJS) $(HWSIM_OBJS)

.PHONY: all check unit replay system manlint optcheck promcheck layering demo bench fuzz install deb deps clean lib-srcs FORCE
all: $(PROGS) $(SHIM_LIB) $(HWSIM_LIB) $(TOOL_BINS)

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<
build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -MMD -MP -c -o $@ $<
build/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fPIC -fvisibility=hidden -ffunction-sections \
		-fdata-sections $(CFLAGS) -MMD -MP -c -o $@ $<
# Generated sources compile like the others, from build/gen.
build/obj/build/gen/%.o: build/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<
build/san/build/gen/%.o: build/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -c -o $@ $<

build/gen/profiles.c: $(PROFILES) scripts/embed-profiles
	@mkdir -p $(dir $@)
	scripts/embed-profiles $(PROFILES) > $@.tmp && mv $@.tmp $@
# Rewritten only when PREFIX or datadir gives other paths: then paths.o is
# rebuilt and every program relinked, nothing else.
build/gen/paths.c: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* Generated by the Makefile from PREFIX and datadir. */' \
		'#include "base/datadir.h"' \
		'const char datadir_libexec[] = "$(PREFIX)/lib/tapless";' \
		'const char datadir_share[] = "$(datadir)/tapless";' > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# Rewritten only when the version changes (a commit, a tag, the tree turning
# dirty or clean): then version.o is rebuilt and every program relinked,
# nothing else.
build/gen/version.c: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* Generated by the Makefile from git describe or VERSION. */' \
		'#include "base/prog.h"' \
		'const char tapless_version[] = "$(PROG_VERSION)";' > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# Rewritten only when BPF changes: then src/bpf is rebuilt, nothing else.
build/gen/bpfconf.h: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* Generated by the Makefile: BPF=$(BPF). */' \
		$(if $(filter 1,$(BPF)),'#define TAPLESS_HAVE_BPF 1') > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# The BPF program and its skeleton. The object is linked once by bpftool
# (gen object), which drops clang's DWARF: the skeleton embeds 50 KB, not
# 700 KB. vmlinux.h is dumped again when the BTF is newer (a new kernel).
build/gen/vmlinux.h: $(BPF_BTF)
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $(BPF_BTF) format c > $@.tmp && mv $@.tmp $@
build/gen/stamp.bpf.o: src/bpf/stamp.bpf.c src/bpf/stamp_ev.h build/gen/vmlinux.h
	$(BPF_CLANG) -target bpf -O2 -g -Wall -Werror -Isrc -Ibuild/gen -c -o $@ $<
build/gen/stamp.skel.h: build/gen/stamp.bpf.o
	$(BPFTOOL) gen object build/gen/stamp.o $<
	$(BPFTOOL) gen skeleton build/gen/stamp.o name stamp > $@.tmp && mv $@.tmp $@
# The lab's tc program that clears TCP's departure time off the hosts'
# frames (scripts/lab, tapless-lab(8)): built wherever clang is, beside
# the lab script when installed; a lab without it says so.
LAB_BPF := $(if $(shell command -v $(BPF_CLANG) 2>/dev/null),build/gen/edt_clear.bpf.o)
all: $(LAB_BPF)
build/gen/edt_clear.bpf.o: src/bpf/edt_clear.bpf.c
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -target bpf -O2 -g -Wall -Werror \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<
$(BPF_OBJS) $(SAN_BPF_CHECK_OBJ): build/gen/bpfconf.h
$(BPF_OBJS) $(SAN_BPF_CHECK_OBJ): BASE_CFLAGS += -Ibuild/gen
build/obj/src/bpf/bpfstamp.o: build/gen/stamp.skel.h

# The library's sources, generated ones made first (tests/fuzz/run builds
# them with clang).
lib-srcs: $(GEN_SRCS)
	@echo $(LIB_SRCS) $(GEN_SRCS)

build/libtapless.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
build/san/libtapless.a: $(SAN_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

bin/tapless: $(TAPLESS_OBJS) $(BPF_CHECK_OBJ) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS) $(CURL_LIBS)

# The same CLI built on the sanitizer library (ASan+UBSan, no recovery):
# the replay tier runs it (TAPLESS=build/san/bin/tapless). It finds the
# plot templates as bin/tapless does, through bin/../scripts.
build/san/bin/tapless: $(SAN_TAPLESS_OBJS) $(SAN_BPF_CHECK_OBJ) build/san/libtapless.a
	@mkdir -p $(dir $@)
	@ln -sfn ../../scripts build/san/scripts
	$(CC) $(BASE_CFLAGS) $(SAN) $(CFLAGS) -o $@ $^ $(LIBS) $(CURL_LIBS)

bin/tapless-capd: $(CAPD_OBJS) $(BPF_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS) $(BPF_LIBS)

bin/tapless-syncd: $(SYNCD_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

bin/tapless-stamp: $(SHIMRUN_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

# -z defs: every symbol it needs is in it or in the C library.
# --wrap: the calls the library's shared modules (txsock.c, frame.c) make
# to functions it interposes reach __wrap_* (shim_real.c), which go
# straight to the C library: not to its own wrappers, which would refuse
# to close its own descriptors (a leak per reconnection to capd).
SHIM_WRAP := socket connect close send poll getsockopt
$(SHIM_LIB): $(SHIM_OBJS)
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -fPIC -Wl,-z,defs -Wl,-z,now \
		-Wl,--gc-sections $(SHIM_WRAP:%=-Wl,--wrap=%) -o $@ $^ -ldl -lpthread

bin/tapless-hwsim: $(HWSIMRUN_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

$(HWSIM_LIB): $(HWSIM_OBJS)
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -fPIC -Wl,-z,defs -Wl,-z,now \
		-Wl,--gc-sections -o $@ $^ -ldl -lm

$(PROBE_BINS): bin/tapless-%: build/obj/probes/%.o $(PROBE_COMMON_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

bin/tapless-pingpong: $(PINGPONG_OBJS) build/libtapless.a
	@mkdir -p bin
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

# Helper programs for the tests and the demo; not installed.
# uring_send needs only liburing and is linked statically: the sender of
# test_stamp_cgroup.sh that a preload shim could not reach (io_uring, no
# dynamic loader). Without liburing it is left out and the test says so.
build/tools/uring_send: tests/tools/uring_send.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -static -o $@ $< -luring
# uring_rcv: the opposite, liburing's shared library, for the shim's
# conformance test (test_shim_conform.sh).
build/tools/uring_rcv: tests/tools/uring_rcv.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -luring
build/tools/%.bpf.o: tests/tools/%.bpf.c
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -target bpf -O2 -g -Wall -Werror \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

build/tools/%: tests/tools/%.c build/libtapless.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(LIBS)

# The preload library's pure parts (lists, error queue messages, anchors)
# are no part of libtapless.a: their test links them itself.
build/san/unit/test_shim: tests/unit/test_shim.c tests/unit/unit.h \
		$(call san,src/shim/shim_filter.c src/shim/shim_errq.c) build/san/libtapless.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CHECK_CFLAGS) $(CFLAGS) -Itests/unit -o $@ \
		$< $(filter %.o,$^) build/san/libtapless.a $(LIBS) $(CHECK_LIBS)

# The QuickFIX test engines (tests/qf, C++, Debian's libquickfix-dev), run
# by tests/system/test_quickfix.sh: build/tools/qf-initiator and
# qf-acceptor. C++14, not 17: QuickFIX 1.15's headers declare dynamic
# exception specifications, which C++17 rejects.
QF_SRCS := $(wildcard tests/qf/*.cpp)
QF_BINS := $(QF_SRCS:tests/qf/%.cpp=build/tools/qf-%)
all: $(QF_BINS)
build/tools/qf-%: tests/qf/%.cpp tests/qf/qf.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++14 -O2 -g -Wall -Wextra -Werror -o $@ $< -lquickfix -lpthread

build/san/unit/%: tests/unit/%.c tests/unit/unit.h build/san/libtapless.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) $(CHECK_CFLAGS) $(CFLAGS) -Itests/unit -o $@ \
		$< build/san/libtapless.a $(LIBS) $(CURL_LIBS) $(CHECK_LIBS)

deps:
	@if [ "$$(id -u)" -eq 0 ]; then scripts/install-deps; \
	elif ! scripts/install-deps --check; then \
		echo "make: as root, run: sudo scripts/install-deps"; exit 1; fi

# The build on every core; then the tiers one after another: the unit and
# replay tests as many at once as there are cores (tests/pool), the system
# tests one at a time, as their timings assume.
check: deps
	@$(MAKE) --no-print-directory -j$$(nproc) all $(UNIT_BINS) build/san/bin/tapless
	@$(MAKE) --no-print-directory unit replay manlint optcheck promcheck layering system

unit: $(UNIT_BINS)
	@tests/run-unit $(UNIT_BINS)

replay: all build/san/bin/tapless
	@TAPLESS=build/san/bin/tapless tests/replay/run

manlint: all
	@tests/manlint

# One letter, one meaning across the programs (tapless(8) OPTION LETTERS),
# and every form --help prints parsing back.
optcheck: all
	@tests/optcheck

# The shipped alert rules (promtool check and test rules) and dashboard.
promcheck:
	@tests/promcheck

layering:
	@tests/layering

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

# The ClickHouse tables and queries over tapless export's records
# (tapless-export(8), THE SQL). The queries are made from templates that
# hold what they share once (scripts/clickhouse/sqlgen), beside the others
# in scripts/clickhouse/ so that they are where the pages say.
CH = scripts/clickhouse
CH_HOPS := $(CH)/hops.sql $(CH)/hops_per_minute.sql $(CH)/hops_by_session.sql
CH_QUERIES := $(CH_HOPS) $(CH)/transactions.sql
CLICKHOUSE_SQL := $(CH_QUERIES) $(CH)/schema.sql $(CH)/distributed.sql $(CH)/README.md

all: $(CH_QUERIES)
$(CH_HOPS): $(CH)/%.sql: $(CH)/hops.sql.in $(CH)/sqlgen
	$(CH)/sqlgen $< $* > $@.tmp && mv $@.tmp $@
$(CH)/transactions.sql: $(CH)/transactions.sql.in $(CH)/sqlgen
	$(CH)/sqlgen $< total minute sql > $@.tmp && mv $@.tmp $@

# What it installs, not "all": no test tool is built or relinked for it
# (make deb's copy relinks only these after PREFIX=/usr).
install: $(PROGS) $(SHIM_LIB) $(HWSIM_LIB) $(LAB_BPF) $(CH_QUERIES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
		$(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	for m in man/*.[1578]; do s=$${m##*.}; \
		install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/ || exit 1; done
	install -d $(DESTDIR)$(PREFIX)/lib/tapless
	install -m 755 scripts/lab $(DESTDIR)$(PREFIX)/lib/tapless/lab
	$(if $(LAB_BPF),install -m 644 $(LAB_BPF) $(DESTDIR)$(PREFIX)/lib/tapless/)
	install -m 755 $(SHIM_LIB) $(DESTDIR)$(PREFIX)/lib/tapless/
	install -m 755 $(HWSIM_LIB) $(DESTDIR)$(PREFIX)/lib/tapless/
	install -d $(DESTDIR)$(datadir)/tapless/plot
	install -m 644 scripts/plot/*.gp $(DESTDIR)$(datadir)/tapless/plot/
	install -d $(DESTDIR)$(datadir)/tapless/clickhouse
	$(if $(CLICKHOUSE_SQL),install -m 644 $(CLICKHOUSE_SQL) $(DESTDIR)$(datadir)/tapless/clickhouse/)
# The alert rules and the dashboard (tapless-prometheus(7)), for the
# operator's Prometheus and Grafana to load from here.
	install -d $(DESTDIR)$(datadir)/tapless/prometheus $(DESTDIR)$(datadir)/tapless/grafana
	install -m 644 scripts/prometheus/tapless-rules.yml $(DESTDIR)$(datadir)/tapless/prometheus/
	install -m 644 scripts/grafana/tapless.json $(DESTDIR)$(datadir)/tapless/grafana/
	install -d $(DESTDIR)$(unitdir)
	for u in scripts/*.service.in; do n=$$(basename $$u .in); \
		sed 's|@BINDIR@|$(PREFIX)/bin|g' $$u > $(DESTDIR)$(unitdir)/$$n || exit 1; done
# Commented examples of what the units read; tapless.conf also in
# /etc/tapless, so the syncd unit finds one, but never over a file
# that is there (the user's).
	install -d $(DESTDIR)$(datadir)/tapless/examples $(DESTDIR)$(sysconfdir)/tapless
	install -m 644 scripts/examples/* $(DESTDIR)$(datadir)/tapless/examples/
	[ -e $(DESTDIR)$(sysconfdir)/tapless/tapless.conf ] || \
		install -m 644 scripts/examples/tapless.conf $(DESTDIR)$(sysconfdir)/tapless/

# The Debian packages (debian/): build/deb/tapless_V_ARCH.deb and
# libtapless-stamp_V_ARCH.deb, from what "make all" built, compiling only
# the generated paths (PREFIX=/usr) and version. dpkg-buildpackage runs in a
# copy of the tree and its build, build/deb/src: it writes into the parent
# folder (build/deb, not the tree's), and the copy's "make install
# PREFIX=/usr" relinks programs there, leaving bin/ as "make" built it.
# V is PROG_VERSION as a Debian version (debian/rules): no "v", "-" as "+".
# The changelog's top entry is written with it in the copy only.
DEB_VERSION = $(shell echo '$(PROG_VERSION)' | sed 's/^v//; s/-/+/g')
deb: all
	rm -rf build/deb
	mkdir -p build/deb/src
	tar -c --exclude=./build/deb --exclude=./build/san --exclude=./.git . | \
		tar -x -C build/deb/src
	{ printf 'tapless (%s) unstable; urgency=medium\n\n  * Built by make deb from %s.\n\n -- %s  %s\n\n' \
		'$(DEB_VERSION)' '$(PROG_VERSION)' \
		"$$(sed -n 's/^Maintainer: //p' debian/control)" "$$(date -R)"; \
		cat debian/changelog; } > build/deb/src/debian/changelog
	cd build/deb/src && PROG_VERSION='$(PROG_VERSION)' \
		dpkg-buildpackage -b -us -uc --no-check-builddeps > ../build.log 2>&1 || \
		{ tail -20 ../build.log; exit 1; }
	rm -rf build/deb/src
	@ls build/deb/*.deb

clean:
	rm -rf build bin $(CH_QUERIES)

-include $(ALL_OBJS:.o=.d)
