# Link's build. `make demo` and `make test` do all the set-up on a fresh
# Debian machine; see README.md.
SHELL := /bin/bash
BIN   := $(CURDIR)/bin
GO    ?= go
export GOFLAGS := -buildvcs=false

BINARIES := $(patsubst cmd/%/,%,$(wildcard cmd/*/))
# lnk version names the commit it was built from (cli/version.go).
VERSION  := $(shell git describe --always --dirty 2>/dev/null)
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X lnk.dev/lnk/cli.version=$(VERSION) -X lnk.dev/lnk/cli.commit=$(COMMIT)
# make install: every binary into $(PREFIX)/bin (lnk finds its helpers
# beside itself), completions and man pages under $(PREFIX)/share, and
# the manifest make uninstall removes by (scripts/install.sh).
PREFIX   ?= /usr/local
DESTDIR  ?=
INSTALL  := GO="$(GO)" BIN="$(BIN)" PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh
# Built CGO_ENABLED=0: static, no ld.so or libc to map at every start.
# lnk links no cgo of its own (net and os/user fall back to pure Go);
# lnk-netbroker embeds its seccomp filter as BPF (cmd/lnk-netbroker/filter.go);
# lnk-file-tool, what the file tool's sandbox runs, links apply alone;
# lnk-web resolves with Go's own resolver, so no NSS module of the
# machine's is loaded into the process that judges the answers;
# lnk-harness, what an agent's sandbox runs by default, links no cgo;
# lnk-memory's SQLite is cgo-free (ncruces, docs/ARCHITECTURE.md);
# the brokers that link libseccomp stay dynamic.
STATIC   := lnk-init lnk lnk-netbroker lnk-file-tool lnk-web lnk-harness lnk-memory

.PHONY: all deps build vet test test-go test-user demo bench fuzz clean install uninstall deb

all: build

deps:
	@scripts/install-deps.sh

build:
	@mkdir -p $(BIN)
	@for b in $(BINARIES); do \
	  if echo " $(STATIC) " | grep -q " $$b "; then cgo=0; else cgo=1; fi; \
	  CGO_ENABLED=$$cgo $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/$$b ./cmd/$$b || exit 1; \
	done

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above are not formatted"; exit 1; }

test: deps build vet test-go test-user

test-go:
	LNK_BIN=$(BIN) $(GO) test -count=1 -timeout 20m ./...

test-user:
	@scripts/test-as-user.sh

demo: deps build
	@scripts/demo.sh

bench: deps build
	@scripts/bench.sh

fuzz:
	@scripts/fuzz.sh

install: build
	@$(INSTALL) install

uninstall:
	@$(INSTALL) uninstall

# lnk_<version>_<arch>.deb in $(BIN) (scripts/deb.sh).
deb: build
	@GO="$(GO)" BIN="$(BIN)" scripts/deb.sh

clean:
	rm -rf $(BIN)
