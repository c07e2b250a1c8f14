package advise

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
	"github.com/mcpgranite/granite/specs"
)

func loadSpec(t *testing.T) *speclang.Spec {
	t.Helper()
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestConfig(t *testing.T) {
	spec := loadSpec(t)
	for _, c := range []struct {
		name, config, models string
		want                 []string // the models; nil when an error is wanted
		err                  string
	}{
		{"models alone", "", "builtin:sim, builtin:oracle,", []string{"builtin:sim", "builtin:oracle"}, ""},
		{"a config's models", "smoke", "", []string{"builtin:oracle", "builtin:silent"}, ""},
		{"a config's models narrowed, in the order named", "smoke", "builtin:silent", []string{"builtin:silent"}, ""},
		{"a model the config lacks", "smoke", "builtin:sim", nil, `--models: "builtin:sim" is not in smoke`},
		{"no models", "", "", nil, "no models: give --models"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Config(spec, c.config, c.models)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Config: %v; want an error saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ModelNames(); !slices.Equal(got, c.want) {
				t.Errorf("models %v; want %v", got, c.want)
			}
			// The grid's tasks and candidates are the field's, never the
			// config's.
			if len(cfg.Domains)+len(cfg.Granularities)+len(cfg.Interfaces) > 0 || cfg.Artifacts != "" {
				t.Errorf("config keeps domains %v, levels %v, interfaces %v, artifacts %q", cfg.Domains, cfg.Granularities, cfg.Interfaces, cfg.Artifacts)
			}
		})
	}
}

func TestDomainField(t *testing.T) {
	spec := loadSpec(t)
	dom := gen.Domains[0]
	d := spec.Domain(dom.Name)
	for _, c := range []struct {
		candidates string
		want       []string // candidate names; nil when an error is wanted
		err        string
	}{
		{"levels", []string{"L4", "L3", "L2", "L1"}, ""},
		{"L1,L3-terse", []string{"L1", "L3-terse"}, ""},
		{"L4,L4", nil, "--candidates: L4 given twice"},
		{"L9", nil, "--candidates: "},
	} {
		t.Run(c.candidates, func(t *testing.T) {
			cfg := &results.Config{}
			f, err := DomainField(d, dom, c.candidates, "", cfg)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("DomainField: %v; want an error saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, cand := range f.Cands {
				names = append(names, cand.Name)
			}
			if !slices.Equal(names, c.want) {
				t.Errorf("candidates %v; want %v", names, c.want)
			}
			if f.Source != "domain "+dom.Name || f.Out != filepath.Join("results", "advise-"+dom.Name) || !slices.Equal(cfg.Domains, []string{dom.Name}) {
				t.Errorf("source %q, out %q, domains %v", f.Source, f.Out, cfg.Domains)
			}
			if len(f.Tasks) != len(d.Scenarios) || len(f.Calls[f.Cands[0].Name]) != len(f.Tasks) {
				t.Errorf("%d tasks, %d call counts; want one per scenario, %d", len(f.Tasks), len(f.Calls[f.Cands[0].Name]), len(d.Scenarios))
			}
			p := f.Success(0.8)
			for _, cand := range f.Cands {
				if len(p[cand.Name]) != len(f.Tasks) {
					t.Errorf("%s: %d success probabilities; want one per task", cand.Name, len(p[cand.Name]))
				}
				for _, v := range p[cand.Name] {
					if v < 0 || v > 1 {
						t.Errorf("%s: success %g outside [0, 1]", cand.Name, v)
					}
				}
			}
		})
	}
}

// TestServerField: a server's field is offline artifacts written under
// the results folder with their tools, which the config's artifact
// source then names; a groups file that named skipped tools is written
// anew without them.
func TestServerField(t *testing.T) {
	tools, err := toolsrc.LoadTools("../testdata/server-memory.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := &results.Config{}
	s := Server{Name: "memory", Tools: tools, Groups: regroup.Derive("memory", tools), GroupsFile: "groups.yaml", Skipped: true,
		ToolsFile: "../testdata/server-memory.tools.json"}
	f, err := ServerField(s, "levels", out, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != "server memory" || f.Out != out || len(f.Tasks) != 3 || len(f.Cands) != len(level.Levels) || f.Groups == nil {
		t.Errorf("source %q, out %q, %d tasks, %d candidates, groups %v", f.Source, f.Out, len(f.Tasks), len(f.Cands), f.Groups != nil)
	}
	arts := filepath.Join(out, "artifacts.jsonl")
	if cfg.Artifacts != arts || cfg.ArtifactTools != filepath.Join(out, "artifacts.tools.json") || cfg.Groups != filepath.Join(out, "groups.yaml") {
		t.Errorf("config artifacts %q, tools %q, groups %q", cfg.Artifacts, cfg.ArtifactTools, cfg.Groups)
	}
	for _, p := range []string{cfg.Artifacts, cfg.ArtifactTools, cfg.Groups} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	y, err := f.Groups(f.Specs["L2"])
	if err != nil || !strings.Contains(string(y), "groups of memory's tools for L2 (granite advise)") {
		t.Errorf("groups file of L2: %v\n%s", err, y)
	}
}

// TestCompositionCandidates: --candidates compositions races each level
// as written against it atomic, each candidate with its own gold calls
// (atomic: the expanded gold's, never fewer; more where a task calls a
// preset); a server, whose tools granite composes none of, is told to
// race levels instead.
func TestCompositionCandidates(t *testing.T) {
	spec := loadSpec(t)
	i := slices.IndexFunc(gen.Domains, func(d *mcpdomain.Domain) bool { return serve.Composes(d, level.L4, "") })
	if i < 0 {
		t.Fatal("no domain offers a composite operation")
	}
	dom := gen.Domains[i]
	cfg := &results.Config{}
	f, err := DomainField(spec.Domain(dom.Name), dom, "compositions", "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cands) != 2*len(level.Levels) || len(cfg.Granularities) != len(level.Levels) || len(cfg.Interfaces) != len(level.Levels) {
		t.Fatalf("candidates %v, granularities %v, interfaces %v; want each level as written and atomic", f.Cands, cfg.Granularities, cfg.Interfaces)
	}
	for _, lv := range level.Levels {
		written, atomic := f.Calls[string(lv)], f.Calls[string(lv)+"-atomic"]
		more := false
		for i := range written {
			if atomic[i] < written[i] {
				t.Errorf("%s task %s: %d atomic calls, %d as written; want no fewer", lv, f.Tasks[i], atomic[i], written[i])
			}
			more = more || atomic[i] > written[i]
		}
		if !more {
			t.Errorf("%s: no task has more calls atomic; want the preset tasks expanded", lv)
		}
	}
	tools, err := toolsrc.LoadTools("../testdata/server-memory.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	s := Server{Name: "memory", Tools: tools, Groups: regroup.Derive("memory", tools), ToolsFile: "../testdata/server-memory.tools.json"}
	if _, err := ServerField(s, "compositions", t.TempDir(), 3, &results.Config{}); err == nil || !strings.Contains(err.Error(), "race --candidates levels") {
		t.Errorf("a server's compositions: %v; want it told to race levels", err)
	}
}
