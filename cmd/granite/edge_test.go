package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpgranite/granite/harness/results"
)

// TestReleaseBinaryUnderEmulation runs a release binary built for another
// architecture (GRANITE_EDGE_BIN, e.g. dist/granite-linux-arm64) through
// an emulator (GRANITE_EDGE_RUNNER, e.g. "qemu-aarch64 -L
// /usr/aarch64-linux-gnu") and checks that it does what this machine's
// build does: the same version line and embedded specs, verify passing
// with the same summary, and the smoke experiment's trials with identical
// metrics, calls and verdicts. make edge-test sets both variables (and CI
// runs it); without them there is nothing to run.
func TestReleaseBinaryUnderEmulation(t *testing.T) {
	foreign := os.Getenv("GRANITE_EDGE_BIN")
	if foreign == "" {
		t.Skip("GRANITE_EDGE_BIN names no binary: run make edge-test")
	}
	runner := strings.Fields(os.Getenv("GRANITE_EDGE_RUNNER"))
	native := filepath.Join(t.TempDir(), "granite")
	if out, err := exec.Command("go", "build", "-o", native, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	run := func(emulated bool, args ...string) (string, time.Duration) {
		t.Helper()
		argv := append([]string{native}, args...)
		if emulated {
			argv = append(append(slices.Clone(runner), foreign), args...)
		}
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), time.Since(start)
	}

	var nb, fb results.Build
	out, _ := run(false, "version", "--json")
	if err := json.Unmarshal([]byte(out), &nb); err != nil {
		t.Fatal(err)
	}
	out, _ = run(true, "version", "--json")
	if err := json.Unmarshal([]byte(out), &fb); err != nil {
		t.Fatal(err)
	}
	if fb.Arch == nb.Arch || fb.OS != "linux" || fb.SpecsSHA256 != nb.SpecsSHA256 || len(fb.Meters) == 0 {
		t.Errorf("emulated binary says %+v; native %+v: want another arch, the same specs", fb, nb)
	}
	t.Logf("emulated: granite %s %s/%s tags %v cgo %v meters %v", fb.Version, fb.OS, fb.Arch, fb.Tags, fb.CGO, fb.Meters)

	nv, nt := run(false, "verify")
	fv, ft := run(true, "verify")
	if fv != nv {
		t.Errorf("verify differs under emulation:\n%s\nnative:\n%s", fv, nv)
	}
	t.Logf("verify: native %s, emulated %s (%.1f×)", nt.Round(time.Millisecond), ft.Round(time.Millisecond), ft.Seconds()/nt.Seconds())

	dir := t.TempDir()
	_, nt = run(false, "run", "--config", "smoke", "--out", filepath.Join(dir, "native"))
	_, ft = run(true, "run", "--config", "smoke", "--out", filepath.Join(dir, "emulated"))
	t.Logf("smoke: native %s, emulated %s (%.1f×)", nt.Round(time.Millisecond), ft.Round(time.Millisecond), ft.Seconds()/nt.Seconds())
	want, got := comparableTrials(t, filepath.Join(dir, "native")), comparableTrials(t, filepath.Join(dir, "emulated"))
	if len(want) == 0 {
		t.Fatal("the native smoke run wrote no trials")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("smoke trials differ under emulation (-native +emulated):\n%s", diff)
	}
}

// comparableTrials reads a results folder's records keyed by trial ID,
// keeping what does not depend on the clock: metrics but wall time, the
// verdict, and each call's tool, arguments, result and error flag.
func comparableTrials(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		m, _ := rec["metrics"].(map[string]any)
		delete(m, "wall_s")
		var calls []any
		cs, _ := rec["calls"].([]any)
		for _, c := range cs {
			c, _ := c.(map[string]any)
			calls = append(calls, map[string]any{"tool": c["tool"], "arguments": c["arguments"], "result": c["result"], "is_error": c["is_error"]})
		}
		out[rec["trial_id"].(string)] = map[string]any{"metrics": m, "error_class": rec["error_class"], "stop_reason": rec["stop_reason"],
			"final_answer": rec["final_answer"], "calls": calls}
	}
	return out
}
