SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin

SERVICES := scripts/services.sh
# Loads the services' environment for the rest of a recipe line (and fails if `env` fails).
WITH_ENV := env=$$($(SERVICES) env) && eval "$$env" &&

# Builds retsu and retsu-bench into .run/bin, where run, bench and scripts/bench use them.
.PHONY: build run test fuzz chaos bench screenshots fmt services down clean

# The fuzz targets and how many inputs `make test` gives each (a count, not a duration: with a
# duration, Go 1.26's fuzzing coordinator may fail a target at the deadline with "context
# deadline exceeded" and no failing input, golang/go#75804, which a loaded machine makes
# likely). `make fuzz FUZZTIME=10m` fuzzes each for that long instead.
FUZZ_TARGETS := FuzzParseObject:10000x FuzzParseWholeNumber:20000x FuzzHandler:4000x FuzzQuery:4000x \
	FuzzEnqueue_AcceptedPayloadRoundTrips:5000x FuzzFramer_AgreesWithNetHTTP:10000x
# The same API targets over the PostgreSQL stores (adapters/postgres/fuzz_test.go).
POSTGRES_FUZZ_TARGETS := FuzzHandlerOnPostgres:250x FuzzQueryOnPostgres:250x
FUZZTIME ?=

build:
	go build -o .run/bin/ ./cmd/retsu ./cmd/retsu-bench

run: services build
	$(WITH_ENV) exec .run/bin/retsu serve

test: services
	$(SERVICES) fresh-test-db
	$(WITH_ENV) go vet ./... && go test -race -count=1 -parallel 8 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz

fuzz: services
	for target in $(FUZZ_TARGETS); do \
		go test -run '^$$' -fuzz "^$${target%:*}\$$" -fuzztime $(or $(FUZZTIME),$${target#*:}) ./adapters/httpapi/ || exit 1; \
	done
	$(WITH_ENV) for target in $(POSTGRES_FUZZ_TARGETS); do \
		go test -run '^$$' -fuzz "^$${target%:*}\$$" -fuzztime $(or $(FUZZTIME),$${target#*:}) ./adapters/postgres/ || exit 1; \
	done

# The chaos scenarios of docs/reliability.md at their long scale, with their figures.
chaos: services
	$(WITH_ENV) RETSU_CHAOS_SCALE=long go test -count=1 -run '^TestChaos$$' -v -timeout 90m ./test/

# The README's screenshots of the dashboard (docs/dashboard-*.png), after two minutes of a
# changing backlog so that the chart has a history; `make test` saves its own under
# .run/ui-screenshots/.
screenshots: services
	$(WITH_ENV) go test -tags screenshots -count=1 -run '^TestDashboard_DocsScreenshots$$' -v -timeout 10m ./test/

# PostgreSQL's own ceiling, then Retsu on PostgreSQL and on its memory stores under the same
# load, in one table, then 1, 2 and 3 instances on one database under the same total load
# (docs/performance.md). BENCH_SECONDS, CEILING_SECONDS and the other settings in
# scripts/bench/run.sh and scripts/bench/instances.sh change it.
bench: services build
	scripts/bench/run.sh
	scripts/bench/instances.sh

fmt:
	@files=$$(gofmt -l .); if [[ -n $$files ]]; then echo "not gofmt'ed:"; echo "$$files"; exit 1; fi

services:
	$(SERVICES) up

down:
	$(SERVICES) down

clean:
	rm -rf .run/bin
