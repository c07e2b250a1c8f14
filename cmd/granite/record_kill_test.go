package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

// asGranite, set in a child's environment, makes this test binary run as
// granite with its arguments, so tests can kill a real granite process.
const asGranite = "GRANITE_TEST_AS_GRANITE"

func TestMain(m *testing.M) {
	if os.Getenv(asGranite) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestServeRecordSurvivesKill runs granite serve --record as a process of
// its own, makes a scenario's gold calls, kills it with SIGKILL and scores
// what it left: every call answered is there, the verdict is the one a
// clean stop gives, and score says the recording has no end; with a last
// line cut short as a kill mid-write leaves it, the same, saying so.
func TestServeRecordSurvivesKill(t *testing.T) {
	spec, err := speclang.LoadAll(specs.FS)
	must(t, err)
	level := level.L3
	// A scenario whose verdict needs the store the calls left, in more
	// than one call.
	var s *speclang.Scenario
	for _, d := range spec.Domains {
		for _, sc := range d.Scenarios {
			if s == nil && len(sc.State) > 0 && len(sc.Gold[level]) >= 2 {
				s = sc
			}
		}
	}
	if s == nil {
		t.Fatal("no scenario with state conditions and two gold calls at L3")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "session.jsonl")
	cmd := exec.Command(os.Args[0], "serve", "--scenario", s.ID, "--level", string(level), "--transport", "http",
		"--addr", "127.0.0.1:0", "--token", "tok", "--record", file)
	cmd.Env = append(os.Environ(), asGranite+"=1")
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), " on "); ok && strings.HasSuffix(url, "/mcp") {
				addr <- url
			}
		}
	}()
	var url string
	select {
	case url = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatal("granite serve did not listen within 20 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	answer := playGold(ctx, t, url, s, level)
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	answerFile := filepath.Join(dir, "answer.txt")
	must(t, os.WriteFile(answerFile, []byte(strings.Join(answer, "\n")), 0o600))

	want := "recorded/" + s.ID + "/" + string(level) + "/r1: tc 1 (tc_strict 1)"
	score := func(wantNote string) {
		t.Helper()
		var sout, serr bytes.Buffer
		if code := run(context.Background(), []string{"score", "--record", file, "--answer-file", answerFile}, &sout, &serr); code != 0 {
			t.Fatalf("score of the killed recording: exit %d: %s", code, serr.String())
		}
		if !strings.Contains(sout.String(), want) || !strings.Contains(sout.String(), fmt.Sprintf(", %d calls", len(s.Gold[level]))) {
			t.Errorf("score printed %q; want %q with all %d calls", sout.String(), want, len(s.Gold[level]))
		}
		if !strings.Contains(serr.String(), wantNote) {
			t.Errorf("score said %q; want a note %q", serr.String(), wantNote)
		}
	}
	score("has no end")
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"call":{"turn":9,"tool":"` + s.Gold[level][0].Tool + `","argum`)
	must(t, err)
	must(t, f.Close())
	score("the last line is cut short")
}
