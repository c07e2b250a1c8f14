package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/npmtest"
)

// The interoperability tests drive generated servers with the MCP clients
// people use: the official MCP Inspector (CLI mode), the official
// conformance suite, and a client written with the official TypeScript SDK,
// all pinned in testdata/npm and installed by its install.sh on a Node >= 22
// from the npm registry. They skip only when npm is absent.

var interop struct {
	once    sync.Once
	granite string
	err     error
}

// interopTools installs the pinned clients and builds the granite binary.
func interopTools(t testing.TB) (node, dir, granite string) {
	t.Helper()
	dir = npmtest.Dir(t, "the MCP client interoperability tests")
	interop.once.Do(func() {
		bin := filepath.Join(os.TempDir(), fmt.Sprintf("granite-interop-%d", os.Getpid()))
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/granite").CombinedOutput(); err != nil {
			interop.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		interop.granite = bin
	})
	if interop.err != nil {
		t.Fatal(interop.err)
	}
	return npmtest.Node(dir), dir, interop.granite
}

// serveHTTP starts `granite serve --transport http` of a domain at a
// level on a free port and returns its /mcp URL.
func serveHTTP(t testing.TB, granite, domain string, level level.Level, extra ...string) string {
	return serveOverHTTP(t, granite, append([]string{"--domain", domain, "--level", string(level)}, extra...)...)
}

// serveOverHTTP starts `granite serve` with the flags that say what to
// serve, over HTTP on a free port, and returns its /mcp URL.
func serveOverHTTP(t testing.TB, granite string, what ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append(append([]string{"serve"}, what...), "--transport", "http", "--addr", "127.0.0.1:0")
	cmd := exec.CommandContext(ctx, granite, args...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`on (http://\S+/mcp)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	t.Fatal("granite serve printed no address")
	return ""
}

func runNode(t *testing.T, node string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), code
}

// firstJSON decodes the first JSON object of a tool's output.
func firstJSON(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out[max(0, strings.Index(out, "{")):]))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("no JSON in output: %v\n%s", err, out)
	}
}

// example is a valid call and an invalid one of a tool with required
// arguments.
func example(t *testing.T, d *mcpdomain.Domain, level level.Level) (tool string, good, bad map[string]any) {
	for _, tl := range d.Tools[level] {
		for _, op := range tl.Operations {
			if len(op.Args) == 0 || !op.Args[0].Required {
				continue
			}
			good = map[string]any{}
			if err := json.Unmarshal([]byte(op.Example), &good); err != nil {
				t.Fatal(err)
			}
			bad = map[string]any{}
			if tl.HasAction() {
				good["action"], bad["action"] = op.Name, op.Name
			}
			return tl.Name, good, bad
		}
	}
	t.Fatal("no tool with a required argument")
	return
}

func toolArgs(m map[string]any) []string {
	var out []string
	for k, v := range m {
		b, _ := json.Marshal(v)
		s := string(b)
		if str, ok := v.(string); ok {
			s = str
		}
		out = append(out, k+"="+s)
	}
	return out
}

// TestInspectorCLI lists tools and calls one with valid and invalid
// arguments through the official Inspector, over stdio and HTTP.
func TestInspectorCLI(t *testing.T) {
	node, dir, granite := interopTools(t)
	cli := filepath.Join(dir, "node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js")
	d := gen.Domains[0]
	for _, level := range []level.Level{level.L4, level.L1} {
		tool, good, bad := example(t, d, level)
		targets := map[string][]string{
			"stdio": {granite, "serve", "--domain", d.Name, "--level", string(level)},
			"http":  {serveHTTP(t, granite, d.Name, level)},
		}
		for name, target := range targets {
			out, code := runNode(t, node, nil, append(append([]string{cli}, target...), "--method", "tools/list")...)
			var list struct{ Tools []struct{ Name string } }
			firstJSON(t, out, &list)
			if code != 0 || len(list.Tools) != len(d.Tools[level]) {
				t.Errorf("%s %s tools/list: exit %d, %d tools, want %d\n%s", name, level, code, len(list.Tools), len(d.Tools[level]), out)
			}
			call := func(args map[string]any) (string, bool) {
				argv := append(append([]string{cli}, target...), "--method", "tools/call", "--tool-name", tool)
				if len(args) > 0 {
					argv = append(argv, append([]string{"--tool-arg"}, toolArgs(args)...)...)
				}
				out, _ := runNode(t, node, nil, argv...)
				var res struct {
					Content []struct{ Text string }
					IsError bool
				}
				firstJSON(t, out, &res)
				if len(res.Content) == 0 {
					t.Fatalf("%s %s: no content\n%s", name, tool, out)
				}
				return res.Content[0].Text, res.IsError
			}
			if text, isErr := call(good); isErr {
				t.Errorf("%s %s %s %v: tool error %s", name, level, tool, good, text)
			}
			if text, isErr := call(bad); !isErr || !strings.HasPrefix(text, "missing required argument") {
				t.Errorf("%s %s %s %v: want a tool error naming the missing argument, got %v %q", name, level, tool, bad, isErr, text)
			}
		}
	}
}

// Conformance scenarios that apply to a server without the suite's fixture
// tools, resources and prompts; each must pass.
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}

// Skipped scenarios, and why:
//   - tools-call-* (simple-text, image, audio, embedded-resource,
//     mixed-content, with-logging, error, with-progress, sampling,
//     elicitation), json-schema-2020-12, elicitation-*: call the suite's
//     fixture tools (test_simple_text, ...), which a granite domain does
//     not have;
//   - resources-*, prompts-*, completion-complete, logging-set-level: the
//     servers offer tools only, not resources, prompts, completions or
//     logging;
//   - server-sse-polling: checks nothing against a server that answers
//     POSTs with JSON (0 of 0 checks).

// TestConformance runs the official conformance suite against a generated
// server over streamable HTTP.
func TestConformance(t *testing.T) {
	node, dir, granite := interopTools(t)
	suite := filepath.Join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
	url := serveHTTP(t, granite, gen.Domains[0].Name, level.L3)
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, s := range conformanceScenarios {
		out, code := runNode(t, node, nil, suite, "server", "--url", url, "--scenario", s)
		m := passed.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] != m[2] || m[1] == "0" {
			t.Errorf("conformance %s: exit %d\n%s", s, code, out)
		}
	}
}

// TestTypeScriptSDKClient lists and calls tools from a client written with
// the official TypeScript SDK, over stdio and HTTP.
func TestTypeScriptSDKClient(t *testing.T) {
	node, dir, granite := interopTools(t)
	d := gen.Domains[0]
	tool, good, _ := example(t, d, level.L2)
	args, _ := json.Marshal(good)
	env := []string{"GRANITE_TOOL=" + tool, "GRANITE_ARGS=" + string(args)}
	script := filepath.Join(dir, "sdk-client.mjs")
	for name, target := range map[string][]string{
		"stdio": {"stdio", granite, "serve", "--domain", d.Name, "--level", "L2"},
		"http":  {"http", serveHTTP(t, granite, d.Name, level.L2)},
	} {
		out, code := runNode(t, node, env, append([]string{script}, target...)...)
		var got struct {
			Tools []struct {
				Name        string
				Annotations struct{ ReadOnlyHint, OpenWorldHint *bool }
			}
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		firstJSON(t, out, &got)
		if code != 0 || len(got.Tools) != 2 || got.Result.IsError || len(got.Result.Content) == 0 {
			t.Errorf("%s: exit %d, %+v\n%s", name, code, got, out)
			continue
		}
		for _, tl := range got.Tools {
			if tl.Annotations.OpenWorldHint == nil || *tl.Annotations.OpenWorldHint || tl.Annotations.ReadOnlyHint == nil {
				t.Errorf("%s: tool %s annotations %+v; want readOnlyHint set and openWorldHint false", name, tl.Name, tl.Annotations)
			}
		}
	}
}
