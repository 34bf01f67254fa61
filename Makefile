GO ?= go
STATICCHECK_VERSION ?= v0.8.2
# The packages with concurrent code: run under the race detector in `make race` and CI.
RACE_PKGS ?= ./store/... ./identity/ ./remote/ ./mcptools/ ./query/ ./search/ ./http/ ./sources/... ./cmd/devgraph/
# fuzz: how long each fuzz target runs, and how long it may spend shrinking a new input
# (go test's default, 60s, can outlast a short -fuzztime and then fails the run with
# "context deadline exceeded" although nothing was found).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 3s
# The packages with cluster tests (build tag `cluster`) on real etcd members: `make test-cluster`
# runs those of them that exist.
CLUSTER_PKGS ?= ./internal/etcdtest/ ./cluster/ ./cmd/devgraph-load/
# chaos: SIGKILL rounds of each crash test.
CHAOS_ROUNDS ?= 100

# ADDR: where `make run` serves HTTP.
ADDR ?= 127.0.0.1:8080
# The build date `devgraph version` shows; the commit comes from the VCS stamp, which
# -buildvcs=auto asks for even where GOFLAGS says -buildvcs=false.
BUILD_DATE := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDFLAGS := -buildvcs=auto -trimpath -ldflags "-X main.buildDate=$(BUILD_DATE)"

.PHONY: run test test-slow test-cluster bench build install man vet fmt load lint race chaos fuzz staticcheck tidy-check

# run: the demo server on ADDR. The recipe execs the binary, so the process make starts
# is the server: its pid is the server's, and Ctrl-C or SIGTERM stops it.
run: build
	exec bin/devgraph serve --demo --http $(ADDR)

build:
	$(GO) build $(BUILDFLAGS) -o bin/devgraph ./cmd/devgraph

# install: into $GOBIN, else the first GOPATH's bin (~/go/bin).
install:
	$(GO) install $(BUILDFLAGS) ./cmd/devgraph
	@dir="$$($(GO) env GOBIN)"; [ -n "$$dir" ] || dir="$$($(GO) env GOPATH | cut -d: -f1)/bin"; \
	echo "installed $$dir/devgraph"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH; add it: export PATH=\"$$dir:\$$PATH\"";; esac

# man: one man page per command into bin/man/man1 (generated, never committed).
man: build
	bin/devgraph __man bin/man/man1

# test: every test (vet first). A warm run stays under 2 minutes on 2 cores.
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# test-slow: the tests tagged `slow`, which drive the whole CLI many times over (every table
# verb at 80 columns and wide, in a pipe and on a terminal) or build and install devgraph from a
# fresh clone; kept out of `make test` so that stays under 2 minutes. .ci/run runs it.
test-slow:
	$(GO) test -count=1 -tags slow -run '^(TestTables|TestInstall_FromClone)$$' ./cmd/devgraph/

# test-cluster: the tests tagged `cluster`, on real etcd 3.7 members (child processes on
# loopback, built once from the pinned etcd module by internal/etcdtest; no download).
# The CLI's cluster tests (TestClusterCLI_*, TestCluster_*) run alone: the rest of cmd/devgraph is make test's.
test-cluster:
	$(GO) test -count=1 -tags cluster -timeout 10m $(wildcard $(CLUSTER_PKGS))
	$(GO) test -count=1 -tags cluster -timeout 10m -run '^TestCluster(CLI)?_' ./cmd/devgraph/

# lint: formatting, vet, staticcheck and a tidy module.
lint: tidy-check staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

tidy-check:
	$(GO) mod tidy -diff

# race: the concurrent packages under the race detector.
race:
	$(GO) test -count=1 -race $$($(GO) list $(RACE_PKGS) 2>/dev/null)

# chaos: the crash tests, CHAOS_ROUNDS SIGKILLs each on one file: store's (a writer
# process) and the real server's (`devgraph serve --http` under MCP in both eras, GraphQL
# and CLI writers). DEVGRAPH_CRASH_SEED=<seed from the log> replays the server test's kills.
chaos:
	DEVGRAPH_CRASH_ROUNDS=$(CHAOS_ROUNDS) $(GO) test -count=1 -run '^TestCrash_SIGKILL$$' -timeout 30m ./store/
	DEVGRAPH_CRASH_ROUNDS=$(CHAOS_ROUNDS) $(GO) test -count=1 -v -run '^TestCrash_Server$$' -timeout 30m ./cmd/devgraph/

# fuzz: every fuzz target for FUZZTIME each (.ci/fuzz.sh); a failing input is saved to the
# package's testdata/fuzz corpus, where `go test` replays it.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) .ci/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# load: the stack under load over loopback, one table row per phase (LOAD_ARGS e.g. --db /tmp/load.db).
load:
	$(GO) run ./cmd/devgraph-load $(LOAD_ARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')
