package faults

import (
	"math"
	"strings"
	"testing"
)

// TestDraw: a draw is a function of its inputs alone, a rate of 0 draws
// nothing, and over many calls the share that fault is near the rate and
// every kind of the setting is drawn.
func TestDraw(t *testing.T) {
	s := &Schedule{Setting: Setting{Name: "flaky", Rate: 0.2}, Seed: 42, Scenario: "garden-001", Repetition: 1}
	again := *s
	faulted, seen := 0, map[Kind]bool{}
	const n = 20000
	for k := 1; k <= n; k++ {
		kind := s.Draw("set_pump", k)
		if kind != again.Draw("set_pump", k) {
			t.Fatalf("call %d drew %q, then %q", k, kind, again.Draw("set_pump", k))
		}
		if kind != "" {
			faulted++
			seen[kind] = true
		}
	}
	if share := float64(faulted) / n; math.Abs(share-0.2) > 0.02 {
		t.Errorf("%.3f of calls faulted; want about 0.2", share)
	}
	for _, k := range DefaultKinds {
		if !seen[k] {
			t.Errorf("kind %s never drawn", k)
		}
	}
	if seen[Offline] {
		t.Error("offline drawn from the default kinds")
	}
	var none *Schedule
	zero := &Schedule{Setting: Setting{Name: "none"}, Seed: 42}
	for k := 1; k <= 100; k++ {
		if none.Draw("set_pump", k) != "" || zero.Draw("set_pump", k) != "" {
			t.Fatal("a nil or rate-0 schedule drew a fault")
		}
	}
}

// TestRetryable: the oracle retries what says it applied nothing, and
// nothing else.
func TestRetryable(t *testing.T) {
	for text, want := range map[string]bool{
		TransientText:              true,
		RateLimitText:              true,
		TimeoutText:                false,
		OfflineText("device", "D"): false,
		"unknown device DV999":     false,
	} {
		if Retryable(text) != want {
			t.Errorf("Retryable(%q) = %v; want %v", text, !want, want)
		}
	}
}

// TestParseSetting: a flag's setting, and what it may not say.
func TestParseSetting(t *testing.T) {
	s, err := ParseSetting("flaky:0.2:transient,rate_limit")
	if err != nil || s.Name != "flaky" || s.Rate != 0.2 || len(s.Kinds) != 2 || s.Kinds[1] != RateLimit {
		t.Errorf("%+v, %v", s, err)
	}
	if s, err := ParseSetting("calm:0"); err != nil || !s.None() {
		t.Errorf("%+v, %v", s, err)
	}
	for in, want := range map[string]string{
		"flaky":                 "expected name:rate",
		"Flaky:0.2":             "expected name:rate",
		"flaky:1.5":             `found rate "1.5"; expected a number from 0 to 1`,
		"flaky:x":               `found rate "x"`,
		"flaky:0.2:cosmic_ray":  `found kind "cosmic_ray"; expected one of transient, rate_limit, timeout, partial, offline`,
		"flaky:0.2:transient:x": "expected name:rate",
	} {
		if _, err := ParseSetting(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSetting(%q): %v; want an error with %q", in, err, want)
		}
	}
}
