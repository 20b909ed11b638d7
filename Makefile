# tdsbridge: the two commands a README reader runs are `make test` and `make bench`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 60s

.PHONY: test vet lint unit bench fuzz soak integration

## test: vet, lint and every test under the race detector.
test: vet lint unit

vet:
	$(GO) vet ./...

lint:
	$(GO) run $(STATICCHECK) ./...

unit:
	$(GO) test -race -count=1 ./...

## bench: the main job (see README): client CPU per MB, native TLS versus the bridge.
bench:
	$(GO) run ./bench $(BENCHFLAGS)

## fuzz: every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh
