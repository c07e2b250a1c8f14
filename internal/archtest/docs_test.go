package archtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines bounds the README: it is a door (what granite is, the
// two-command start, one experiment, a table of the guides), and
// reference text lives in docs/<topic>.md.
const maxReadmeLines = 300

// repoRoot is the module's root, from this package's folder.
const repoRoot = "../.."

// TestReadmeIsADoor: the README stays under maxReadmeLines lines and keeps
// the two commands a fresh machine starts with, which CI runs (.ci/run).
func TestReadmeIsADoor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1; n >= maxReadmeLines {
		t.Errorf("README.md has %d lines; keep it under %d and move reference text into docs/<topic>.md", n, maxReadmeLines)
	}
	for _, cmd := range []string{"make run", "make test"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `\s`).MatchString(text) {
			t.Errorf("README.md no longer starts a line with %q in its start block; a fresh machine (and CI) begins there", cmd)
		}
	}
}

// TestDocLinksResolve: every relative link in README.md and docs/*.md
// names a file that exists, and every #anchor a heading of the page it
// points into, by GitHub's slug rules.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	pages = append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingSlugs(string(data))
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, page)
		for _, l := range markdownLinks(string(data)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: no such file", name, l.line, l.target)
					continue
				}
			}
			checked++
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", name, l.line, l.target, err)
				continue
			}
			if !a[anchor] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s there", name, l.line, l.target, anchor)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d relative links", checked)
	}
}

// link is one relative link of a Markdown page.
type link struct {
	target string
	line   int
}

var (
	linkTarget = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// markdownLinks returns the relative link targets of a page, outside
// fenced code blocks and code spans; absolute URLs are left out.
func markdownLinks(text string) []link {
	var out []link
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkTarget.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			if t := m[1]; !strings.Contains(t, "://") && !strings.HasPrefix(t, "mailto:") {
				out = append(out, link{t, i + 1})
			}
		}
	}
	return out
}

// headingSlugs returns the anchors GitHub gives a page's headings: the
// heading's text lowercased, punctuation other than - and _ dropped,
// spaces turned into -, and -1, -2, ... added to repeats.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(heading, " ") {
			continue
		}
		s := slug(heading)
		if n := seen[s]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			slugs[s] = true
		}
		seen[s]++
	}
	return slugs
}

// slug is one heading's anchor before repeats are numbered.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSlug pins the GitHub anchor rules the link test relies on.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Scenario tables":                           "scenario-tables",
		"See every trial: granite view":             "see-every-trial-granite-view",
		"The benchmark: nine domains, 81 scenarios": "the-benchmark-nine-domains-81-scenarios",
		"`granite serve` over HTTP":                 "granite-serve-over-http",
		"Edge nodes: release builds":                "edge-nodes-release-builds",
		"What `tc_strict` adds":                     "what-tc_strict-adds",
		"A -- B":                                    "a----b",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	got := headingSlugs("# A\n\n## A\n\n```sh\n# not a heading\n```\n### A\n")
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !got[want] {
			t.Errorf("headingSlugs: no %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("headingSlugs counted a comment inside a code block")
	}
}

// TestArchitectureMapNamesEveryPackage: docs/architecture.md is the one
// package map, so its table of packages by layer names every package of
// the module (gen/'s domain packages together as gen/*), test support
// included.
func TestArchitectureMapNamesEveryPackage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Packages, by layer\n")
	if !ok {
		t.Fatal("docs/architecture.md has no section \"Packages, by layer\"")
	}
	if i := strings.Index(table, "\n## "); i >= 0 {
		table = table[:i]
	}
	named := map[string]bool{}
	for _, m := range codeSpan.FindAllString(table, -1) {
		named[strings.Trim(m, "`")] = true
	}
	cmd := exec.Command(goBin, "list", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	for _, pkg := range pkgs {
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		if named[rel] || strings.HasPrefix(rel, "gen/") && named["gen/*"] {
			continue
		}
		t.Errorf("docs/architecture.md's table of packages by layer does not name %s; add a row (or add it to its layer's row)", rel)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
}

// TestDocsHaveNoEmptySection: no heading of README.md or docs/*.md is
// followed directly by another heading of its own level or above, as a
// section left behind when its content moved would be.
func TestDocsHaveNoEmptySection(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	for _, page := range append(pages, filepath.Join(repoRoot, "README.md")) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, page)
		open, openLine, fenced := 0, 0, false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
			level := headingLevel(line)
			switch {
			case fenced || level == 0 && strings.TrimSpace(line) == "":
			case level == 0 || level > open && open > 0:
				open = 0
			case open > 0:
				t.Errorf("%s:%d: the section under this heading is empty", name, openLine)
			}
			if !fenced && level > 0 {
				open, openLine = level, i+1
			}
		}
		if open > 0 {
			t.Errorf("%s:%d: the last section is empty", name, openLine)
		}
	}
}

// headingLevel is a Markdown line's heading level, 0 when it is not one.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}
