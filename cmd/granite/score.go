package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/recorded"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
)

// runScore turns a recording of granite serve --record into a trial
// record, prints its verdict and can add it to a results folder.
func runScore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("score", "--record FILE [--answer TEXT | --answer-file F] [--model NAME] [--out DIR]",
		"Scores a session granite serve --record recorded, as a trial of the usual schema:\n"+
			"the calls every session made, the store they left, and the client's final answer.\n"+
			"Prints the verdict with its reasons; --out adds the record to a results folder\n"+
			"(new, or one granite score made) that granite report reads.", stderr)
	record := fset.String("record", "", "the recording (granite serve --record FILE), also one of a server that was killed")
	answer := fset.String("answer", "", "the client's final answer")
	answerFile := fset.String("answer-file", "", "a file holding the client's final answer")
	model := fset.String("model", "recorded", "what the record calls the subject (client, model, person)")
	out := fset.String("out", "", "results folder to add the record to")
	if err := parse(fset, args); err != nil {
		return err
	}
	switch {
	case *record == "":
		return usagef("--record is required: the file granite serve --record wrote")
	case *answer != "" && *answerFile != "":
		return usagef("give --answer or --answer-file, not both")
	case strings.ContainsAny(*model, "/ ") || *model == "":
		return usagef("--model %q: want a name without slashes or spaces (it starts the trial id)", *model)
	}
	text := *answer
	if *answerFile != "" {
		data, err := os.ReadFile(*answerFile)
		if err != nil {
			return err
		}
		text = string(data)
	}
	rc, err := recorded.Read(*record)
	if err != nil {
		return err
	}
	for _, n := range rc.Notes {
		fmt.Fprintf(stderr, "granite score: note: %s\n", oneline.Escape(n))
	}
	spec, _, err := loadSpecs("", stderr)
	if err != nil {
		return err
	}
	rec, err := harness.ScoreRecording(ctx, spec, gen.Lookup, rc, *model, text)
	if err != nil {
		return err
	}
	printVerdict(stdout, rec)
	if *out != "" {
		if err := harness.AddRecord(*out, rec); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added %s to %s\n", oneline.Escape(rec.TrialID), *out)
	}
	return nil
}

// printVerdict says the verdict and every reason for it.
func printVerdict(w io.Writer, r *results.Record) {
	m := r.Metrics
	fmt.Fprintf(w, "%s: tc %g (tc_strict %g), f1 %.2f, action_f1 %.2f, arg_acc %.2f, action_arg_acc %.2f, %d calls\n",
		oneline.Escape(r.TrialID), m.TC, m.TCStrict, m.F1, m.ActionF1, m.ArgAcc, m.ActionArgAcc, m.ToolCalls)
	for _, why := range m.Why {
		fmt.Fprintf(w, "  - %s\n", oneline.Escape(why))
	}
	if m.TC == 1 {
		fmt.Fprintln(w, "  the task is done: every state condition holds, the answer states every fact, and nothing else changed")
	}
	// tc_strict below tc: the task is done, but the store is not one of
	// the right ones byte for byte.
	if m.TC == 1 && m.TCStrict == 0 && m.Explain != nil && m.Explain.StoreDiff != nil {
		d := m.Explain.StoreDiff
		fmt.Fprintf(w, "  tc_strict 0: the final store equals no right final store byte for byte; against the nearest (%d of %d):\n", d.Right+1, d.Rights)
		for _, l := range d.Lines(10) {
			fmt.Fprintf(w, "    %s\n", oneline.Escape(l))
		}
	}
}

// serveRecorded serves a scenario's domain at a level on one store every
// session shares, prints the prompt to give the client, and appends every
// call of every session to record (when set) as it is answered, with the
// faults sched draws injected (nil: none).
func serveRecorded(ctx context.Context, scenario, domain, record string, level level.Level, transport string, addr serve.Endpoint, ho serve.Options, stdout, stderr io.Writer, sched *faults.Schedule) error {
	if transport != "http" {
		return usagef("--scenario and --record serve over --transport http: give the client the URL printed, with the token")
	}
	if name, _, _ := strings.Cut(scenario, "-"); domain != "" && domain != name {
		return usagef("--scenario %s belongs to domain %s, not --domain %s", scenario, name, domain)
	}
	spec, _, err := loadSpecs("", stderr)
	if err != nil {
		return err
	}
	r, err := harness.NewRecorder(spec, gen.Lookup, scenario, level, sched)
	if err != nil {
		return badUsage(err)
	}
	if record != "" {
		// Every call is appended as it is answered, so the recording
		// survives a kill; creating it now fails before any session.
		if err := r.RecordTo(record); err != nil {
			return fmt.Errorf("--record: %v", err)
		}
	}
	fmt.Fprintf(stdout, "Give your MCP client this prompt (scenario %s at %s):\n\n%s\n\n", scenario, level, r.Prompt())
	h, err := r.Handler(ho)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(scenario, "-")
	err = serveHTTP(ctx, h, addr, served(name, surface.Identity(level)), stderr)
	_ = h.Close(context.Background())
	if record == "" {
		return err
	}
	if cerr := r.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("--record: %v", cerr))
	}
	// A server that failed still says what it recorded, then why.
	rc := r.Recording()
	fmt.Fprintf(stderr, "granite: recorded %d calls in %d sessions to %s; score it with granite score --record %s --answer-file ANSWER\n",
		len(rc.Calls), rc.Sessions, record, record)
	return err
}
