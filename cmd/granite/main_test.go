package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

func TestCLI(t *testing.T) {
	broken := t.TempDir()
	schema, err := os.ReadFile("../../specs/domain.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(broken, "domain.schema.json"), schema, 0o644))
	must(t, os.MkdirAll(filepath.Join(broken, "bad"), 0o755))
	must(t, os.WriteFile(filepath.Join(broken, "bad", "domain.yaml"), []byte("domain: bad\ntitle: t\ndescription: d\nentities: {}\noperations: {}\n"), 0o644))

	// Expectations come from the registry, so that no test names a domain
	// and adding one changes no Go.
	first := gen.Domains[0].Name
	var names []string
	for _, d := range gen.Domains {
		names = append(names, d.Name)
	}
	// lone holds one domain without its scenarios (a warning, exit 0);
	// single holds the first domain with them, for verify --specs.
	// typo's one domain has one unknown key.
	lone, single, typo := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{lone, single, typo} {
		for _, f := range []string{"domain.schema.json", "scenario.schema.json", first + "/domain.yaml"} {
			copyFile(t, filepath.Join("../../specs", f), filepath.Join(dir, f))
		}
	}
	copyFile(t, filepath.Join("../../specs", first, "scenarios.yaml"), filepath.Join(single, first, "scenarios.yaml"))
	f, err := os.OpenFile(filepath.Join(typo, first, "domain.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("colour: red\n")
	must(t, err)
	must(t, f.Close())
	n := fmt.Sprint(len(gen.Domains))
	spec, err := speclang.LoadAll(specs.FS)
	must(t, err)
	total := 0
	for _, d := range spec.Domains {
		total += len(d.Scenarios)
	}
	// firstN is the first domain's scenario count; a run of it with the two
	// built-in agents at four levels is 8 trials per scenario.
	firstN := len(spec.Domain(first).Scenarios)
	trials := fmt.Sprint(2 * 4 * firstN)
	runs := t.TempDir()
	cases := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"list"}, 0, n + " domains, " + fmt.Sprint(total) + " scenarios (", ""},
		{[]string{"list", "--json"}, 0, `"name": "` + first + `"`, ""},
		{[]string{"validate"}, 0, "embedded specs: " + n + " domains", ""},
		{[]string{"validate", "--specs", "../../specs"}, 0, "all valid", ""},
		{[]string{"validate", "--specs", broken}, 1, "", filepath.Join(broken, "bad/domain.yaml") + ":4:11: $.entities: found {}, which has 0 keys; expected at least 1"},
		{[]string{"validate", "--specs", typo}, 1, "", "\n1 error\n"},
		{[]string{"validate", "--specs", lone}, 0, "1 domain,", "warning: " + filepath.Join(lone, first, "domain.yaml") + `:1:1: domain "` + first + `" has no scenarios; add ` + first + "/scenarios.yaml"},
		{[]string{"validate", "--specs", "/no/such/dir"}, 2, "", "not a folder"},
		{[]string{"verify", "--specs", single}, 0, fmt.Sprintf("1 domain, %d scenarios", firstN), ""},
		{[]string{"verify", "--specs", lone}, 1, "", first + ": no scenarios; expected them in " + first + "/scenarios.yaml"},
		{[]string{"verify", "--specs", "/no/such/dir"}, 2, "", "granite verify: --specs /no/such/dir: not a folder"},
		{[]string{"serve", "--domain", "kitchen"}, 2, "", `unknown domain "kitchen": want one of ` + strings.Join(names, ", ")},
		{[]string{"serve", "--domain", first, "--level", "L5"}, 2, "", `unknown level "L5"`},
		{[]string{"serve", "--domain", first, "--transport", "smoke"}, 2, "", `unknown --transport "smoke"`},
		{[]string{"serve", "--domain", first, "--max-sessions", "0"}, 2, "", "--max-sessions 0: want at least 1"},
		{[]string{"serve", "--domain", first, "--idle", "-1s"}, 2, "", "--idle -1s: want a positive duration"},
		{[]string{"serve", "--domain", first, "--max-body", "-1"}, 2, "", "--max-body -1: want at least 1 byte"},
		{[]string{"serve", "--domain", first, "--drain", "0s"}, 2, "", "--drain 0s: want a positive duration"},
		{[]string{"serve", "--domain", first, "--max-source-line", "0"}, 2, "", "--max-source-line 0: want at least 1 byte"},
		{[]string{"verify", "--domain", first}, 0, fmt.Sprintf("1 domain, %d scenarios, %d scenario×level executions", firstN, 4*firstN), ""},
		{[]string{"verify", "--domain", first, "--json"}, 0, fmt.Sprintf(`"executions": %d`, 4*firstN), ""},
		{[]string{"verify", "--domain", "kitchen"}, 2, "", `unknown domain "kitchen"`},
		{[]string{"run", "--domains", first, "--out", runs + "/a"}, 0, "results: " + runs + "/a/trials.jsonl", ""},
		{[]string{"run", "--domains", first, "--out", runs + "/a"}, 1, "", "add --resume to continue it"},
		{[]string{"run", "--domains", first, "--out", runs + "/a", "--resume"}, 0, "0 run now, " + trials + " recorded before", ""},
		{[]string{"run", "--domains", first, "--models", "builtin:oracle", "--out", runs + "/b"}, 0, "builtin:oracle                           mean TC 1.000", ""},
		{[]string{"run", "--shard", "2/2"}, 2, "", "expected i/n with 0 <= i < n"},
		{[]string{"run", "--models", "llama3.2:3b"}, 2, "", `--models: "llama3.2:3b" is not in the config`},
		{[]string{"run", "--config", "nonesuch"}, 2, "", "no embedded config of that name (embedded: " + embeddedConfigs(t) + ")"},
		{[]string{"merge", "--out", runs + "/m", runs + "/a"}, 0, "merged shards 0/1: " + trials + " of " + trials + " trials", ""},
		{[]string{"merge", "--out", runs + "/m2", runs + "/a", runs + "/b"}, 1, "", "is a run of another config"},
		{[]string{"merge"}, 2, "", "need --out DIR and at least one shard folder"},
		{[]string{"report", "--results", runs + "/a"}, 0, "report on " + trials + " of " + trials + " planned trials: " + runs + "/a/report/report.md", ""},
		{[]string{"report", "--results", runs + "/none"}, 1, "", "expected a folder granite run or merge wrote"},
		{[]string{"report"}, 2, "", "need --results DIR"},
		{[]string{"power", "--seconds", "0", "--powercap", runs}, 0, "auto picks: meter: ", ""},
		{[]string{"synth", "--domain", first, "--level", "L1", "--out", runs + "/s.jsonl"}, 0, "", "of 1 tools used"},
		{[]string{"synth", "--tools", "../../scenarios/testdata/public_style_tools.json", "--count", "3"}, 0, `"version":1`, "3 scenarios from tools:"},
		{[]string{"synth"}, 2, "", "give --domain, --tools, --mcp-cmd or --mcp-url"},
		{[]string{"synth", "--mcp-cmd", "x", "--mcp-header", "Authorization: Bearer t"}, 2, "", "--mcp-header needs --mcp-url"},
		{[]string{"regroup", "--mcp-url", "http://127.0.0.1:1/mcp", "--mcp-header", "Authorization"}, 2, "", `expected "Name: value"`},
		{[]string{"judge", runs + "/s.jsonl", "--domain", first, "--level", "L1", "--json", runs + "/q.json"}, 0, "Tool coverage 100%", ""},
		{[]string{"judge", runs + "/s.jsonl"}, 0, "Tool coverage 100%", ""}, // tools from s.tools.json
		{[]string{"run", "--artifacts", runs + "/s.jsonl", "--out", runs + "/art"}, 0, "builtin:oracle                           mean TC 1.000", ""},
		{[]string{"report", "--results", runs + "/art"}, 0, "report on", ""},
		{[]string{"run", "--artifacts", runs + "/s.jsonl", "--domains", first}, 2, "", "--domains and --artifacts exclude each other"},
		{[]string{"run", "--artifact-tools", runs + "/s.tools.json"}, 2, "", "--artifact-tools needs --artifacts"},
		{[]string{"run", "--artifacts", runs + "/s.tools.json", "--out", runs + "/art2"}, 1, "", runs + "/s.tools.json:1:1: found a line that is not a JSON object; expected one artifact per line"},
		{[]string{"judge", runs + "/nope.jsonl", "--domain", first}, 1, "", "no such file"},
		{[]string{"judge"}, 2, "", "give the artifacts file first"},
		{[]string{"synth", "promote", runs + "/s.jsonl", "--domain", first}, 0, "domain: " + first, ": its writes leave the store as it was"},
		{[]string{"synth", "promote", runs + "/s.jsonl"}, 2, "", "give the artifacts file and --domain"},
		{[]string{"synth", "--domain", first, "--model", "m", "--ollama", "http://127.0.0.1:1", "--count", "2"}, 1, "", "or pass --fallback offline"},
		{[]string{"synth", "--domain", first, "--model", "m", "--ollama", "http://127.0.0.1:1", "--count", "2", "--fallback", "offline"}, 0, "", "using the offline backend (--fallback offline)"},
		{[]string{"synth", "--domain", first, "--fallback", "llm"}, 2, "", "want offline"},
		{[]string{"synth", "--tools", runs + "/none.json"}, 1, "", "no such file"},
		{[]string{"power", "--seconds", "0", "--json", "--powercap", runs}, 0, `"auto": "`, ""},
		{[]string{"list", "--colour"}, 2, "", "flag provided but not defined: -colour"},
		{[]string{"list", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"serve", "-h"}, 0, "", "usage: granite serve"},
		{[]string{"help"}, 0, "Commands:", ""},
		{[]string{"help"}, 0, "synth promote", ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("granite %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant stdout ∋ %q, stderr ∋ %q",
				strings.Join(c.args, " "), code, c.code, out.String(), errb.String(), c.out, c.err)
		}
	}
}

// TestCheckoutDrift: run in a checkout whose specs/ differs from the
// embedded copy, validate and verify say so in one line and name the fix.
func TestCheckoutDrift(t *testing.T) {
	dir := t.TempDir()
	must(t, os.CopyFS(filepath.Join(dir, "specs"), specs.FS))
	first := gen.Domains[0].Name
	f := filepath.Join(dir, "specs", first, "domain.yaml")
	data, err := os.ReadFile(f)
	must(t, err)
	must(t, os.WriteFile(f, append(data, "# edited\n"...), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "specs", "zz"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "specs", "zz", "scenarios.yaml"), nil, 0o644))
	t.Chdir(dir)
	for _, cmd := range []string{"validate", "verify"} {
		var out, errb bytes.Buffer
		run(context.Background(), []string{cmd, "--domain", first}[:map[string]int{"validate": 1, "verify": 3}[cmd]], &out, &errb)
		fix := map[string]string{"validate": "run make build to rebuild bin/granite, or pass --specs specs",
			"verify": "verify executes the generated code built into this binary, so run go generate ./... and make build"}[cmd]
		want := "granite " + cmd + ": ./specs differs from the specs built into this binary (" + first + "/domain.yaml changed, zz/scenarios.yaml new); " + fix + "\n"
		if !strings.HasPrefix(errb.String(), want) {
			t.Errorf("granite %s: stderr %q; want it to start with %q", cmd, errb.String(), want)
		}
	}
	// With --specs specs the hint is never to pass it: validate reads the
	// folder and says nothing; verify still runs the binary's generated code.
	for cmd, want := range map[string]string{"validate": "", "verify": "so run go generate ./... and make build\n"} {
		var out, errb bytes.Buffer
		run(context.Background(), []string{cmd, "--specs", "specs", "--domain", first}[:map[string]int{"validate": 3, "verify": 5}[cmd]], &out, &errb)
		if got := errb.String(); strings.Contains(got, "pass --specs specs") || want != "" && !strings.Contains(got, want) || want == "" && strings.Contains(got, "differs") {
			t.Errorf("granite %s --specs specs: stderr %q; want %q", cmd, got, want)
		}
	}
	// An unchanged copy says nothing.
	must(t, os.WriteFile(f, data, 0o644))
	must(t, os.RemoveAll(filepath.Join(dir, "specs", "zz")))
	// (A spec's warnings, fine if deliberate, are said again; nothing else.)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate"}, &out, &errb)
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if code != 0 || l != "" && !strings.HasPrefix(l, "warning: ") {
			t.Errorf("unchanged specs: exit %d, stderr %q; want no drift and no error", code, errb.String())
			break
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(to), 0o755))
	must(t, os.WriteFile(to, data, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestServeHTTPShutsDownCleanly: SIGINT or SIGTERM (a cancelled context in
// main) ends an HTTP server with exit 0 promptly, even while a client holds
// a GET event stream open.
func TestServeHTTPShutsDownCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--domain", gen.Domains[0].Name, "--transport", "http", "--addr", "127.0.0.1:0"}, &out, &errb)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), "/mcp") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_, addr, _ := strings.Cut(errb.String(), " on ")
	url := strings.TrimSpace(addr)

	// Open a session and hold its GET stream.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(get)
	must(t, err)
	defer stream.Body.Close()
	if stream.StatusCode != 200 {
		t.Fatalf("GET stream: %d", stream.StatusCode)
	}

	start := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("shutdown took %s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// embeddedConfigs lists the embedded experiment configs as the message
// for a missing one names them.
func embeddedConfigs(t *testing.T) string {
	t.Helper()
	names, err := fs.Glob(specs.FS, "experiments/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(path.Base(n), ".yaml")
	}
	return strings.Join(names, ", ")
}
