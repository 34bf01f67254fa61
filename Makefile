GO ?= go

.PHONY: run test bench build vet fmt

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

fmt:
	gofmt -w $$(git ls-files '*.go')
