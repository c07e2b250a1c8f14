package view_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness"
	"github.com/mcpgranite/granite/harness/agent"
	"github.com/mcpgranite/granite/harness/report"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/harness/view"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/specs"
)

func serveView(t testing.TB, o view.Options, dirs ...string) *httptest.Server {
	t.Helper()
	v, err := view.New(dirs, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func mustGet(t testing.TB, srv *httptest.Server, path string) string {
	t.Helper()
	code, body := get(t, srv, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

func readRecords(t testing.TB, dir string) []results.Record {
	t.Helper()
	recs, _, err := results.ReadJournal(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

var listedTrial = regexp.MustCompile(`<a class="trial" href="[^"]*">([^<]*)</a>`)

// listed returns the trial ids a trials page lists, in order.
func listed(body string) []string {
	var out []string
	for _, m := range listedTrial.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func passed(r *results.Record) bool { return r.Metrics != nil && r.Metrics.TC == 1 }

// TestRunPage: the heat map and the tables say, cell by cell, what the
// records say, and link into the filtered lists.
func TestRunPage(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	srv := serveView(t, view.Options{}, f.bench)
	body := mustGet(t, srv, "/")
	man, err := results.ReadManifest(f.bench)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{man.Experiment, man.ConfigHash, fmt.Sprintf("<b class=\"done\">%d</b> of %d trials", len(recs), man.Trials), "data-live"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	type key struct{ model, level string }
	n, pass := map[key]int{}, map[key]int{}
	failedL1 := 0
	for _, r := range recs {
		k := key{r.Model, string(r.Level)}
		n[k]++
		if passed(&r) {
			pass[k]++
		} else if r.Level == "L1" {
			failedL1++
		}
	}
	if failedL1 == 0 {
		t.Fatal("the fixture has no failed L1 trial: the scripted model plays the gold")
	}
	for k := range n {
		cell := fmt.Sprintf(`href="/trials?level=%s&amp;model=%s&amp;run=0" title="%d of %d trials completed"`, k.level, url.QueryEscape(k.model), pass[k], n[k])
		if !strings.Contains(body, cell) {
			t.Errorf("heat map lacks the cell %s", cell)
		}
	}
	errs := map[string]int{}
	for _, r := range recs {
		errs[cmpOr(string(r.ErrorClass), "none")]++
	}
	for class, c := range errs {
		if !strings.Contains(body, fmt.Sprintf(`<a href="/trials?error_class=%s&amp;run=0">%s</a></th><td>%d</td>`, class, class, c)) {
			t.Errorf("error class %s (%d trials) missing", class, c)
		}
	}
}

func cmpOr(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}

// TestTrialFilters: every filter of the trials page lists exactly the
// records it names, in the journal's order.
func TestTrialFilters(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	srv := serveView(t, view.Options{}, f.bench)
	some := func(col func(r *results.Record) string) string {
		for _, r := range recs {
			if v := col(&r); v != "" && v != col(&recs[0]) {
				return v
			}
		}
		return col(&recs[0])
	}
	var withErr string
	for _, r := range recs {
		if r.ErrorClass != "" {
			withErr = string(r.ErrorClass)
		}
	}
	if withErr == "" {
		t.Fatal("the fixture has no trial with an error class")
	}
	cases := []struct {
		query string
		keep  func(r *results.Record) bool
	}{
		{"model=fake:sloppy", func(r *results.Record) bool { return r.Model == "fake:sloppy" }},
		{"domain=" + f.domain, func(r *results.Record) bool { return r.Domain == f.domain }},
		{"level=L1", func(r *results.Record) bool { return r.Level == "L1" }},
		{"scenario=" + some(func(r *results.Record) string { return r.Scenario }), func(r *results.Record) bool {
			return r.Scenario == some(func(r *results.Record) string { return r.Scenario })
		}},
		{"difficulty=hard", func(r *results.Record) bool { return r.Difficulty == "hard" }},
		{"outcome=pass", passed},
		{"outcome=fail", func(r *results.Record) bool { return !passed(r) }},
		{"error_class=" + withErr, func(r *results.Record) bool { return string(r.ErrorClass) == withErr }},
		{"error_class=none", func(r *results.Record) bool { return r.ErrorClass == "" }},
		{"stop_reason=answer", func(r *results.Record) bool { return r.StopReason == results.StopAnswer }},
		{"level=L1&outcome=fail&model=fake:sloppy", func(r *results.Record) bool { return r.Level == "L1" && !passed(r) && r.Model == "fake:sloppy" }},
		{"model=nobody", func(*results.Record) bool { return false }},
	}
	for _, c := range cases {
		var want []string
		for _, r := range recs {
			if c.keep(&r) {
				want = append(want, r.TrialID)
			}
		}
		q, _ := url.ParseQuery(c.query)
		body := mustGet(t, srv, "/trials?"+q.Encode())
		if got := listed(body); !slices.Equal(got, want) {
			t.Errorf("%s: listed %d trials %v, want %d %v", c.query, len(got), got, len(want), want)
		}
		if !strings.Contains(body, fmt.Sprintf(`<small id="total">%d match</small>`, len(want))) {
			t.Errorf("%s: the count is not %d", c.query, len(want))
		}
	}
}

// TestSortAndPages: sorting by wall time, energy and calls, both ways, and
// paging through a folder larger than a page.
func TestSortAndPages(t *testing.T) {
	dir := t.TempDir()
	writeSynthetic(t, dir, 3, 250) // 250 trials: 3 pages
	recs := readRecords(t, dir)
	srv := serveView(t, view.Options{}, dir)
	for _, c := range []struct {
		sort string
		key  func(r *results.Record) float64
	}{
		{"wall_s", func(r *results.Record) float64 { return r.Metrics.WallS }},
		{"energy_j", func(r *results.Record) float64 { return *r.Metrics.EnergyJ }},
		{"tool_calls", func(r *results.Record) float64 { return float64(r.Metrics.ToolCalls) }},
	} {
		for _, desc := range []bool{false, true} {
			sorted := slices.Clone(recs)
			sort.SliceStable(sorted, func(i, j int) bool {
				if desc {
					return c.key(&sorted[i]) > c.key(&sorted[j])
				}
				return c.key(&sorted[i]) < c.key(&sorted[j])
			})
			var want, got []string
			for _, r := range sorted {
				want = append(want, r.TrialID)
			}
			order := ""
			if desc {
				order = "&order=desc"
			}
			for page := 1; ; page++ {
				body := mustGet(t, srv, fmt.Sprintf("/trials?sort=%s%s&page=%d", c.sort, order, page))
				got = append(got, listed(body)...)
				if !strings.Contains(body, `id="next"`) {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("sort %s desc=%v: pages list %d trials, not the %d in order", c.sort, desc, len(got), len(want))
			}
		}
	}
}

// failedL1 returns a failed L1 trial of the scripted model whose record
// explains a wrong state.
func failedL1(t testing.TB, recs []results.Record) results.Record {
	t.Helper()
	for _, r := range recs {
		if r.Model == "fake:sloppy" && r.Level == "L1" && !passed(&r) && r.Metrics.Explain != nil && r.Metrics.Explain.StoreDiff != nil && len(r.Metrics.Explain.FailedConditions) > 0 {
			return r
		}
	}
	t.Fatal("no failed L1 trial with a wrong store in the fixture")
	return results.Record{}
}

// TestTrialPage: the transcript, the metrics and the explained verdict of
// a failed trial, read from its record.
func TestTrialPage(t *testing.T) {
	f := testFixtures(t)
	rec := failedL1(t, readRecords(t, f.bench))
	srv := serveView(t, view.Options{}, f.bench)
	body := html.UnescapeString(mustGet(t, srv, "/trial?run=0&id="+url.QueryEscape(rec.TrialID)))
	e := rec.Metrics.Explain
	want := []string{rec.TrialID, `id="tc">0<`, "this scenario across levels", rec.FinalAnswer}
	want = append(want, rec.Metrics.Why...)
	want = append(want, e.FailedConditions...)
	for _, m := range rec.Messages {
		if m.Role != "tool" && m.Content != "" {
			want = append(want, m.Content)
		}
	}
	for _, row := range e.StoreDiff.Rows {
		want = append(want, "<td>"+row.Collection+"</td><td>"+row.ID+"</td><td>"+row.Change+"</td>")
	}
	for _, g := range e.Alignment {
		want = append(want, fmt.Sprintf("gold %d: %s", g.Gold+1, g.Tool))
		for _, a := range g.Args {
			if a.Given && !a.Right && !a.Optional {
				b, _ := json.Marshal(a.Got)
				want = append(want, fmt.Sprintf("<td><code>%s</code></td><td>✗</td>", b))
			}
		}
	}
	for _, c := range rec.Calls {
		want = append(want, "<b>#")
		want = append(want, c.Tool)
	}
	// The reference's metrics, beside granite's.
	if p := rec.Metrics.Paper; p == nil {
		t.Error("the fixture's record has no metrics.paper")
	} else {
		want = append(want, `id="paper-metrics"`, fmt.Sprintf("<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", p.TaskCompletion, p.ToolPrecision, p.ToolRecall, p.ToolF1, p.ArgAcc))
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("trial page lacks %q", w)
		}
	}
	if code, _ := get(t, srv, "/trial?run=0&id=nobody/x/L1/r1"); code != http.StatusNotFound {
		t.Errorf("an unknown trial: %d, want 404", code)
	}
	if code, _ := get(t, srv, "/trial?run=7&id="+url.QueryEscape(rec.TrialID)); code != http.StatusNotFound {
		t.Errorf("an unknown folder: %d, want 404", code)
	}
}

// TestScenarioAcrossLevels: four columns, L4 to L1, each with its trial
// and its calls against its level's gold.
func TestScenarioAcrossLevels(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	rec := failedL1(t, recs)
	srv := serveView(t, view.Options{}, f.bench)
	body := mustGet(t, srv, "/scenario?run=0&model="+url.QueryEscape(rec.Model)+"&scenario="+rec.Scenario+"&rep=1")
	if got := regexp.MustCompile(`<th class="level">(L\d)</th>`).FindAllStringSubmatch(body, -1); len(got) != 4 || got[0][1] != "L4" || got[3][1] != "L1" {
		t.Fatalf("level columns %v, want L4 L3 L2 L1", got)
	}
	pos := -1
	for _, r := range recs {
		if r.Model != rec.Model || r.Scenario != rec.Scenario {
			continue
		}
		link := html.EscapeString("/trial?id=" + url.QueryEscape(r.TrialID) + "&run=0")
		i := strings.Index(body, link)
		if i < 0 {
			t.Errorf("no link to %s", r.TrialID)
		}
		if i < pos {
			t.Errorf("%s is not in the column after the level before it", r.TrialID)
		}
		pos = i
		for _, g := range r.Metrics.Explain.Alignment {
			if !strings.Contains(body, "<b>"+g.Tool+"</b>") {
				t.Errorf("%s: gold call of %s missing", r.TrialID, g.Tool)
			}
		}
	}
	if !strings.Contains(body, `<span class="fail"`) {
		t.Error("the failed L1 trial is not marked")
	}
	if code, _ := get(t, srv, "/scenario?run=0&model=nobody&scenario=x"); code != http.StatusNotFound {
		t.Errorf("an unknown scenario: %d, want 404", code)
	}
}

// TestEmptyFolder: a folder a run has not written to yet.
func TestEmptyFolder(t *testing.T) {
	srv := serveView(t, view.Options{}, t.TempDir())
	body := mustGet(t, srv, "/")
	for _, want := range []string{"no trials yet", "no run.json yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page of an empty folder lacks %q", want)
		}
	}
	if body := mustGet(t, srv, "/trials"); len(listed(body)) != 0 || !strings.Contains(body, `<small id="total">0 match</small>`) {
		t.Error("the trials of an empty folder")
	}
	if _, err := view.New([]string{filepath.Join(t.TempDir(), "nope")}, view.Options{}); err == nil {
		t.Error("a folder that does not exist was opened")
	}
}

// copyPrefix writes run.json and the first n lines of src's trials.jsonl
// into dst, and returns the remaining lines.
func copyPrefix(t *testing.T, src, dst string, n int) [][]byte {
	t.Helper()
	man, err := os.ReadFile(filepath.Join(src, results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, results.ManifestFile), man, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if err := os.WriteFile(filepath.Join(dst, results.TrialsFile), bytes.Join(lines[:n], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return lines[n:]
}

func appendTo(t *testing.T, dir string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, results.TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func apiState(t *testing.T, srv *httptest.Server) (string, int) {
	t.Helper()
	var s struct {
		State  string `json:"state"`
		Trials int    `json:"trials"`
	}
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/api/state")), &s); err != nil {
		t.Fatal(err)
	}
	return s.State, s.Trials
}

// TestFolderStillBeingWritten: a record half written is left out until
// its line is whole, and trials appended later appear.
func TestFolderStillBeingWritten(t *testing.T) {
	f := testFixtures(t)
	dir := t.TempDir()
	rest := copyPrefix(t, f.bench, dir, 5)
	srv := serveView(t, view.Options{}, dir)
	half := len(rest[0]) / 2
	appendTo(t, dir, rest[0][:half])
	state, n := apiState(t, srv)
	body := mustGet(t, srv, "/")
	if n != 5 || !strings.Contains(body, `<b class="done">5</b>`) || !strings.Contains(body, "still being written") {
		t.Fatalf("with a half-written record: %d trials; page %s", n, body)
	}
	appendTo(t, dir, rest[0][half:])
	appendTo(t, dir, rest[1])
	state2, n2 := apiState(t, srv)
	if n2 != 7 || state2 == state {
		t.Fatalf("after the record was finished and another appended: %d trials, state %q (was %q)", n2, state2, state)
	}
	if got := listed(mustGet(t, srv, "/trials")); len(got) != 7 {
		t.Errorf("trials listed: %d, want 7", len(got))
	}
	if strings.Contains(mustGet(t, srv, "/"), "still being written") {
		t.Error("the note on a record being written stays after it was finished")
	}
}

// TestDamagedLastLine: a whole last line that is not a record (a killed
// write) is left out and said, and the folder still shows.
func TestDamagedLastLine(t *testing.T) {
	f := testFixtures(t)
	dir := t.TempDir()
	rest := copyPrefix(t, f.bench, dir, 4)
	appendTo(t, dir, append(bytes.Clone(rest[0][:len(rest[0])/3]), '\n'))
	srv := serveView(t, view.Options{}, dir)
	body := mustGet(t, srv, "/")
	if !strings.Contains(body, "line 5 of trials.jsonl is not a trial record") || !strings.Contains(body, `<b class="done">4</b>`) {
		t.Errorf("run page with a damaged last line: %s", body)
	}
	if got := listed(mustGet(t, srv, "/trials")); len(got) != 4 {
		t.Errorf("trials listed: %d, want 4", len(got))
	}
	// A resume drops the damaged line and goes on: the viewer follows.
	if err := os.Truncate(filepath.Join(dir, results.TrialsFile), int64(len(bytes.Join(readLines(t, f.bench)[:4], nil)))); err != nil {
		t.Fatal(err)
	}
	appendTo(t, dir, rest[0])
	if _, n := apiState(t, srv); n != 5 {
		t.Errorf("after a resume replaced the damaged line: %d trials, want 5", n)
	}
}

func readLines(t *testing.T, dir string) [][]byte {
	data, err := os.ReadFile(filepath.Join(dir, results.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))
}

// TestArtifactFolder: an artifact run's trials show their assertions and
// verdicts.
func TestArtifactFolder(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.artifacts)
	srv := serveView(t, view.Options{}, f.artifacts)
	mustGet(t, srv, "/")
	if got := listed(mustGet(t, srv, "/trials")); len(got) != len(recs) {
		t.Fatalf("listed %d artifact trials, want %d", len(got), len(recs))
	}
	shown := 0
	for _, r := range recs {
		if len(r.Assertions) == 0 {
			continue
		}
		body := html.UnescapeString(mustGet(t, srv, "/trial?run=0&id="+url.QueryEscape(r.TrialID)))
		if !strings.Contains(body, `id="assertions"`) || strings.Contains(body, "this scenario across levels") {
			t.Fatalf("%s: no assertions table, or a link across levels", r.TrialID)
		}
		for _, a := range r.Assertions {
			verdict := "passed"
			if !a.Passed {
				verdict = "failed"
			}
			row := fmt.Sprintf("<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", a.Kind, a.Tool, a.Severity, verdict, a.Why)
			if !strings.Contains(body, row) {
				t.Errorf("%s: assertion row %s missing", r.TrialID, row)
			}
		}
		shown++
	}
	if shown == 0 {
		t.Fatal("no artifact trial has assertions")
	}
}

// TestSeveralFolders: two folders at once, each its own section and run
// number.
func TestSeveralFolders(t *testing.T) {
	f := testFixtures(t)
	srv := serveView(t, view.Options{}, f.bench, f.artifacts)
	body := mustGet(t, srv, "/")
	if !strings.Contains(body, `id="run-0"`) || !strings.Contains(body, `id="run-1"`) || !strings.Contains(body, "view-artifacts") {
		t.Error("run page does not show both folders")
	}
	all := listed(mustGet(t, srv, "/trials"))
	one := listed(mustGet(t, srv, "/trials?run=1"))
	if want := len(readRecords(t, f.artifacts)); len(one) != want || len(all) != want+len(readRecords(t, f.bench)) {
		t.Errorf("listed %d of folder 1 and %d in all", len(one), len(all))
	}
}

// TestSafetyDefaults: the Host, Origin and token checks of granite serve,
// and the token given once in the address.
func TestSafetyDefaults(t *testing.T) {
	dir := t.TempDir()
	srv := serveView(t, view.Options{Token: "t0k"}, dir)
	if code, _ := get(t, srv, "/"); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	jar := &cookieJar{}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/trials?token=t0k&level=L1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Query().Get("token") != "" || resp.Request.URL.Query().Get("level") != "L1" {
		t.Errorf("the token in the address: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	for _, h := range []struct {
		name, value string
		want        int
	}{{"Host", "attacker.example", http.StatusForbidden}, {"Origin", "https://attacker.example", http.StatusForbidden}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/state", nil)
		if h.name == "Host" {
			req.Host = h.value
		} else {
			req.Header.Set(h.name, h.value)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != h.want {
			t.Errorf("%s %s: %d, want %d", h.name, h.value, resp.StatusCode, h.want)
		}
	}
}

// cookieJar keeps the cookies of one test server.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) { j.cookies = append(j.cookies, cs...) }
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie          { return j.cookies }

var verdictLine = regexp.MustCompile(`(?s)<p class="verdict[^"]*">(.*?)</p>`)

// TestArtifactVerdict: an artifact trial's verdict says what judged it,
// its assertions by severity, and none of the state, facts and changes
// flags a benchmark trial is judged by, which an artifact has none of.
func TestArtifactVerdict(t *testing.T) {
	f := testFixtures(t)
	srv := serveView(t, view.Options{}, f.artifacts, f.bench)
	verdict := func(run int, id string) string {
		t.Helper()
		m := verdictLine.FindStringSubmatch(html.UnescapeString(mustGet(t, srv, fmt.Sprintf("/trial?run=%d&id=%s", run, url.QueryEscape(id)))))
		if m == nil {
			t.Fatalf("%s: no verdict line", id)
		}
		return m[1]
	}
	judged := 0
	for _, r := range readRecords(t, f.artifacts) {
		line := verdict(0, r.TrialID)
		for _, flag := range []string{"tc_strict", "state ", "facts ", "changes ", "store equal"} {
			if strings.Contains(line, flag) {
				t.Errorf("%s: the verdict shows %q, which does not apply to an artifact: %s", r.TrialID, flag, line)
			}
		}
		n, ok := map[string]int{}, map[string]int{}
		for _, a := range r.Assertions {
			n[a.Severity]++
			if a.Passed {
				ok[a.Severity]++
			}
		}
		for sev := range n {
			if want := fmt.Sprintf("%ss <b>%d of %d</b> passed", sev, ok[sev], n[sev]); !strings.Contains(line, want) {
				t.Errorf("%s: the verdict lacks %q: %s", r.TrialID, want, line)
			}
		}
		if len(n) > 0 {
			judged++
		}
		if !strings.Contains(line, "judged by its assertions") {
			t.Errorf("%s: the verdict does not say what judged it: %s", r.TrialID, line)
		}
	}
	if judged == 0 {
		t.Fatal("no artifact trial has assertions")
	}
	bench := readRecords(t, f.bench)[0]
	if line := verdict(1, bench.TrialID); !strings.Contains(line, "tc_strict") || !strings.Contains(line, "state ") || strings.Contains(line, "assertions") {
		t.Errorf("a benchmark trial's verdict: %s", line)
	}
}

var (
	gridRowRE  = regexp.MustCompile(`<tr>(?:<th rowspan="(\d+)" class="model">([^<]*)</th>)?<th><a href="[^"]*">([^<]*)</a></th>(.*?)</tr>`)
	gridCellRE = regexp.MustCompile(`title="(\d+) of (\d+) trials completed">\d+%</a> <small class="ci" title="95% bootstrap interval of TC">([^<]*)</small>`)
)

// gridLine is one row of a Run page table: its model (per-model tables),
// its name, and each cell's passed, trials and interval, the last the
// all-levels one.
type gridLine struct {
	model, name string
	cells       [][3]string
}

// gridOf reads the Run page table whose rows are by the column by.
func gridOf(t *testing.T, body, by string) []gridLine {
	t.Helper()
	start := strings.Index(body, `<table class="grid" data-by="`+by+`">`)
	if start < 0 {
		t.Fatalf("no table by %s", by)
	}
	table := body[start : start+strings.Index(body[start:], "</table>")]
	var out []gridLine
	model, left := "", 0
	for _, m := range gridRowRE.FindAllStringSubmatch(table, -1) {
		if m[1] != "" {
			model = html.UnescapeString(m[2])
			fmt.Sscan(m[1], &left)
		}
		if left--; left < 0 {
			model = ""
		}
		l := gridLine{model: model, name: html.UnescapeString(m[3])}
		for _, c := range gridCellRE.FindAllStringSubmatch(m[4], -1) {
			l.cells = append(l.cells, [3]string{c[1], c[2], c[3]})
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		t.Fatalf("table by %s has no rows", by)
	}
	return out
}

// TestRunTablesPerModel: the by-domain and by-difficulty tables have a
// row per model and value, so that an agent that always completes and one
// that never does are not averaged into a 50% that is neither; each cell
// carries its 95% interval, and difficulties come easiest first.
func TestRunTablesPerModel(t *testing.T) {
	f := testFixtures(t)
	for _, dir := range []string{f.artifacts, f.bench} {
		recs := readRecords(t, dir)
		srv := serveView(t, view.Options{}, dir)
		body := mustGet(t, srv, "/")
		for _, c := range []struct {
			by  string
			col func(r *results.Record) string
		}{{"domain", func(r *results.Record) string { return r.Domain }}, {"difficulty", func(r *results.Record) string { return r.Difficulty }}} {
			type key struct{ model, name string }
			n, pass := map[key]int{}, map[key]int{}
			for _, r := range recs {
				k := key{r.Model, c.col(&r)}
				n[k]++
				if passed(&r) {
					pass[k]++
				}
			}
			rows := gridOf(t, body, c.by)
			if len(rows) != len(n) {
				t.Errorf("%s: table by %s has %d rows, want one per model and %s: %d", dir, c.by, len(rows), c.by, len(n))
			}
			rank := map[string]int{"easy": 1, "medium": 2, "hard": 3}
			for i, row := range rows {
				k := key{row.model, row.name}
				if n[k] == 0 {
					t.Errorf("%s: row %s · %s holds no trial", c.by, row.model, row.name)
					continue
				}
				all := row.cells[len(row.cells)-1]
				if want := [2]string{fmt.Sprint(pass[k]), fmt.Sprint(n[k])}; all[0] != want[0] || all[1] != want[1] {
					t.Errorf("%s: %s · %s shows %s of %s completed, want %s of %s", c.by, row.model, row.name, all[0], all[1], want[0], want[1])
				}
				if !regexp.MustCompile(`^\d+–\d+%$`).MatchString(all[2]) {
					t.Errorf("%s: %s · %s has no interval: %q", c.by, row.model, row.name, all[2])
				}
				if c.by == "difficulty" && i > 0 && rows[i-1].model == row.model && rank[rows[i-1].name] > rank[row.name] {
					t.Errorf("difficulty %s listed after %s", row.name, rows[i-1].name)
				}
			}
		}
	}
	// The trials page offers the difficulties in the same order.
	opts := regexp.MustCompile(`<option(?: selected)?>(easy|medium|hard)</option>`).FindAllStringSubmatch(mustGet(t, serveView(t, view.Options{}, f.bench), "/trials"), -1)
	if len(opts) != 3 || opts[0][1] != "easy" || opts[1][1] != "medium" || opts[2][1] != "hard" {
		t.Errorf("the difficulty filter offers %v, want easy, medium, hard", opts)
	}
	// The artifact run mixes the oracle, which completes every task, and
	// the silent agent, which completes few: each has its own row.
	body := mustGet(t, serveView(t, view.Options{}, f.artifacts), "/")
	models := map[string]bool{}
	for _, row := range gridOf(t, body, "domain") {
		all := row.cells[len(row.cells)-1]
		models[row.model] = true
		if row.model == agent.Oracle && all[0] != all[1] || row.model == agent.Silent && all[0] == all[1] {
			t.Errorf("%s on %s: %s of %s completed", row.model, row.name, all[0], all[1])
		}
	}
	if !models[agent.Oracle] || !models[agent.Silent] {
		t.Errorf("the by-domain table's models: %v", models)
	}
}

// TestHeatMapIntervalsAreTheReports: the Run page's model × level cells
// show the intervals of granite report's model_level table, and its
// all-levels cells those of its overall table: one bootstrap, one answer.
func TestHeatMapIntervalsAreTheReports(t *testing.T) {
	f := testFixtures(t)
	res, err := report.Load(f.bench)
	if err != nil {
		t.Fatal(err)
	}
	rep := report.Build(res, 0)
	want := map[string]string{}
	pctCI := func(lo, hi any) string { return fmt.Sprintf("%.0f–%.0f%%", 100*lo.(float64), 100*hi.(float64)) }
	ml, overall := rep.Table("model_level"), rep.Table("overall")
	at := func(t *report.Table, name string) int { return slices.Index(t.Header, name) }
	for _, row := range ml.Rows {
		want[row[0].(string)+"/"+row[1].(string)] = pctCI(row[at(ml, "tc_lo")], row[at(ml, "tc_hi")])
	}
	for _, row := range overall.Rows {
		want[row[0].(string)+"/all"] = pctCI(row[at(overall, "tc_lo")], row[at(overall, "tc_hi")])
	}
	body := mustGet(t, serveView(t, view.Options{}, f.bench), "/")
	levels := regexp.MustCompile(`<th>(L\d)</th>`).FindAllStringSubmatch(body[strings.Index(body, `data-by="model"`):], 4)
	checked := 0
	for _, row := range gridOf(t, body, "model") {
		for i, c := range row.cells {
			lv := "all"
			if i < len(levels) {
				lv = levels[i][1]
			}
			if w := want[row.name+"/"+lv]; c[2] != w {
				t.Errorf("%s at %s: interval %s, the report's %s", row.name, lv, c[2], w)
			}
			checked++
		}
	}
	if checked != len(want) {
		t.Errorf("checked %d cells, the report has %d", checked, len(want))
	}
}

// TestSortByIDAndTC: the list sorts by trial id (by name) and by TC (the
// unscored last), both ways, across pages, ties in the journal's order;
// the column heads link to those orders.
func TestSortByIDAndTC(t *testing.T) {
	dir := t.TempDir()
	writeSynthetic(t, dir, 3, 250)
	recs := readRecords(t, dir)
	srv := serveView(t, view.Options{}, dir)
	for _, c := range []struct {
		sort string
		less func(a, b *results.Record) int
	}{
		{"trial_id", func(a, b *results.Record) int { return strings.Compare(a.TrialID, b.TrialID) }},
		{"tc", func(a, b *results.Record) int { return cmp.Compare(a.Metrics.TC, b.Metrics.TC) }},
	} {
		for _, desc := range []bool{false, true} {
			sorted := slices.Clone(recs)
			slices.SortStableFunc(sorted, func(a, b results.Record) int {
				if desc {
					return c.less(&b, &a)
				}
				return c.less(&a, &b)
			})
			var want, got []string
			for _, r := range sorted {
				want = append(want, r.TrialID)
			}
			q := url.Values{"sort": {c.sort}}
			if desc {
				q.Set("order", "desc")
			}
			for page := 1; ; page++ {
				q.Set("page", fmt.Sprint(page))
				body := mustGet(t, srv, "/trials?"+q.Encode())
				got = append(got, listed(body)...)
				if !strings.Contains(body, `id="next"`) {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("sort %s desc=%v: pages list %d trials, not the %d in order", c.sort, desc, len(got), len(want))
			}
		}
	}
	body := html.UnescapeString(mustGet(t, srv, "/trials"))
	for id, key := range map[string]string{"sort-id": "trial_id", "sort-tc": "tc"} {
		if !strings.Contains(body, `href="/trials?sort=`+key+`" id="`+id+`"`) {
			t.Errorf("no column head %s sorting by %s", id, key)
		}
	}
	if body := html.UnescapeString(mustGet(t, srv, "/trials?sort=tc")); !strings.Contains(body, `href="/trials?order=desc&sort=tc" id="sort-tc"`) {
		t.Error("the TC head of a list sorted by TC does not reverse it")
	}
}

// TestScenarioAcrossShards: a run's shards given as several --results
// fill one across-levels page, each level's trial linked in the folder
// that holds it; a folder of another run is left out.
func TestScenarioAcrossShards(t *testing.T) {
	f := testFixtures(t)
	recs := readRecords(t, f.bench)
	man, err := results.ReadManifest(f.bench)
	if err != nil {
		t.Fatal(err)
	}
	shards := []string{t.TempDir(), t.TempDir()}
	lines := readLines(t, f.bench)
	for i, dir := range shards {
		m := *man
		m.Shard = fmt.Sprintf("%d/2", i)
		if err := results.WriteManifest(dir, &m); err != nil {
			t.Fatal(err)
		}
		var part []byte
		for k, r := range recs {
			if r.Index%2 == i {
				part = append(part, lines[k]...)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, results.TrialsFile), part, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	target := failedL1(t, recs)
	home := map[string]int{} // level -> the shard holding the target's trial
	for _, r := range recs {
		if r.Model == target.Model && r.Scenario == target.Scenario {
			home[string(r.Level)] = r.Index % 2
		}
	}
	if !slices.Contains(slices.Collect(maps.Values(home)), 0) || !slices.Contains(slices.Collect(maps.Values(home)), 1) {
		t.Fatalf("the scenario's levels are all in one shard (%v): the test proves nothing", home)
	}
	srv := serveView(t, view.Options{}, shards[0], f.artifacts, shards[1])
	body := mustGet(t, srv, "/scenario?run=0&model="+url.QueryEscape(target.Model)+"&scenario="+url.QueryEscape(target.Scenario))
	for _, r := range recs {
		if r.Model != target.Model || r.Scenario != target.Scenario {
			continue
		}
		run := map[int]int{0: 0, 1: 2}[home[string(r.Level)]] // the artifacts folder is run 1
		if link := html.EscapeString("/trial?id=" + url.QueryEscape(r.TrialID) + "&run=" + fmt.Sprint(run)); !strings.Contains(body, link) {
			t.Errorf("%s: no link to it in folder %d", r.TrialID, run)
		}
	}
	if strings.Contains(body, "<i>no trial</i>") {
		t.Error("a level shows no trial though a shard holds it")
	}
	if want := "from the shards " + shards[0] + ", " + shards[1]; !strings.Contains(body, want) || strings.Contains(body, f.artifacts) {
		t.Errorf("the page does not say it combines the shards, or names another run's folder: %s", want)
	}
	// One shard alone shows its own levels and no others.
	alone := mustGet(t, serveView(t, view.Options{}, shards[0]), "/scenario?run=0&model="+url.QueryEscape(target.Model)+"&scenario="+url.QueryEscape(target.Scenario))
	if !strings.Contains(alone, "<i>no trial</i>") {
		t.Error("one shard alone fills every level")
	}
}

// TestOverlongLineIsCounted: a line longer than any trial writes (the red
// team's 400 MB line took the viewer to 2.4–3.0 GB) is counted as not a
// trial record, not held, and the records after it show. The bound is
// lowered for the test: the reader holds at most the bound, so the line
// here only needs to pass it.
func TestOverlongLineIsCounted(t *testing.T) {
	old := results.MaxLineBytes
	results.MaxLineBytes = 4 << 20
	defer func() { results.MaxLineBytes = old }()
	f := testFixtures(t)
	dir := t.TempDir()
	rest := copyPrefix(t, f.bench, dir, 3)
	appendTo(t, dir, append(bytes.Repeat([]byte("x"), 6<<20), '\n'))
	appendTo(t, dir, rest[0])
	srv := serveView(t, view.Options{}, dir)
	body := mustGet(t, srv, "/")
	if !strings.Contains(body, "line 4 of trials.jsonl is not a trial record") || !strings.Contains(body, `<b class="done">4</b>`) {
		t.Errorf("run page with an overlong line: %.2000s", body)
	}
	if _, _, err := results.ReadJournal(filepath.Join(dir, results.TrialsFile)); err == nil || !strings.Contains(err.Error(), "trials.jsonl:4: a line of") {
		t.Errorf("ReadJournal: %v, want the overlong line refused at line 4", err)
	}
}

// TestTrialPageMarksFaults: a trial under a fault setting names it, each
// faulted call its fault, and the verdict the faults injected and
// recovered, the false claims, and the rows that went offline with what
// they replaced.
func TestTrialPageMarksFaults(t *testing.T) {
	spec, err := speclang.LoadAll(specs.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := config("view-faults", "", agent.Oracle)
	cfg.Domains, cfg.Granularities = []string{spec.Domains[0].Name}, []level.Level{level.L4}
	cfg.Faults = []faults.Setting{{Name: "flaky", Rate: 0.5, Kinds: []faults.Kind{faults.Transient}}, {Name: "offline", Rate: 0.5, Kinds: []faults.Kind{faults.Offline}}}
	if _, err := harness.Run(context.Background(), cfg, spec, harness.Options{Out: out, Lookup: gen.Lookup}); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, out)
	srv := serveView(t, view.Options{}, out)
	i := slices.IndexFunc(recs, func(r results.Record) bool { return r.Metrics.Explain != nil && len(r.Metrics.Explain.Offline) > 0 })
	if i < 0 {
		t.Fatalf("no row went offline in %d trials at a rate of one half", len(recs))
	}
	off := recs[i]
	body := html.UnescapeString(mustGet(t, srv, "/trial?run=0&id="+url.QueryEscape(off.TrialID)))
	for _, w := range []string{`<ul id="offline">`, "<b>" + off.Metrics.Explain.Offline[0].Row + "</b>: the answer says what was not done ✓",
		off.Metrics.Explain.Offline[0].Replaced[0], "false claims <b>0</b>"} {
		if !strings.Contains(body, w) {
			t.Errorf("offline trial page lacks %q", w)
		}
	}
	i = slices.IndexFunc(recs, func(r results.Record) bool { return r.Metrics.FaultsInjected > 0 && r.Faults == "flaky" })
	if i < 0 {
		t.Fatalf("no fault injected in %d trials at a rate of one half", len(recs))
	}
	rec := recs[i]
	body = html.UnescapeString(mustGet(t, srv, "/trial?run=0&id="+url.QueryEscape(rec.TrialID)))
	for _, w := range []string{`faults <b id="faults">flaky</b>`, "injected fault transient",
		fmt.Sprintf("faults injected <b>%d</b> · recovered <b>%d</b>", rec.Metrics.FaultsInjected, rec.Metrics.FaultsRecovered)} {
		if !strings.Contains(body, w) {
			t.Errorf("trial page lacks %q", w)
		}
	}
}
