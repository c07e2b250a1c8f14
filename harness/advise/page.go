package advise

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/surface"
)

// PageFile and JSONFile are what an advise writes beside its results: the
// Markdown page a reader reads and the same advice as JSON.
const (
	PageFile = "advise.md"
	JSONFile = "advise.json"
)

// Publish is what to publish for a pick: the interface's definition and,
// for a regrouped server, the groups file of its level.
type Publish struct {
	// Interface is the pick as a config's interfaces entry names it.
	Interface surface.Spec `json:"interface"`
	// Groups is the groups file that builds the pick's level of a
	// server's tools (empty for a generated domain, whose spec does).
	Groups string `json:"groups,omitempty"`
}

// Write writes the advice's page and JSON into its results folder, and
// for each model the files that publish its pick: <model>.interface.yaml
// and, for a server, <model>.groups.yaml. specs names each candidate's
// interface; groups gives a level's groups file (nil for a domain).
func Write(adv *Advice, specs map[string]surface.Spec, groups func(surface.Spec) ([]byte, error), source string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Which interface to publish: %s\n\n", source)
	fmt.Fprintf(&b, "%d candidates raced for %d model(s); the full grid would play %d trials per model. "+
		"A candidate is dropped once the trials show it worse than another (%s); the pick is the best survivor.\n\n",
		len(adv.Candidates), len(adv.Models), adv.GridTrials, ProcedureWords(adv.Race))
	if f := adv.Faults; f != nil {
		fmt.Fprintf(&b, "Every trial was played under the fault setting `%s` (%s), each candidate meeting the same faults on the same calls to the same operation (see granite's docs/faults.md).\n\n", f.Name, faultWords(*f))
	}
	type roundJSON struct {
		Round     int      `json:"round"`
		Survivors []string `json:"survivors"`
		Dropped   []string `json:"dropped,omitempty"`
		LostTo    []string `json:"lost_to,omitempty"`
	}
	type pickJSON struct {
		Interface string   `json:"interface"`
		TC        *float64 `json:"tc,omitempty"`
		Low       *float64 `json:"tc_low,omitempty"`
		High      *float64 `json:"tc_high,omitempty"`
		Trials    int      `json:"trials"`
		Published string   `json:"published,omitempty"`
		Ahead     *float64 `json:"ahead_of_published,omitempty"`
		AheadLow  *float64 `json:"ahead_low,omitempty"`
		AheadHigh *float64 `json:"ahead_high,omitempty"`
	}
	type modelJSON struct {
		Model          string      `json:"model"`
		Pick           pickJSON    `json:"pick"`
		Publish        Publish     `json:"publish"`
		Trials         int         `json:"trials"`
		GridTrials     int         `json:"grid_trials"`
		ModelSeconds   float64     `json:"model_seconds"`
		SecondsPerTask *float64    `json:"seconds_per_task"`
		JoulesPerTask  *float64    `json:"joules_per_task"`
		Stopped        string      `json:"stopped"`
		Rounds         []roundJSON `json:"rounds"`
	}
	var out []modelJSON
	for _, m := range adv.Models {
		p := m.Pick
		pub := Publish{Interface: specs[p.Pick]}
		if groups != nil {
			g, err := groups(pub.Interface)
			if err != nil {
				return fmt.Errorf("advise: groups of %s: %w", p.Pick, err)
			}
			pub.Groups = string(g)
		}
		fmt.Fprintf(&b, "## %s: publish %s\n\n", m.Model, p.Pick)
		if p.Trials == 0 {
			// No trials have no estimate and no interval: shown as not
			// available, as the report shows an empty sample's.
			fmt.Fprintf(&b, "- %s\n", NoEstimate)
		} else {
			fmt.Fprintf(&b, "- TC %.3f (95%% CI %.3f–%.3f, %s, %d trials)\n", p.Mean, p.Low, p.High, p.Interval, p.Trials)
		}
		if d := p.VsPublished; d != nil && d.Published != p.Pick {
			fmt.Fprintf(&b, "- ahead of %s, as published, by %+.3f TC (paired over %d trials, 95%% CI %+.3f to %+.3f)\n", d.Published, d.Mean, d.Pairs, d.Low, d.High)
		} else if d != nil {
			fmt.Fprintf(&b, "- the interface as published is the pick\n")
		}
		fmt.Fprintf(&b, "- %s per completed task, %s per completed task\n", amount(m.SecondsPerTask, "s"), amount(m.JoulesPerTask, "J"))
		fmt.Fprintf(&b, "- spent %d trials (%.0f%% of the grid's %d), %.0f model-seconds; stopped: %s\n\n", m.Trials, 100*float64(m.Trials)/float64(max(1, adv.GridTrials)), adv.GridTrials, m.ModelSeconds, m.Stopped)
		b.WriteString("Rounds that dropped a candidate (and the first and last):\n\n| round | survivors | dropped, and why |\n|---|---|---|\n")
		for k, d := range m.Rounds {
			// Rounds that dropped nothing are left out, but the first and
			// the last.
			if len(d.Dropped) == 0 && k > 0 && k < len(m.Rounds)-1 {
				continue
			}
			var dropped []string
			for _, c := range d.Dropped {
				why := fmt.Sprintf("adjusted p %.2g", c.Adjusted)
				if adv.Race.Procedure != ProcedureSign {
					why = fmt.Sprintf("summed difference %.1f below −%.1f", c.Sum, c.Boundary)
				}
				dropped = append(dropped, fmt.Sprintf("%s (lost to %s: %s over %d pairs)", c.Candidate, c.Against, why, c.Pairs))
			}
			fmt.Fprintf(&b, "| %d | %d | %s |\n", d.Round, len(d.Survivors), strings.Join(dropped, ", "))
		}
		b.WriteString("\nTo publish it, as a config's interface:\n\n```yaml\n" + specYAML(pub.Interface) + "```\n\n")
		if pub.Groups != "" {
			b.WriteString("and the groups file of its level (`granite serve --groups`):\n\n```yaml\n" + pub.Groups + "```\n\n")
		}
		name := FileName(m.Model)
		if err := results.WriteFile(adv.Out, name+".interface.yaml", []byte(specYAML(pub.Interface))); err != nil {
			return err
		}
		if pub.Groups != "" {
			if err := results.WriteFile(adv.Out, name+".groups.yaml", []byte(pub.Groups)); err != nil {
				return err
			}
		}
		pj := pickJSON{Interface: p.Pick, TC: finite(p.Mean), Low: finite(p.Low), High: finite(p.High), Trials: p.Trials}
		if d := p.VsPublished; d != nil {
			pj.Published, pj.Ahead, pj.AheadLow, pj.AheadHigh = d.Published, finite(d.Mean), finite(d.Low), finite(d.High)
		}
		var rounds []roundJSON
		for _, d := range m.Rounds {
			r := roundJSON{Round: d.Round, Survivors: d.Survivors}
			for _, c := range d.Dropped {
				r.Dropped, r.LostTo = append(r.Dropped, c.Candidate), append(r.LostTo, c.Against)
			}
			rounds = append(rounds, r)
		}
		out = append(out, modelJSON{Model: m.Model, Pick: pj, Publish: pub, Trials: m.Trials, GridTrials: adv.GridTrials, ModelSeconds: m.ModelSeconds,
			SecondsPerTask: finite(m.SecondsPerTask), JoulesPerTask: finite(m.JoulesPerTask), Stopped: m.Stopped, Rounds: rounds})
	}
	b.WriteString("The trials are in trials.jsonl beside this page: `granite report` and `granite view` read the folder as any run's.\n")
	if err := results.WriteFile(adv.Out, PageFile, []byte(b.String())); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		Source     string          `json:"source"`
		Race       Race            `json:"race"`
		Faults     *faults.Setting `json:"faults,omitempty"`
		Candidates []Candidate     `json:"candidates"`
		Models     []modelJSON     `json:"models"`
	}{source, adv.Race, adv.Faults, adv.Candidates, out}, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFile(adv.Out, JSONFile, append(data, '\n'))
}

// faultWords says what a fault setting injects: its rate and kinds.
func faultWords(f faults.Setting) string {
	kinds := f.Kinds
	if len(kinds) == 0 {
		kinds = faults.DefaultKinds
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return fmt.Sprintf("a call faults with probability %s, as %s", strconv.FormatFloat(f.Rate, 'g', -1, 64), strings.Join(names, ", "))
}

// specYAML is an interface as a config's interfaces entry.
func specYAML(s surface.Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- name: %s\n  level: %s\n", s.Name, s.Level)
	for _, c := range s.Transforms.Changes() {
		k, v, _ := strings.Cut(c, "=")
		fmt.Fprintf(&b, "  %s: %s\n", k, v)
	}
	return b.String()
}

// FileName is a model's name as the files that publish its pick start
// with: what is not a letter, digit,
// dot or dash becomes _.
func FileName(model string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, model)
}

// maxFileName bounds a model's part of the files advise writes: with
// ".interface.yaml" after it, a name stays under the 255 bytes a file
// system allows.
const maxFileName = 200

// CheckFileNames refuses, before a race is played, models whose files
// would collide (m:1 and m_1 both write m_1.interface.yaml) or whose
// names are too long for a file name.
func CheckFileNames(models []string) error {
	seen := map[string]string{}
	for _, m := range models {
		f := FileName(m)
		if len(f) > maxFileName {
			return fmt.Errorf("advise: model %.40q… is %d bytes long as a file name; at most %d (rename it in the config)", m, len(f), maxFileName)
		}
		if other, ok := seen[f]; ok {
			return fmt.Errorf("advise: models %q and %q would write the same files (%s.interface.yaml); name one of them otherwise in the config", other, m, f)
		}
		seen[f] = m
	}
	return nil
}

func amount(v float64, unit string) string {
	if math.IsNaN(v) {
		return "– " + unit
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// finite is v for JSON, or nil (the field left out) where v is not
// available.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ProcedureWords says how a race drops candidates, for pages and plans.
func ProcedureWords(r Race) string {
	r = r.Normal()
	if r.Procedure == ProcedureSign {
		return fmt.Sprintf("paired sign tests with Holm's adjustment, family-wise error rate %.2g, looks after rounds %d to %d", r.Alpha, r.MinRounds, r.MaxRounds)
	}
	return fmt.Sprintf("Kim and Nelson's indifference-zone race: right with probability %.2g when the best leads by %.2g TC, a first stage of %d rounds, at most %d", 1-r.Alpha, r.Delta, r.MinRounds, r.MaxRounds)
}
