# tdsbridge: the two commands a README reader runs are `make test` and `make bench`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 60s

# Platforms whose build `make test` checks besides this one (vet type-checks every package with
# its tests; no test binary is linked or run for them).
CROSS       ?= windows/amd64 darwin/arm64 linux/arm64 freebsd/amd64 illumos/amd64 aix/ppc64

.PHONY: test vet cross lint unit norace bench fuzz soak integration tdstest-image

## test: gofmt and go vet (here and for every CROSS platform), staticcheck, then every test
## twice: under the race detector, and without it, the pass in which the tests the detector
## excludes run (allocation counts such as prelogin's TestZeroAllocs and bridge's TestReadAllocs,
## and reliability's TestCancelStorm: see reliability/cancel_test.go). Each pass ends with its
## skipped tests counted by reason, the skips by design apart from what this machine lacks. Set
## TDSBRIDGE_REQUIRE_CLIENTS=1 to make a missing independent client (tsql, tedious, pytds) a
## failure instead of a skip, as .ci/run does.
test: vet cross lint unit norace

vet:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

cross:
	@pkgs=$$($(GO) list ./... | grep -v /integration); \
	fail=; for p in $(CROSS); do echo "go vet for $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet $$pkgs || fail="$$fail $$p"; done; \
	if [ -n "$$fail" ]; then echo "go vet failed for:$$fail"; exit 1; fi

lint:
	$(GO) run $(STATICCHECK) ./...

unit:
	GO=$(GO) $(GO) run ./scripts/testsummary -race -count=1 ./...
	@# The azuread example is a module of its own, so that the Azure SDK stays out of this one's.
	cd mssqlbridge/azureadexample && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	@# So are the integration suites, so that testcontainers-go and the Docker client stay out of
	@# users' module graphs (scripts/modgraph checks): vetted, linted and run here, containers
	@# included where a Docker engine answers.
	cd integration && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && \
		GO=$(GO) $(GO) run ../scripts/testsummary -race -count=1 -timeout 30m ./...

norace:
	GO=$(GO) $(GO) run ./scripts/testsummary -count=1 ./...

## bench: the main job (see README): client CPU per MB, native TLS versus the bridge.
bench:
	$(GO) run ./bench $(BENCHFLAGS)

## integration: the integration suites (a module of their own, integration/) against tdstest,
## plus the server MSSQL_DSN names where it is set and, where a Docker engine answers, two
## containers: SQL Server 2022 where its image is here or can be pulled (MSSQL_IMAGE overrides
## it), and the embedded server's image, built here (docker/tdstest-server). See README.
integration:
	cd integration && GO=$(GO) $(GO) run ../scripts/testsummary -count=1 -timeout 30m ./...

## tdstest-image: the embedded server's command as the local image tdsbridge/tdstest-server:local
## (docker/tdstest-server/Dockerfile: a static binary built here in an empty image, no registry),
## which docker-compose.yml's tdstest service runs.
tdstest-image:
	@ctx=$$(mktemp -d) && trap 'rm -rf "$$ctx"' EXIT && \
	cp docker/tdstest-server/Dockerfile "$$ctx/" && \
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -buildvcs=false -o "$$ctx/tdstest-server" ./tdstest/cmd/tdstest-server && \
	docker build -t tdsbridge/tdstest-server:local "$$ctx"

## soak: the long load run (64 connections x 200 queries of up to 4 MiB) twice: under the race
## detector, for correctness, then without it, for time and memory figures (the race detector
## multiplies both), followed by the cancellation storm, which runs only without it (see
## reliability/cancel_test.go). TestSoak logs its figures: run with -v.
soak:
	RELIABILITY_SOAK=1 $(GO) test -race -count=1 -run '^TestSoak$$' -timeout 30m -v ./reliability/
	RELIABILITY_SOAK=1 $(GO) test -count=1 -run '^(TestSoak|TestCancelStorm)$$' -timeout 30m -v ./reliability/

## fuzz: every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh
