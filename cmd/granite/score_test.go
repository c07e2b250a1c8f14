package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/specs"
)

// TestServeRecordAndScore records a session of an MCP client that makes a
// scenario's gold calls (one per session, in two sessions), scores it with
// granite score into a results folder, and reports the folder; a
// session without the token records nothing.
func TestServeRecordAndScore(t *testing.T) {
	spec, err := speclang.LoadAll(specs.FS)
	must(t, err)
	s := spec.Domains[0].Scenarios[0]
	level := level.L3
	dir := t.TempDir()
	file := filepath.Join(dir, "session.json")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--scenario", s.ID, "--level", string(level), "--transport", "http", "--addr", "127.0.0.1:0", "--token", "tok", "--record", file}, &out, &errb)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), "/mcp") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_, addr, _ := strings.Cut(errb.String(), " on ")
	url := strings.TrimSpace(addr)
	if !strings.Contains(out.String(), s.Prompt) {
		t.Fatalf("stdout %q does not give the prompt", out.String())
	}
	if _, err := session(ctx, url, ""); err == nil {
		t.Error("a session without the token was let in")
	}
	answer := playGold(ctx, t, url, s, level)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, errb.String())
	}
	answerFile := filepath.Join(dir, "answer.txt")
	must(t, os.WriteFile(answerFile, []byte(strings.Join(answer, "\n")), 0o600))
	resultsDir := filepath.Join(dir, "results")
	var sout, serr bytes.Buffer
	if code := run(context.Background(), []string{"score", "--record", file, "--answer-file", answerFile, "--model", "desktop", "--out", resultsDir}, &sout, &serr); code != 0 {
		t.Fatalf("score exit %d: %s", code, serr.String())
	}
	if !strings.Contains(sout.String(), "desktop/"+s.ID+"/"+string(level)+"/r1: tc 1 (tc_strict 1)") || !strings.Contains(sout.String(), "action_arg_acc 1.00") {
		t.Errorf("score printed %q; want tc 1 and action ArgAcc", sout.String())
	}
	if man, err := results.ReadManifest(resultsDir); err != nil || man.ConfigHash == "" {
		t.Errorf("the folder granite score made has no config hash: %v %+v", err, man)
	}
	recs, _, err := results.ReadJournal(filepath.Join(resultsDir, results.TrialsFile))
	must(t, err)
	if len(recs) != 1 || recs[0].Agent != results.AgentRecorded || len(recs[0].Calls) != len(s.Gold[level]) {
		t.Fatalf("records %+v; want the one recorded trial with every call", recs)
	}
	for i, c := range recs[0].Calls {
		if c.Session != i+1 {
			t.Errorf("call %d in session %d; want each call in a session of its own", i, c.Session)
		}
	}
	// Scoring again under the same name would duplicate the trial.
	if code := run(context.Background(), []string{"score", "--record", file, "--model", "desktop", "--out", resultsDir}, &sout, &serr); code == 0 || !strings.Contains(serr.String(), "already holds") {
		t.Errorf("a second record of the same trial: exit %d, %s", code, serr.String())
	}
	// Without the answer the facts are missing, and the verdict says which.
	sout.Reset()
	if code := run(context.Background(), []string{"score", "--record", file}, &sout, &serr); code != 0 {
		t.Fatalf("score exit %d: %s", code, serr.String())
	}
	if len(s.Answer) > 0 && !strings.Contains(sout.String(), "the answer does not state") {
		t.Errorf("score without an answer printed %q; want the missing facts", sout.String())
	}
	if code := run(context.Background(), []string{"report", "--results", resultsDir}, &sout, &serr); code != 0 {
		t.Errorf("report of the recorded folder: exit %d, %s", code, serr.String())
	}
}

// TestScoreSaysWhyStrictFails scores the corpus's recordings until one
// whose task is done in other words than the gold's (tc 1, tc_strict 0),
// and checks the verdict says which rows differ from the nearest right
// store.
func TestScoreSaysWhyStrictFails(t *testing.T) {
	records, err := filepath.Glob(filepath.Join("..", "..", "harness", "score", "testdata", "corpus", "*", "*.record.json"))
	if err != nil || len(records) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, rec := range records {
		var sout, serr bytes.Buffer
		answer := strings.TrimSuffix(rec, ".record.json") + ".answer.txt"
		if code := run(context.Background(), []string{"score", "--record", rec, "--answer-file", answer}, &sout, &serr); code != 0 {
			t.Fatalf("score %s: exit %d: %s", rec, code, serr.String())
		}
		out := sout.String()
		if !strings.Contains(out, "tc 1 (tc_strict 0)") {
			continue
		}
		if !strings.Contains(out, "tc_strict 0: the final store equals no right final store byte for byte") || !strings.Contains(out, "the right store") {
			t.Errorf("score %s printed %q; want the rows that keep tc_strict at 0", rec, out)
		}
		return
	}
	t.Fatal("no corpus recording scores tc 1 with tc_strict 0")
}

// session opens an initialised MCP session over HTTP.
// playGold makes a scenario's gold calls at a level on the server at url,
// each in a session of its own with the token "tok", as an interactive
// client would, and returns the results' texts.
func playGold(ctx context.Context, t *testing.T, url string, s *speclang.Scenario, level level.Level) []string {
	t.Helper()
	var answer []string
	for _, g := range s.Gold[level] {
		c, err := session(ctx, url, "tok")
		must(t, err)
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = g.Tool, json.RawMessage(g.JSON())
		res, err := c.CallTool(ctx, req)
		must(t, err)
		answer = append(answer, res.Content[0].(mcp.TextContent).Text)
		c.Close()
	}
	return answer
}

func session(ctx context.Context, url, token string) (*client.Client, error) {
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	c, _, err := toolsrc.Connect(ctx, "", url, toolsrc.WithHeaders(h), toolsrc.WithProtocolVersion(mcp.ProtocolVersion20251125))
	return c, err
}
