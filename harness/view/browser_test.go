package view_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpgranite/granite/harness/view"
)

// chromium finds the browser the browser tests drive: $GRANITE_CHROMIUM,
// else Debian's chromium (apt-get install chromium; .ci/run installs it).
// Without one the tests fail, except outside CI when GRANITE_NO_BROWSER=1
// says to skip them: they never skip silently, and never in CI.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GRANITE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("GRANITE_NO_BROWSER") == "1" && os.Getenv("CI") == "" {
		t.Skip("no chromium, and GRANITE_NO_BROWSER=1: the browser tests are skipped")
	}
	t.Fatal("no chromium to drive: apt-get install chromium, or set GRANITE_CHROMIUM to a Chrome binary " +
		"(outside CI, GRANITE_NO_BROWSER=1 skips these tests)")
	return ""
}

// browser starts a headless chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1400, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// shot saves a screenshot of the page under the test's output folder
// (go test -artifacts keeps it).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG, not JPEG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(step, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until a JavaScript condition holds on the page, across
// the navigation a click starts (a poll may see the old page go).
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", cond, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserFlow drives the viewer as a researcher would: the Run page of
// a run still being written, its live update as trials are appended, the
// list filtered to failed L1 trials, one of them with its explained
// verdict, and its scenario across the levels.
func TestBrowserFlow(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	dir := t.TempDir()
	const first = 10
	rest := copyPrefix(t, f.bench, dir, first)
	v, err := view.New([]string{dir}, view.Options{Poll: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := newLoopbackServer(t, v)
	ctx := browser(t)

	do(t, ctx, "open the Run page", chromedp.Navigate(srv+"/"), chromedp.WaitVisible(chromedp.CSS("#run-0")))
	if got := text(t, ctx, ".done"); got != fmt.Sprint(first) {
		t.Fatalf("Run page shows %s trials done, want %d", got, first)
	}
	shot(t, ctx, "run-partial")

	// The run writes the rest: the open page follows without a reload.
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	for _, line := range rest {
		appendTo(t, dir, line)
	}
	do(t, ctx, "wait for the live update", chromedp.Poll[chromedp.Void](
		fmt.Sprintf(`document.querySelector(".done") && document.querySelector(".done").textContent === "%d"`, len(recs)),
		chromedp.WithPollingTimeout(15*time.Second)))
	if reloaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded !== true`)); err != nil || reloaded {
		t.Fatalf("the page was reloaded to show new trials (%v)", err)
	}
	if !strings.Contains(text(t, ctx, "table.grid"), "L1") {
		t.Error("the heat map has no L1 column after the update")
	}
	shot(t, ctx, "run")

	// Filter to the failed L1 trials with the form.
	do(t, ctx, "filter to failed L1 trials", chromedp.Navigate(srv+"/trials"), chromedp.WaitVisible(chromedp.CSS("#trials")),
		chromedp.SetValue(chromedp.CSS(`select[name="level"]`), "L1"), chromedp.SetValue(chromedp.CSS(`select[name="outcome"]`), "fail"),
		chromedp.Click(chromedp.CSS("#apply")))
	waitFor(t, ctx, `location.search.includes("level=L1") && location.search.includes("outcome=fail") && document.readyState === "complete" && !!document.querySelector("#trials")`)
	want := 0
	for _, r := range recs {
		if r.Level == "L1" && !passed(&r) {
			want++
		}
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#trials a.trial")].map(a => a.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != want || want == 0 {
		t.Fatalf("filtered list shows %d trials, want the %d failed L1 ones", len(links), want)
	}
	for _, id := range links {
		if !strings.Contains(id, "/L1/") {
			t.Errorf("%s listed among L1 trials", id)
		}
	}
	shot(t, ctx, "trials-failed-L1")

	// Open the first failed L1 trial of the scripted model.
	target := failedL1(t, recs)
	do(t, ctx, "open a failed trial", chromedp.Click(chromedp.JSPath(fmt.Sprintf(
		`[...document.querySelectorAll("#trials a.trial")].filter(a => a.textContent === %q)`, target.TrialID))))
	waitFor(t, ctx, `document.readyState === "complete" && !!document.querySelector("#verdict")`)
	if got := text(t, ctx, "#tc"); got != "0" {
		t.Errorf("trial page TC %q, want 0", got)
	}
	verdict := text(t, ctx, "#verdict")
	for _, why := range target.Metrics.Why {
		if !strings.Contains(verdict, why) {
			t.Errorf("the verdict does not say %q", why)
		}
	}
	if diff := text(t, ctx, "#store-diff"); !strings.Contains(diff, target.Metrics.Explain.StoreDiff.Rows[0].ID) {
		t.Errorf("the store diff %q lacks row %s", diff, target.Metrics.Explain.StoreDiff.Rows[0].ID)
	}
	if !strings.Contains(text(t, ctx, "#alignment"), "✗") {
		t.Error("the alignment marks no argument wrong")
	}
	shot(t, ctx, "trial")

	do(t, ctx, "open the scenario across levels", chromedp.Click(chromedp.CSS("#across")))
	waitFor(t, ctx, `document.readyState === "complete" && !!document.querySelector("#across-levels")`)
	cols, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("th.level")].map(th => th.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, " ") != "L4 L3 L2 L1" {
		t.Errorf("across-levels columns %v", cols)
	}
	across := text(t, ctx, "#across-levels")
	for _, r := range recs {
		if r.Model == target.Model && r.Scenario == target.Scenario {
			for _, g := range r.Metrics.Explain.Alignment {
				if !strings.Contains(across, g.Tool) {
					t.Errorf("%s: gold call of %s not shown", r.Level, g.Tool)
				}
			}
		}
	}
	shot(t, ctx, "across-levels")

	// The artifact trials' page too.
	av, err := view.New([]string{f.artifacts}, view.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asrv := newLoopbackServer(t, av)
	arecs := readRecords(t, f.artifacts)
	do(t, ctx, "open an artifact trial", chromedp.Navigate(asrv+"/trial?run=0&id="+urlQuery(arecs[0].TrialID)), chromedp.WaitVisible(chromedp.CSS("#assertions")))
	if got := text(t, ctx, "#assertions"); !strings.Contains(got, arecs[0].Assertions[0].Kind) {
		t.Errorf("assertions table %q", got)
	}
	shot(t, ctx, "artifact-trial")
}

// newLoopbackServer serves h on 127.0.0.1 for the browser.
func newLoopbackServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func urlQuery(s string) string { return url.QueryEscape(s) }

// overflowJS lists what sticks out at the current width: the page wider
// than the window, the across-levels table past the right edge, and any
// cell whose content is wider than the cell or reaches over its borders
// into the neighbouring column.
const overflowJS = `(() => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) out.push("page " + de.scrollWidth + " px wide in a " + de.clientWidth + " px window");
  const table = document.querySelector("#across-levels");
  const tr = table.getBoundingClientRect();
  if (tr.right > de.clientWidth + 0.5) out.push("table ends at " + tr.right + " px, past " + de.clientWidth);
  table.querySelectorAll("td, th").forEach((cell, i) => {
    const c = cell.getBoundingClientRect();
    const where = "cell " + i + " (" + cell.textContent.trim().slice(0, 40) + ")";
    if (cell.scrollWidth > cell.clientWidth + 1) out.push(where + ": content " + cell.scrollWidth + " px in " + cell.clientWidth);
    if (c.right > de.clientWidth + 0.5) out.push(where + ": ends at " + c.right + " px");
    cell.querySelectorAll("*").forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && (r.right > c.right + 0.5 || r.left < c.left - 0.5)) out.push(where + ": <" + el.tagName.toLowerCase() + "> spans " + r.left + "-" + r.right + " px, the cell " + c.left + "-" + c.right);
    });
  });
  return out;
})()`

// TestAcrossLevelsFits: at the widths a researcher's laptop has, the
// across-levels page keeps every column on screen and every call's
// arguments inside their own cell.
func TestAcrossLevelsFits(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	srv := newLoopbackServer(t, mustView(t, f.bench))
	ctx := browser(t)
	// The scenario whose calls carry the longest arguments is the
	// hardest to fit.
	long, size := recs[0], 0
	for _, r := range recs {
		n := 0
		for _, c := range r.Calls {
			n = max(n, len(c.Arguments))
		}
		if r.Model == "fake:sloppy" && n > size {
			long, size = r, n
		}
	}
	for _, width := range []int64{1280, 1400} {
		do(t, ctx, "open the scenario across levels", chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(srv+"/scenario?run=0&model="+urlQuery(long.Model)+"&scenario="+urlQuery(long.Scenario)),
			chromedp.WaitVisible(chromedp.CSS("#across-levels")))
		over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowJS))
		if err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, fmt.Sprintf("across-levels-%d", width))
		for _, o := range over {
			t.Errorf("at %d px: %s", width, o)
		}
	}
}

func mustView(t *testing.T, dirs ...string) *view.Viewer {
	t.Helper()
	v, err := view.New(dirs, view.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
