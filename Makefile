# granite — build, test and benchmark. `make run` and `make test` are the
# two-command start; see README.md.

GO ?= go
# go-nvml is cgo and its headers mark old entry points deprecated; silence
# those warnings so that real ones stay visible.
export CGO_CFLAGS ?= -Wno-deprecated-declarations

BIN := bin/granite

.PHONY: all generate build release edge-test slurm-test test check-generate vet browser unit verify ollama-test agents-test fuzz bench bench-doc run clean

all: build

## generate: regenerate gen/ from specs/
generate:
	$(GO) generate ./...

## build: compile the granite CLI into bin/
build:
	@[ -x $(BIN) ] || echo "build: compiling $(BIN) and its dependencies; a first build from an empty Go build cache takes one to two minutes on 2 cores (docs/bench.md), later ones seconds" >&2
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/granite

## release: reproducible linux/amd64 and linux/arm64 binaries (cgo with NVML, and
## static -tags nonvml ones) and SHA256SUMS into dist/; see docs/edge.md
release:
	scripts/release.sh

## edge-test: make release, then run the arm64 binaries under qemu-user (version,
## verify and the smoke experiment, compared with the native build); CI runs it
edge-test:
	scripts/edge-test.sh

## slurm-test: docs/slurm.md's scripts on a one-node Slurm started for the test
## (installs slurm-wlm and munge when missing; needs root): a 4-task array with
## a task requeued mid-run, then the merge, equal to an unsharded run; CI runs it
slurm-test:
	scripts/slurm-test.sh

## test: generated code up to date, vet, every test, and every scenario's gold
test: check-generate vet browser unit verify

check-generate:
	@$(GO) generate ./...
	@git diff --exit-code --stat -- gen internal/testdomain || { echo "gen/ or internal/testdomain/ is stale or hand-edited: run 'make generate' and commit the result" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen internal/testdomain)" || { git status --porcelain -- gen internal/testdomain; echo "go generate left untracked or deleted files in gen/ or internal/testdomain/" >&2; exit 1; }

# ./... skips testdata, so the golden cases' domain packages are vetted by name
# (their registry.go files import gen/<case>, which exists only for real specs).
vet:
	$(GO) vet ./... $(wildcard ./generator/testdata/golden/*/want/*/)

# granite view's browser tests need chromium: installed when missing.
browser:
	@scripts/ensure-chromium.sh

# Every test, printed as plain go test prints them, then each skipped test
# with its reason (internal/testsum), so a machine without npm or chromium
# says what did not run.
unit:
	@bash -o pipefail -c '$(GO) test -count=1 -json ./... | $(GO) run ./internal/testsum'

## verify: execute every scenario's gold calls at every level (granite verify)
verify: build
	$(BIN) verify --mutants --corpus harness/score/testdata/corpus

## ollama-test: build the Ollama server from the module go.mod pins (cgo, CPU; once,
## then cached under the Go build cache) and run every RealOllama test against it; CI runs it
ollama-test:
	@bin=$$(scripts/ollama-build.sh) && GRANITE_OLLAMA=$$bin bash -o pipefail -c '$(GO) test -count=1 -timeout 30m -run RealOllama -json $(REAL_OLLAMA_PKGS) | $(GO) run ./internal/testsum'

# The packages with a RealOllama test: only their test binaries are built,
# so the lane prints a line per package that has one, not one per package.
REAL_OLLAMA_PKGS = $(shell grep -rlE --include='*_test.go' --exclude-dir=testdata --exclude-dir=node_modules 'func Test[A-Za-z0-9_]*RealOllama' . | xargs -n1 dirname | sort -u)

## agents-test: install the pinned agent CLIs (Claude Code, Codex CLI, Gemini CLI, qwen-code)
## from npm into harness/agentlane/testdata/npm (once, then kept while its lockfile stands) and
## run each, with its docs/agents.md entry, on a read and a write scenario at L4-L1 against
## granite's scripted model server; CI runs it
agents-test:
	@GRANITE_AGENTS=1 bash -o pipefail -c '$(GO) test -count=1 -timeout 15m -run RealAgents -json ./harness/agentlane | $(GO) run ./internal/testsum'

## fuzz: fuzz every generated tool for 30 s
fuzz:
	$(GO) test ./generator/integration -run '^$$' -fuzz FuzzTools -fuzztime 30s

## bench: the performance figures the issues ask for
bench:
	@bin=$$(scripts/ollama-build.sh) && GRANITE_OLLAMA=$$bin $(GO) test -run '^$$' -bench . -benchmem ./generator/... ./harness/... ./scenarios/... ./internal/speclang/... ./internal/mcpdomain/...

## bench-doc: run make bench once and write its figures, the machine, the date and
## the binary's size to docs/bench.md, where the README's figures point
bench-doc:
	scripts/bench-doc.sh

## run: the main job on the embedded default: the smoke experiment (built-in agents,
## every domain, level and scenario) into results/smoke, and its report
run: build
	$(BIN) list
	rm -rf results/smoke
	$(BIN) run --config smoke --out results/smoke
	$(BIN) report --results results/smoke

clean:
	rm -rf bin dist
