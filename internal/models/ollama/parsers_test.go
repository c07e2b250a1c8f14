package ollama

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// TestEveryBuiltInParserFailureIsMalformed reads every error the pinned
// ollama module's built-in parsers (model/parsers) can return and checks
// that, sent as Ollama sends it (an HTTP 500 before any chunk, an error
// line after), it is the model's malformed tool call, never a transient
// failure retried to the deadline. A newer module whose parsers say
// something new fails here until parserFailures knows it.
func TestEveryBuiltInParserFailureIsMalformed(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ollama/ollama").Output()
	if err != nil {
		t.Fatalf("go list the ollama module: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "model", "parsers", "*.go"))
	literal := regexp.MustCompile(`(?:errors\.New|fmt\.Errorf)\("((?:[^"\\]|\\.)*)"`)
	verb := regexp.MustCompile(`%[a-z]`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			n++
			msg := verb.ReplaceAllString(strings.ReplaceAll(m[1], `\"`, `"`), "x")
			for _, e := range []error{
				api.StatusError{StatusCode: 500, Status: "500 Internal Server Error", ErrorMessage: msg},
				fmt.Errorf("%s", msg),
			} {
				if _, ok := unparsedToolCall(e); !ok {
					t.Errorf("%s: %q (as %T) is not recognised as a tool call the parser could not read", filepath.Base(f), msg, e)
				}
			}
		}
	}
	if n == 0 {
		t.Fatalf("no parser errors found in %d files of model/parsers", len(files))
	}
	for _, msg := range []string{
		"model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details",
		"an error was encountered while running the model: unexpected EOF",
		"llama runner process has terminated: exit status 2",
	} {
		if _, ok := unparsedToolCall(api.StatusError{StatusCode: 500, ErrorMessage: msg}); ok {
			t.Errorf("%q, a crashed runner, counts as the model's malformed call", msg)
		}
	}
	if _, ok := unparsedToolCall(api.StatusError{StatusCode: 400, ErrorMessage: "invalid format: expected \"json\" or a valid JSON schema"}); ok {
		t.Error("a 400 about the request's format counts as the model's malformed call")
	}
}
