GO ?= go

.PHONY: run test bench build vet fmt load

# run: the main job as it stands.
run:
	$(GO) run ./cmd/devgraph serve --demo --http 127.0.0.1:8080

build:
	$(GO) build -o bin/devgraph ./cmd/devgraph

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# load: the stack under load over loopback, one table row per phase (LOAD_ARGS e.g. --db /tmp/load.db).
load:
	$(GO) run ./cmd/devgraph-load $(LOAD_ARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')
