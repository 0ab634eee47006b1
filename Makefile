# wasmsched build entry points. `make help` lists the targets.
#
# Heavy things are cached outside the clone: TinyGo in
# $XDG_CACHE_HOME/wasmsched (default ~/.cache/wasmsched, see hack/tinygo.sh),
# Go builds and modules in GOCACHE and GOMODCACHE.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules --no-print-directory

GO ?= go

# Pinned Go tools, run with `go run pkg@version` (the proxy and sumdb verify them;
# the built binaries are cached in GOCACHE). staticcheck v0.8.2 is 2026.2.2,
# which supports Go 1.26; benchstat is golang.org/x/perf of 2026-09-08.
STATICCHECK_VERSION := v0.8.2
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
BENCHSTAT := $(GO) run golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

# Packages tested with -race (the concurrent ones); everything else runs without.
RACE_PKGS ?= ./host/... ./cmd/...
# Extra flags for both go test runs of `make test`, e.g. GOTEST_FLAGS=-v.
GOTEST_FLAGS ?=
# Flags of the demo, e.g. DEMO_FLAGS="-nodes 500 -keep" (keep running until Ctrl-C).
DEMO_FLAGS ?=

# make bench BENCH=Less BENCH_PKGS=./host/... BENCH_COUNT=10 BENCH_OLD=old.out
BENCH ?= .
BENCH_PKGS ?= ./...
BENCH_COUNT ?= 6
BENCH_OLD ?=
# make bench-e2e PERF_FLAGS="-workloads SchedulingBasic -rounds 1 -soak-cycles 0" PERF_OUT=/tmp/perf
# (go run ./e2e/perf -h lists the flags; a full run of all 15 workloads took ~85 min on 2 cores, and the
# 16th, ConstraintMix, adds an estimated ~15 min and the 17th, ChurnAffinity, ~5 min; the ceiling, run by
# default since issue 31, about a third more; -rounds 1 takes about a third of the default 3).
PERF_FLAGS ?=
# A dated directory, so that a run does not overwrite docs/benchmarks/README.md (the current table, by hand).
PERF_OUT ?= docs/benchmarks/run-$(shell date -u +%Y-%m-%d)

# The build's identity (hack/version.sh: a Go pseudo-version of the commit, or
# its tag), stamped into bin/wasmsched and the image: `wasmsched version`
# prints both. SOURCE_DATE_EPOCH overrides the image's timestamps (default:
# the commit time).
VERSION ?= $(shell hack/version.sh version)
COMMIT ?= $(shell hack/version.sh commit)
LDFLAGS = -X github.com/wasmsched/wasmsched/host/app/cli.buildVersion=$(VERSION) -X github.com/wasmsched/wasmsched/host/app/cli.buildCommit=$(COMMIT)

# Modules nested in the clone, outside ./... of the main one (each has its own
# go.mod, so the product's go.mod does not gain their dependencies): make test
# and make lint run them too.
NESTED_MODULES := hack/image

.PHONY: help
help: ## List the targets.
	@echo "Usage: make <target>"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/wasmsched (the scheduler) and bin/wasmsched-bench (the in-memory benchmark).
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/wasmsched ./cmd/wasmsched
	$(GO) build -o bin/wasmsched-bench ./cmd/wasmsched-bench

.PHONY: image
image: ## Build the container image without a container runtime (hack/image): build/wasmsched-oci (OCI layout), build/wasmsched.tar, build/wasmsched.sbom.cdx.json.
	$(GO) -C hack/image run . -repo ../.. -out ../../build -version "$(VERSION)" -commit "$(COMMIT)"

.PHONY: demo
demo: ## Start etcd, kube-apiserver and KWOK, run bin/wasmsched on a sample workload, print what happened, clean up.
	@hack/cluster.sh build kube-apiserver etcd kwok >/dev/null
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/wasmsched ./cmd/wasmsched
	$(GO) run ./e2e/demo -wasmsched bin/wasmsched $(DEMO_FLAGS)

.PHONY: cluster
cluster: ## Build the test control plane (kube-apiserver, etcd, KWOK, kube-controller-manager) and the reference kube-scheduler from the Go module proxy into the cache, if missing.
	@hack/cluster.sh build kube-apiserver etcd kwok kube-scheduler kube-controller-manager >/dev/null

.PHONY: test
test: tools cluster policies fixtures ## Rebuild policies and fixtures, check them against git, go vet, go test (-race on ./host/... and ./cmd/...).
	hack/verify-wasm.sh
	$(GO) vet ./...
	GO="$(GO)" RACE_PKGS="$(RACE_PKGS)" NESTED_MODULES="$(NESTED_MODULES)" hack/gotest.sh $(GOTEST_FLAGS)

.PHONY: tools
tools: ## Install the pinned tools: TinyGo v0.42.0 (built once into the cache), wabt, binaryen, staticcheck, benchstat.
	@hack/tinygo.sh >/dev/null
	@$(STATICCHECK) -version >/dev/null
	@$(BENCHSTAT) /dev/null >/dev/null

.PHONY: policies
policies: ## Build every guest (main.go marked //wasmsched:guest) with TinyGo into <dir>/<dir>.wasm.
	hack/policies.sh

.PHONY: fixtures
fixtures: ## Compile every *.wat under host/ and abi/ with wat2wasm into a .wasm next to it.
	hack/fixtures.sh

.PHONY: bench
bench: bench-micro bench-e2e ## Both: the micro-benchmarks, then the side-by-side harness against upstream kube-scheduler.

.PHONY: bench-micro
bench-micro: policies fixtures ## Run the Go benchmarks into bench.out and summarise them with benchstat.
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(BENCH_COUNT) -timeout 60m $(BENCH_PKGS) | tee bench.out
	@echo "bench: raw results in bench.out"
	@if ! $(BENCHSTAT) $(BENCH_OLD) bench.out; then \
	  if [ "$${CI:-}" = true ]; then echo "bench: benchstat failed" >&2; exit 1; fi; \
	  echo "bench: benchstat unavailable (needs the Go module proxy); raw results are in bench.out" >&2; \
	fi

.PHONY: bench-e2e
bench-e2e: cluster ## Upstream kube-scheduler vs wasmsched (native and Wasm policies) and the ceiling on one control plane, plus the memory soak; results in docs/benchmarks/run-DATE (PERF_OUT).
	$(GO) run ./e2e/perf -out $(PERF_OUT) $(PERF_FLAGS)

# make bench-scale SCALE_FLAGS="-nodes 1000,5000 -procs 2" SCALE_OUT=/tmp/scale
SCALE_FLAGS ?=
SCALE_OUT ?= docs/benchmarks/scale

.PHONY: bench-scale
bench-scale: ## wasmsched's CPU per pod, throughput and peak heap in memory at 1k/5k/15k nodes, 30k pods, GOMAXPROCS 1 and 2, plain and mix (SCALE_OUT).
	$(GO) run ./e2e/perf/scalecurve -out $(SCALE_OUT) $(SCALE_FLAGS)

# Seeds of e2e's TestNoLostWakeups that `make flake` runs besides its CI seeds (about 3.5 min each on
# 2 cores, output in build/storm.log); empty skips the storm.
FLAKE_STORM_SEEDS ?= 3,4,5,6,7,8,9,10

.PHONY: flake
flake: ## Run the timing-sensitive packages under -race -count=20 beside 2 busy loops; report failures (FLAKE_COUNT, FLAKE_LOAD, FLAKE_PKGS); then the event storm on FLAKE_STORM_SEEDS.
	hack/flake.sh
	@if [ -n "$(FLAKE_STORM_SEEDS)" ]; then \
	  echo "flake: TestNoLostWakeups on seeds $(FLAKE_STORM_SEEDS) (output in build/storm.log)" >&2; mkdir -p build; \
	  STORM_SEEDS=$(FLAKE_STORM_SEEDS) $(GO) test ./e2e -run '^TestNoLostWakeups$$' -count=1 -v -timeout 120m >build/storm.log 2>&1 \
	    || { grep -E -- '--- FAIL|pending at quiescence' build/storm.log >&2; echo "flake: TestNoLostWakeups FAILED; see build/storm.log" >&2; exit 1; }; \
	  grep -E 'pods pending at quiescence' build/storm.log >&2 || true; \
	fi

.PHONY: check
check: lint ## gofmt, go vet, staticcheck, the import rules, go mod tidy -diff, then make test.
	$(MAKE) test

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, the import rules (hack/imports.sh) and go mod tidy -diff only (nested modules included).
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then \
	  echo "lint: these files are not gofmt-ed (run 'gofmt -w' on them):" >&2; \
	  sed 's/^/  /' <<<"$$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	GO="$(GO)" STATICCHECK="$(STATICCHECK)" hack/staticcheck.sh
	GO="$(GO)" hack/imports.sh
	@if ! $(GO) mod tidy -diff; then \
	  echo "lint: go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2; exit 1; fi
	@for m in $(NESTED_MODULES); do \
	  echo "lint: $$m (nested module): go vet, staticcheck, go mod tidy -diff" >&2; \
	  $(GO) -C $$m vet ./...; \
	  (cd $$m && $(STATICCHECK) ./...); \
	  if ! $(GO) -C $$m mod tidy -diff; then \
	    echo "lint: $$m/go.mod/go.sum are not tidy: run 'go mod tidy' in $$m and commit the result" >&2; exit 1; fi; \
	done

.PHONY: clean
clean: ## Remove build outputs inside the clone (bin/, build/, bench.out, profiles); keeps the caches and committed .wasm.
	rm -rf bin build bench.out
	find . -type f -not -path './.git/*' \( -name '*.test' -o -name 'cover*.out' -o -name '*.coverprofile' -o -name '*.pprof' -o -name '*.prof' \) -print -delete
