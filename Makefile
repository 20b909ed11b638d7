# tdsbridge: the two commands a README reader runs are `make test` and `make bench`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 60s

.PHONY: test vet lint unit bench fuzz soak integration

## test: vet, lint and every test under the race detector.
test: vet lint unit

vet:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

lint:
	$(GO) run $(STATICCHECK) ./...

unit:
	$(GO) test -race -count=1 ./...

## bench: the main job (see README): client CPU per MB, native TLS versus the bridge.
bench:
	$(GO) run ./bench $(BENCHFLAGS)

## integration: the integration suites against tdstest, plus SQL Server where MSSQL_DSN is set
## or where a Docker engine runs and MSSQL_IMAGE names the SQL Server 2022 image (see README).
integration:
	$(GO) test -count=1 -v -timeout 30m ./integration/

## soak: the long load run (64 connections x 200 queries of up to 4 MB) under the race detector,
## then the cancellation storm, which runs only without it (see reliability/cancel_test.go).
soak:
	RELIABILITY_SOAK=1 $(GO) test -race -count=1 -run Soak -timeout 30m -v ./reliability/
	$(GO) test -count=1 -run CancelStorm -timeout 10m -v ./reliability/

## fuzz: every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh
