SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin

SERVICES := scripts/services.sh
# Loads the services' environment for the rest of a recipe line (and fails if `env` fails).
WITH_ENV := env=$$($(SERVICES) env) && eval "$$env" &&

.PHONY: build run test fmt services down clean

build:
	go build ./...

run: services
	go build -o .run/bin/retsu ./cmd/retsu
	$(WITH_ENV) exec .run/bin/retsu serve

test: services
	$(SERVICES) fresh-test-db
	$(WITH_ENV) go vet ./... && go test -race -count=1 -parallel 8 -timeout 30m ./...

fmt:
	@files=$$(gofmt -l .); if [[ -n $$files ]]; then echo "not gofmt'ed:"; echo "$$files"; exit 1; fi

services:
	$(SERVICES) up

down:
	$(SERVICES) down

clean:
	rm -rf .run/bin
