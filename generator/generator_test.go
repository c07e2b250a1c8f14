package generator

import (
	"bytes"
	"flag"
	"github.com/mcpgranite/granite/internal/speclang"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// specFS returns an FS holding the real spec schema and the given domain
// files (path -> content).
func specFS(t testing.TB, files map[string]string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, name := range []string{speclang.SchemaFile, speclang.ScenarioSchemaFile} {
		schema, err := os.ReadFile("../specs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: schema}
	}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return fsys
}

// TestGolden renders each testdata/golden/<case>/domain.yaml and compares
// every generated file with testdata/golden/<case>/want/. Run with -update
// to rewrite the wanted files after an intended change.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/golden/*/domain.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, c := range cases {
		dir := filepath.Dir(c)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := speclang.Load(specFS(t, map[string]string{name + "/domain.yaml": string(src)}))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(spec.Warnings) > 0 {
				t.Errorf("unexpected warnings: %v", spec.Warnings)
			}
			files, err := Render(spec)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "want")
			if *update {
				if err := os.RemoveAll(want); err != nil {
					t.Fatal(err)
				}
				if _, _, err := Write(want, files); err != nil {
					t.Fatal(err)
				}
				return
			}
			var got []string
			for p, data := range files {
				got = append(got, p)
				old, err := os.ReadFile(filepath.Join(want, p))
				if err != nil {
					t.Errorf("%s: not in golden files (run go test ./generator -update): %v", p, err)
					continue
				}
				if diff := cmp.Diff(string(old), string(data)); diff != "" {
					t.Errorf("%s differs from golden (-want +got):\n%s", p, diff)
				}
			}
			var wantFiles []string
			_ = filepath.WalkDir(want, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(want, p)
					wantFiles = append(wantFiles, filepath.ToSlash(rel))
				}
				return nil
			})
			sort.Strings(got)
			if diff := cmp.Diff(wantFiles, got); diff != "" {
				t.Errorf("generated file set (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderIsDeterministic renders the repository's specs twice and
// compares bytes: no map order, time or path may leak into generated code.
func TestRenderIsDeterministic(t *testing.T) {
	outs := []map[string][]byte{renderRepo(t), renderRepo(t)}
	if len(outs[0]) != len(outs[1]) {
		t.Fatalf("file counts differ: %d vs %d", len(outs[0]), len(outs[1]))
	}
	for p, a := range outs[0] {
		if !bytes.Equal(a, outs[1][p]) {
			t.Errorf("%s differs between two renders", p)
		}
		if !bytes.HasPrefix(a, []byte("// "+header)) {
			t.Errorf("%s lacks the generated-code header", p)
		}
	}
}

// TestCommittedGenIsCurrent compares the committed gen/ with a fresh render.
func TestCommittedGenIsCurrent(t *testing.T) {
	for p, data := range renderRepo(t) {
		old, err := os.ReadFile(filepath.Join("..", "gen", p))
		if err != nil || !bytes.Equal(old, data) {
			t.Errorf("gen/%s is stale: run go generate ./...", p)
		}
	}
}

// TestWriteSkipsUnchangedAndRemovesStale checks the safe-write rules.
func TestWriteSkipsUnchangedAndRemovesStale(t *testing.T) {
	dir := t.TempDir()
	gen := []byte("// " + header + "\n\npackage x\n")
	files := map[string][]byte{"a/x_gen.go": gen, "registry.go": gen}
	if w, _, err := Write(dir, files); err != nil || len(w) != 2 {
		t.Fatalf("first write: %v %v", w, err)
	}
	if w, _, err := Write(dir, files); err != nil || len(w) != 0 {
		t.Fatalf("second write rewrote unchanged files: %v %v", w, err)
	}
	hand := filepath.Join(dir, "a", "hand.go")
	if err := os.WriteFile(hand, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, removed, err := Write(dir, map[string][]byte{"registry.go": gen})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/x_gen.go"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(hand); err != nil {
		t.Errorf("a hand-written file was deleted: %v", err)
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"device_id": "DeviceID", "co2_ppm": "CO2Ppm", "target_temp_c": "TargetTempC",
		"url": "URL", "gps_lat": "GPSLat", "type": "Type", "ph": "PH",
	} {
		if got := speclang.GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
	if !strings.Contains(speclang.GoName("a_b"), "AB") {
		t.Error("single letters")
	}
}
