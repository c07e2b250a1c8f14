package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository may track outside
// testdata/: sources, specs and generated code are far smaller; anything
// bigger is a build output or data that belongs elsewhere.
const maxTracked = 1 << 20

// executableMagic are the first bytes of the binary executables a build
// could leave behind: ELF, Mach-O (both byte orders, 32 and 64 bit, fat)
// and PE.
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// TestNoBuildOutputsTracked fails when git tracks a file outside
// testdata/ that is over 1 MiB or is a binary executable: a 41 MB
// granite binary was once committed at the root.
func TestNoBuildOutputsTracked(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	dir := strings.TrimSpace(string(root))
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || inTestdata(name) {
			continue
		}
		if why := buildOutput(filepath.Join(dir, name)); why != "" {
			t.Errorf("%s is tracked but %s; remove it (git rm --cached) and ignore it", name, why)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("checked only %d tracked files", checked)
	}
}

func inTestdata(name string) bool {
	return slices.Contains(strings.Split(name, "/"), "testdata")
}

// buildOutput says why a file looks like a build output, or "".
func buildOutput(path string) string {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "" // deleted in the work tree, or a link
	}
	if st.Size() > maxTracked {
		return "over 1 MiB"
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := f.Read(head)
	for _, m := range executableMagic {
		if n >= len(m) && bytes.Equal(head[:len(m)], m) {
			return "a binary executable"
		}
	}
	return ""
}

func TestBuildOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		data []byte
		want string
	}{
		"source.go":   {[]byte("package x\n"), ""},
		"granite":     {append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...), "a binary executable"},
		"granite.exe": {[]byte("MZ\x90\x00"), "a binary executable"},
		"big.json":    {bytes.Repeat([]byte("x"), maxTracked+1), "over 1 MiB"},
		"empty":       {nil, ""},
	}
	for name, c := range cases {
		if got := buildOutput(write(name, c.data)); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	if !inTestdata("generator/testdata/x.bin") || inTestdata("cmd/granite/main.go") {
		t.Error("inTestdata")
	}
}
