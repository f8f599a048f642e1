# streamsql — make targets. `make` alone lists them.
GO ?= go
PKGS := ./...

.PHONY: help build test testrace bench lint fmt vet fuzz demo oracle

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'

build: ## build the streamsql binary (CGO_ENABLED=0) into ./bin
	CGO_ENABLED=0 $(GO) build -o bin/streamsql ./cmd/streamsql

test: lint ## run every test: unit, sqllogictest, crash, and the DuckDB oracle
	$(GO) test -count=1 $(PKGS)
	$(MAKE) oracle

oracle: ## differential tests against DuckDB (nested test-only module, cgo)
	cd tests/oracle && CGO_ENABLED=1 $(GO) test -count=1 ./...

testrace: ## run the tests with the race detector (short: fewer crash runs, smaller spills)
	$(GO) test -race -short -count=1 $(PKGS)

bench: ## run the benchmarks (engine vs hand-written loop vs DuckDB)
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./bench/
	cd tests/oracle && CGO_ENABLED=1 $(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...

lint: vet ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet
	$(GO) vet $(PKGS)

fmt: ## gofmt everything
	gofmt -w $$(git ls-files '*.go')

fuzz: ## fuzz the SQL front pass, the engine, the Kafka JSON decoder, the segment decoder and JSON_VALUE for 60s each
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./sql/
	$(GO) test -run '^$$' -fuzz FuzzExec -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 60s ./connector/
	$(GO) test -run '^$$' -fuzz FuzzDecodeSegment -fuzztime 60s ./exec/
	$(GO) test -run '^$$' -fuzz FuzzJSONValue -fuzztime 60s ./exec/

demo: ## run the quickstart through the shell on an in-memory database (non-interactively)
	$(GO) run ./cmd/streamsql -f examples/quickstart.sql
