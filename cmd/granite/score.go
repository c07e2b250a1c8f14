package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/serve"
)

// runScore turns a recording of granite serve --record into a trial
// record, prints its verdict and can add it to a results folder.
func runScore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
	if code, ok := parse(fset, args); !ok {
		return code
	}
	switch {
	case *record == "":
		fmt.Fprintln(stderr, "granite score: --record is required: the file granite serve --record wrote")
		return 2
	case *answer != "" && *answerFile != "":
		fmt.Fprintln(stderr, "granite score: give --answer or --answer-file, not both")
		return 2
	case strings.ContainsAny(*model, "/ ") || *model == "":
		fmt.Fprintf(stderr, "granite score: --model %q: want a name without slashes or spaces (it starts the trial id)\n", *model)
		return 2
	}
	text := *answer
	if *answerFile != "" {
		data, err := os.ReadFile(*answerFile)
		if err != nil {
			fmt.Fprintf(stderr, "granite score: %v\n", err)
			return 1
		}
		text = string(data)
	}
	rc, err := harness.ReadRecording(*record)
	if err != nil {
		fmt.Fprintf(stderr, "granite score: %v\n", err)
		return 1
	}
	for _, n := range rc.Notes {
		fmt.Fprintf(stderr, "granite score: note: %s\n", n)
	}
	spec, _, code := loadSpecs("score", "", stderr)
	if spec == nil {
		return code
	}
	rec, err := harness.ScoreRecording(ctx, spec, gen.Lookup, rc, *model, text)
	if err != nil {
		fmt.Fprintf(stderr, "granite score: %v\n", err)
		return 1
	}
	printVerdict(stdout, rec)
	if *out != "" {
		if err := addRecord(*out, rec); err != nil {
			fmt.Fprintf(stderr, "granite score: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "added %s to %s\n", rec.TrialID, *out)
	}
	return 0
}

// printVerdict says the verdict and every reason for it.
func printVerdict(w io.Writer, r *results.Record) {
	m := r.Metrics
	fmt.Fprintf(w, "%s: tc %g (tc_strict %g), f1 %.2f, action_f1 %.2f, arg_acc %.2f, action_arg_acc %.2f, %d calls\n",
		r.TrialID, m.TC, m.TCStrict, m.F1, m.ActionF1, m.ArgAcc, m.ActionArgAcc, m.ToolCalls)
	for _, why := range m.Why {
		fmt.Fprintf(w, "  - %s\n", why)
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
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// recordedExperiment names the results folders granite score makes.
const recordedExperiment = "recorded"

// addRecord appends a scored recording to a results folder granite score
// made (or makes it): a folder of granite run plans its trials, and a
// record it did not plan would stop its --resume.
func addRecord(out string, rec *results.Record) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	lock, err := results.LockOut(out)
	if err != nil {
		return err
	}
	defer lock.Release()
	man, err := results.ReadManifest(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		man = &results.Manifest{Experiment: recordedExperiment, Config: &results.Config{Name: recordedExperiment}, Shard: "0/1",
			StartedAt: time.Now().UTC().Format(time.RFC3339), Meter: meter.None}
	case err != nil:
		return err
	case man.Experiment != recordedExperiment:
		return fmt.Errorf("%s holds a run of %s; add recordings to a folder of their own (granite report reads each folder)", out, man.Experiment)
	}
	j, done, err := results.OpenJournal(filepath.Join(out, results.TrialsFile))
	if err != nil {
		return err
	}
	for _, d := range done {
		if d.TrialID == rec.TrialID {
			j.Close()
			return fmt.Errorf("%s already holds %s; name this session apart with --model", out, rec.TrialID)
		}
	}
	rec.Index, rec.Experiment = len(done), recordedExperiment
	if err := j.Append(rec); err != nil {
		j.Close()
		return err
	}
	if err := j.Close(); err != nil {
		return err
	}
	if _, ok := man.Config.Entry(rec.Model); !ok {
		man.Config.Models = append(man.Config.Models, results.ModelEntry{Name: rec.Model})
	}
	if !containsLevel(man.Config.Granularities, rec.Level) {
		man.Config.Granularities = append(man.Config.Granularities, rec.Level)
	}
	man.Trials, man.Grid = len(done)+1, len(done)+1
	// The hash covers the recorded subjects and levels and the specs they
	// were scored on, as a run's covers its config.
	man.ConfigHash = harness.ConfigHash(man.Config)
	return results.WriteManifest(out, man)
}

func containsLevel(ls []level.Level, l level.Level) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// serveRecorded serves a scenario's domain at a level on one store every
// session shares, prints the prompt to give the client, and appends every
// call of every session to record (when set) as it is answered.
func serveRecorded(ctx context.Context, scenario, domain, record string, level level.Level, transport string, addr listen, ho serve.Options, stdout, stderr io.Writer) int {
	if transport != "http" {
		fmt.Fprintln(stderr, "granite serve: --scenario and --record serve over --transport http: give the client the URL printed, with the token")
		return 2
	}
	if name, _, _ := strings.Cut(scenario, "-"); domain != "" && domain != name {
		fmt.Fprintf(stderr, "granite serve: --scenario %s belongs to domain %s, not --domain %s\n", scenario, name, domain)
		return 2
	}
	spec, _, code := loadSpecs("serve", "", stderr)
	if spec == nil {
		return code
	}
	r, err := harness.NewRecorder(spec, gen.Lookup, scenario, level)
	if err != nil {
		fmt.Fprintf(stderr, "granite serve: %v\n", err)
		return 2
	}
	if record != "" {
		// Every call is appended as it is answered, so the recording
		// survives a kill; creating it now fails before any session.
		if err := r.RecordTo(record); err != nil {
			fmt.Fprintf(stderr, "granite serve: --record: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "Give your MCP client this prompt (scenario %s at %s):\n\n%s\n\n", scenario, level, r.Prompt())
	h := r.Handler(ho)
	name, _, _ := strings.Cut(scenario, "-")
	code = serveHTTP(ctx, h, addr, name, level, stderr)
	_ = h.Close(context.Background())
	if record == "" {
		return code
	}
	if err := r.Close(); err != nil {
		fmt.Fprintf(stderr, "granite serve: --record: %v\n", err)
		return 1
	}
	rc := r.Recording()
	fmt.Fprintf(stderr, "granite: recorded %d calls in %d sessions to %s; score it with granite score --record %s --answer-file ANSWER\n",
		len(rc.Calls), rc.Sessions, record, record)
	return code
}
