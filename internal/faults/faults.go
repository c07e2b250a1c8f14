// Package faults holds what an experiment's fault settings say and the
// schedule they draw: which call of a trial fails, and how. A schedule is
// a pure function of the run's seed, the trial's scenario and repetition,
// the setting's name, the operation a call runs and the call's index among
// the calls to that operation; never of the tool name or the model. The
// third set_device of a trial therefore fails alike at L4 and at L1, for
// every subject, and a repeated run reproduces every fault. Package serve
// injects what a schedule draws where a domain's server runs a call
// (docs/faults.md says what each kind does).
package faults

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Kind is a kind of fault.
type Kind string

// The kinds of fault, each defined in docs/faults.md by what the agent
// sees and what the store does.
const (
	// Transient is a tool error saying the service is briefly
	// unavailable; nothing is applied.
	Transient Kind = "transient"
	// RateLimit is a tool error with a retry-after; nothing is applied.
	RateLimit Kind = "rate_limit"
	// Timeout applies the call and answers with a timeout error.
	Timeout Kind = "timeout"
	// Partial applies the call and cuts its reply.
	Partial Kind = "partial"
	// Offline takes an entity the call names off the network for the
	// rest of the trial; the call and every later one naming it fail,
	// nothing applied.
	Offline Kind = "offline"
)

// Kinds are the kinds a setting may name, in the order the docs give them.
var Kinds = []Kind{Transient, RateLimit, Timeout, Partial, Offline}

// DefaultKinds are the kinds of a setting that names none: every kind
// that leaves the task doable.
var DefaultKinds = []Kind{Transient, RateLimit, Timeout, Partial}

// Known reports whether k is one of Kinds.
func Known(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Setting is one level of the fault factor, as an experiment config
// writes it: a name records and trial ids carry, the chance that a call
// faults, and the kinds a faulted call draws from (DefaultKinds when
// empty).
type Setting struct {
	Name  string  `json:"name"`
	Rate  float64 `json:"rate"`
	Kinds []Kind  `json:"kinds,omitempty"`
}

// None reports whether the setting injects nothing: its trials are the
// trials of a run without faults, with their ids and records.
func (s Setting) None() bool { return s.Rate == 0 }

// kinds are the kinds the setting draws from.
func (s Setting) kinds() []Kind {
	if len(s.Kinds) == 0 {
		return DefaultKinds
	}
	return s.Kinds
}

// Schedule is a setting drawn for one trial: the run's seed, the trial's
// scenario and repetition. It says of each call to an operation whether
// it faults, and how.
type Schedule struct {
	Setting    Setting `json:"setting"`
	Seed       int     `json:"seed"`
	Scenario   string  `json:"scenario"`
	Repetition int     `json:"repetition"`
}

// Draw is the fault of the k-th call (from 1) to operation op in the
// trial, or "" for none. Each draw hashes its inputs afresh, so a call's
// fault depends on nothing else the trial did.
func (s *Schedule) Draw(op string, k int) Kind {
	if s == nil || s.Setting.Rate <= 0 {
		return ""
	}
	h := sha256.Sum256(fmt.Appendf(nil, "granite-faults\x00%d\x00%s\x00%d\x00%s\x00%s\x00%d", s.Seed, s.Scenario, s.Repetition, s.Setting.Name, op, k))
	// 53 bits make a uniform float in [0, 1), as math/rand does.
	u := float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
	if u >= s.Setting.Rate {
		return ""
	}
	kinds := s.Setting.kinds()
	return kinds[binary.BigEndian.Uint64(h[8:16])%uint64(len(kinds))]
}

// What an agent reads of each kind that fails a call. The oracle, like a
// careful agent, tells the retryable ones by these words (Retryable).
const (
	TransientText = "service briefly unavailable: the gateway did not reach the device; nothing was applied, try again"
	RateLimitText = "rate limited: too many requests to the gateway; nothing was applied, retry after 1s"
	TimeoutText   = "timed out after 30s waiting for the device: the request may or may not have been applied"
	// PartialMarker ends a list a partial reply cut, and names the fields
	// it left out of an object.
	PartialMarker = "reply cut short"
)

// OfflineText is the error of a call that names an entity that stopped
// answering.
func OfflineText(entity, id string) string {
	return fmt.Sprintf("%s %s is not answering (offline): nothing was applied; it may stay unreachable", entity, id)
}

// Retryable reports whether a tool error says the call was not applied
// and may be made again as it was: a transient failure or a rate limit.
func Retryable(text string) bool {
	return strings.HasPrefix(text, "service briefly unavailable:") || strings.HasPrefix(text, "rate limited:")
}

// ParseSetting reads a setting as a flag writes it: name:rate, or
// name:rate:kind,kind (flaky:0.2:transient,rate_limit).
func ParseSetting(s string) (Setting, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || !validName(parts[0]) {
		return Setting{}, fmt.Errorf("fault setting %q: expected name:rate or name:rate:kind,kind, a name of lowercase letters, digits, '.', '_' and '-', like flaky:0.2:transient,rate_limit", s)
	}
	rate, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || rate < 0 || rate > 1 {
		return Setting{}, fmt.Errorf("fault setting %q: found rate %q; expected a number from 0 to 1, the chance that a call faults", s, parts[1])
	}
	out := Setting{Name: parts[0], Rate: rate}
	if len(parts) == 3 {
		for _, k := range strings.Split(parts[2], ",") {
			if !Known(Kind(k)) {
				return Setting{}, fmt.Errorf("fault setting %q: found kind %q; expected one of %s", s, k, kindList())
			}
			out.Kinds = append(out.Kinds, Kind(k))
		}
	}
	return out, nil
}

// validName reports whether a setting's name is one records and trial ids
// can carry (the experiment schema's pattern).
func validName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return false
		}
	}
	return true
}

// kindList names Kinds for a message.
func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Problem is what a list of settings may not say, at a setting's index
// and field.
type Problem struct {
	Index int
	Field string
	Msg   string
}

// Check finds what a config's schema cannot say of its settings: rates
// from 0 to 1, names given once, and one setting of no faults at most
// (two would be the same trials under the same ids).
func Check(settings []Setting) []Problem {
	var out []Problem
	seen := map[string]bool{}
	none := ""
	for i, s := range settings {
		if s.Rate < 0 || s.Rate > 1 {
			out = append(out, Problem{i, "rate", fmt.Sprintf("found %v; expected a number from 0 to 1, the chance that a call faults", s.Rate)})
		}
		if seen[s.Name] {
			out = append(out, Problem{i, "name", fmt.Sprintf("found fault setting name %q again; expected each name once: trial ids and records tell settings apart by it", s.Name)})
		}
		seen[s.Name] = true
		if s.Rate == 0 {
			if none != "" {
				out = append(out, Problem{i, "rate", fmt.Sprintf("found a second setting of rate 0 (%q, after %q); expected one at most: both inject nothing, and would play the same trials under the same ids", s.Name, none)})
			}
			none = s.Name
		}
	}
	return out
}
