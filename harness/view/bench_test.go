package view_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/view"
)

// The figures of issue 19: on the paper's grid of 8,748 trials with
// transcripts, the Run page of a freshly opened folder under 2 s, a trial
// page under 100 ms, a filtered list under 200 ms, and the viewer under
// 200 MB. ms/page is each benchmark's figure; heap-MB is the live heap
// after opening the folder.

var (
	gridOnce sync.Once
	gridDir  string
	gridN    int
)

// paperGrid writes the 8,748-trial folder once per test binary.
func paperGrid(b *testing.B) string {
	gridOnce.Do(func() {
		gridDir = filepath.Join(fixtureRoot, "paper-grid")
		if err := os.MkdirAll(gridDir, 0o755); err != nil {
			b.Fatal(err)
		}
		gridN = writeSynthetic(b, gridDir, 3, 0)
		st, _ := os.Stat(filepath.Join(gridDir, results.TrialsFile))
		b.Logf("%d trials, trials.jsonl %.1f MB", gridN, float64(st.Size())/1e6)
	})
	return gridDir
}

func serveOnce(b *testing.B, h http.Handler, path string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
}

func reportMS(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
}

// BenchmarkRunPageColdOpen opens the folder (indexing all of trials.jsonl)
// and renders the Run page, as `granite view` does on its first page.
func BenchmarkRunPageColdOpen(b *testing.B) {
	dir := paperGrid(b)
	var heap float64
	for b.Loop() {
		v, err := view.New([]string{dir}, view.Options{})
		if err != nil {
			b.Fatal(err)
		}
		serveOnce(b, v, "/")
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, float64(ms.HeapInuse)/(1<<20))
		runtime.KeepAlive(v)
		b.StartTimer()
	}
	reportMS(b)
	b.ReportMetric(heap, "heap-MB")
	b.ReportMetric(float64(gridN), "trials")
}

// BenchmarkTrialPage renders trial pages of an open folder, each read from
// disk at its offset.
func BenchmarkTrialPage(b *testing.B) {
	dir := paperGrid(b)
	v, err := view.New([]string{dir}, view.Options{})
	if err != nil {
		b.Fatal(err)
	}
	recs := 0
	i := 0
	for b.Loop() {
		id := results.TrialID(fmt.Sprintf("model-%d:%db", i%9, 1+i%9), fmt.Sprintf("domain%d-%03d", i%9, 1+i%9), "L1", 1+i%3)
		serveOnce(b, v, "/trial?run=0&id="+url.QueryEscape(id))
		i++
		recs++
	}
	reportMS(b)
}

// BenchmarkFilteredList renders a filtered, sorted page of the list.
func BenchmarkFilteredList(b *testing.B) {
	dir := paperGrid(b)
	v, err := view.New([]string{dir}, view.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		serveOnce(b, v, "/trials?level=L1&outcome=fail&sort=wall_s&order=desc&page=2")
	}
	reportMS(b)
}

// BenchmarkScenarioAcrossLevels renders one scenario across the levels
// (four records read from disk).
func BenchmarkScenarioAcrossLevels(b *testing.B) {
	dir := paperGrid(b)
	v, err := view.New([]string{dir}, view.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		serveOnce(b, v, "/scenario?run=0&model="+url.QueryEscape("model-3:4b")+"&scenario=domain5-002&rep=2")
	}
	reportMS(b)
}
