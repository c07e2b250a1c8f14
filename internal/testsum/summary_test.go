package main

import (
	"os"
	"strings"
	"testing"
)

// The streams in testdata were recorded from go test -json: tests.json on
// a package with a passing test that logs, a failing one, a skipped one
// and a skipped subtest; build.json on a package that does not compile.

func TestSummaryListsSkipsWithReasons(t *testing.T) {
	f, err := os.Open("testdata/tests.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s, err := summarize(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !s.failed {
		t.Error("a failed test did not fail the summary")
	}
	got := out.String()
	for _, want := range []string{
		"a_test.go:5: boom\n--- FAIL: TestFail",
		"FAIL\texample.com/tsm\t",
		"2 tests skipped:\n",
		"  example.com/tsm TestSkip: a_test.go:4: needs chromium: not on PATH\n",
		"  example.com/tsm TestSub/inner: a_test.go:6: npm absent\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"noise", "=== RUN", "--- PASS"} {
		if strings.Contains(got, not) {
			t.Errorf("summary prints %q, which plain go test does not:\n%s", not, got)
		}
	}
}

func TestSummaryOfAPassingRun(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
`
	var out strings.Builder
	s, err := summarize(strings.NewReader(in), &out)
	if err != nil || s.failed {
		t.Fatalf("failed %v, err %v", s.failed, err)
	}
	if got, want := out.String(), "ok  \tp\t0.01s\nno test skipped\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSummaryOfABuildFailure(t *testing.T) {
	f, err := os.Open("testdata/build.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s, err := summarize(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !s.failed {
		t.Error("a build failure did not fail the summary")
	}
	if got := out.String(); !strings.Contains(got, `cannot use "x" (untyped string constant) as int value`) || !strings.Contains(got, "[build failed]") {
		t.Errorf("the compiler's message is lost:\n%s", got)
	}
}
