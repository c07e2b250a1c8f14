// Command mcpagent is the agent the command backend's tests run: a real
// MCP client over streamable HTTP that reads the configuration granite
// wrote for it (or the GRANITE_MCP_* variables), follows a scripted plan
// and prints an answer, or misbehaves as the plan says.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// plan is what the agent does.
type plan struct {
	// Mode is calls (the default: make Calls, answer with their results),
	// crash (one call, then exit 3), hang (start a child, then sleep),
	// spam (print SpamBytes to stdout), two-sessions (Calls alternately
	// on two sessions), no-token (connect without the token), escape
	// (start a child in a session of its own, then answer), env (answer
	// with the names of its environment's variables), steal (look for
	// another trial's server in /proc and beside its own folder, make
	// Calls there, then create Signal), victim (wait for Signal, then
	// answer), wrong-token (connect with a token not its trial's) or
	// init-only (initialize a session, then answer without listing the
	// tools).
	Mode string `json:"mode"`
	// Marker is on the command line of a child hang or escape starts,
	// for a test to find it by.
	Marker string `json:"marker"`
	// Signal is the file steal creates when done and victim waits for.
	Signal string `json:"signal"`
	Calls  []struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"calls"`
	// Answer replaces the answer made of the results.
	Answer    string `json:"answer"`
	SpamBytes int    `json:"spam_bytes"`
	// JSON prints the answer as {"type": "result", "result": answer}.
	JSON bool `json:"json"`
}

func main() {
	format := flag.String("format", "env", "configuration format: env, claude, codex or gemini")
	config := flag.String("config", "", "configuration file")
	prompt := flag.String("prompt", "", "the task")
	planFile := flag.String("plan", "", "plan file")
	child := flag.Bool("child", false, "be the child a hanging agent starts")
	flag.String("marker", "", "with --child: a mark for tests to find the child by")
	flag.Parse()
	if *child {
		time.Sleep(time.Hour)
		return
	}
	if err := run(*format, *config, *prompt, *planFile); err != nil {
		fmt.Fprintln(os.Stderr, "mcpagent:", err)
		os.Exit(2)
	}
}

func run(format, config, prompt, planFile string) error {
	if strings.TrimSpace(prompt) == "" {
		return fmt.Errorf("no prompt")
	}
	data, err := os.ReadFile(planFile)
	if err != nil {
		return err
	}
	var p plan
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	url, token, err := endpoint(format, config)
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch p.Mode {
	case "spam":
		w := bufio.NewWriter(os.Stdout)
		line := strings.Repeat("x", 1023) + "\n"
		for n := 0; n < p.SpamBytes; n += len(line) {
			w.WriteString(line)
		}
		return w.Flush()
	case "hang", "escape":
		c := exec.Command(os.Args[0], "--child", "--marker", p.Marker)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: p.Mode == "escape"}
		if err := c.Start(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "child pid %d\n", c.Process.Pid)
		if p.Mode == "escape" {
			fmt.Println("Done; my helper runs on.")
			return nil
		}
		time.Sleep(time.Hour)
		return nil
	case "env":
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		fmt.Println(strings.Join(names, " "))
		return nil
	case "victim":
		for range 400 {
			if _, err := os.Stat(p.Signal); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Println("I did nothing.")
		return nil
	case "steal":
		defer os.WriteFile(p.Signal, []byte("done"), 0o600)
		if url, token = neighbour(url, token); url == "" {
			fmt.Println("nothing to steal")
			return nil
		}
		fmt.Fprintln(os.Stderr, "stole", url)
	case "no-token":
		token = ""
	case "wrong-token":
		token = "not-" + token
	case "init-only":
		c, err := initialized(ctx, url, token)
		if err != nil {
			return err
		}
		c.Close()
		fmt.Println("I looked and saw nothing to do.")
		return nil
	}
	first, err := connect(ctx, url, token)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer first.Close()
	sessions := []*client.Client{first}
	if p.Mode == "two-sessions" {
		second, err := connect(ctx, url, token)
		if err != nil {
			return fmt.Errorf("connect a second session: %w", err)
		}
		defer second.Close()
		sessions = append(sessions, second)
	}
	var replies []string
	for i, c := range p.Calls {
		req := mcp.CallToolRequest{}
		req.Params.Name = c.Tool
		req.Params.Arguments = c.Arguments
		res, err := sessions[i%len(sessions)].CallTool(ctx, req)
		if err != nil {
			replies = append(replies, "error: "+err.Error())
		} else {
			var b strings.Builder
			for _, content := range res.Content {
				if t, ok := content.(mcp.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			replies = append(replies, b.String())
		}
		if p.Mode == "crash" {
			fmt.Fprintln(os.Stderr, "mcpagent: crashing on purpose")
			os.Exit(3)
		}
	}
	answer := strings.Join(replies, "\n")
	if len(replies) == 0 {
		answer = "No tool call is right for this request."
	}
	if p.Answer != "" {
		answer = p.Answer
	}
	if p.JSON {
		fmt.Println(`{"type": "progress", "note": "thinking"}`)
		return json.NewEncoder(os.Stdout).Encode(map[string]string{"type": "result", "result": answer})
	}
	fmt.Println(answer)
	return nil
}

// neighbour looks, for a few seconds, for another trial's server: in the
// environment of every process it can see, and in the configuration files
// of the folders beside its own. It returns "" when it finds none.
func neighbour(ownURL, ownToken string) (string, string) {
	wd, _ := os.Getwd()
	for range 60 {
		var url, token string
		procs, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, f := range procs {
			data, _ := os.ReadFile(f)
			for _, kv := range strings.Split(string(data), "\x00") {
				if v, ok := strings.CutPrefix(kv, "GRANITE_MCP_URL="); ok {
					url = v
				}
				if v, ok := strings.CutPrefix(kv, "GRANITE_MCP_TOKEN="); ok {
					token = v
				}
			}
			if url != "" && url != ownURL && token != "" && token != ownToken {
				return url, token
			}
			url, token = "", ""
		}
		configs, _ := filepath.Glob(filepath.Join(filepath.Dir(wd), "*", "*.json"))
		for _, f := range configs {
			if filepath.Dir(f) == wd {
				continue
			}
			if u, tok, err := endpoint("claude", f); err == nil && u != ownURL {
				return u, tok
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", ""
}

// connect opens an initialised session, listing the tools as a client
// does before it calls one.
func connect(ctx context.Context, url, token string) (*client.Client, error) {
	c, err := initialized(ctx, url, token)
	if err != nil {
		return nil, err
	}
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// initialized opens an initialised session.
func initialized(ctx context.Context, url, token string) (*client.Client, error) {
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	// The revision shipped clients speak, which has sessions (2026-07-28
	// has none, and its calls all count as one session).
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpagent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// endpoint reads the server's URL and token from the configuration
// granite wrote, as each client would.
func endpoint(format, config string) (string, string, error) {
	switch format {
	case "env":
		return os.Getenv("GRANITE_MCP_URL"), os.Getenv("GRANITE_MCP_TOKEN"), nil
	case "claude", "gemini":
		data, err := os.ReadFile(config)
		if err != nil {
			return "", "", err
		}
		var doc struct {
			MCPServers map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				HTTPURL string            `json:"httpUrl"`
				Headers map[string]string `json:"headers"`
				Trust   bool              `json:"trust"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return "", "", err
		}
		s, ok := doc.MCPServers["granite"]
		if !ok {
			return "", "", fmt.Errorf("%s: no mcpServers.granite", config)
		}
		url := s.URL
		if format == "gemini" {
			if url = s.HTTPURL; !s.Trust {
				return "", "", fmt.Errorf("%s: the server is not trusted", config)
			}
		} else if s.Type != "http" {
			return "", "", fmt.Errorf("%s: type %q, want http", config, s.Type)
		}
		token, ok := strings.CutPrefix(s.Headers["Authorization"], "Bearer ")
		if !ok {
			return "", "", fmt.Errorf("%s: no bearer Authorization header", config)
		}
		return url, token, nil
	case "codex":
		data, err := os.ReadFile(config)
		if err != nil {
			return "", "", err
		}
		var url, tokenVar string
		section := ""
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				section = line
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || section != "[mcp_servers.granite]" {
				continue
			}
			var s string
			if err := json.Unmarshal([]byte(strings.TrimSpace(v)), &s); err != nil {
				return "", "", fmt.Errorf("%s: %s: %w", config, line, err)
			}
			switch strings.TrimSpace(k) {
			case "url":
				url = s
			case "bearer_token_env_var":
				tokenVar = s
			}
		}
		if url == "" || tokenVar == "" {
			return "", "", fmt.Errorf("%s: want url and bearer_token_env_var in [mcp_servers.granite]", config)
		}
		return url, os.Getenv(tokenVar), nil
	}
	return "", "", fmt.Errorf("unknown format %q", format)
}
