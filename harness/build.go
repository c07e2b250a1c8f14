package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mcpgranite/granite/harness/meter"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/specs"
)

// Version and Commit name the release this binary is, set at link time
// by make release (-X github.com/mcpgranite/granite/harness.Version=…);
// otherwise Version is "dev" and the commit comes from the Go toolchain's
// VCS stamp, when it made one.
var (
	Version = "dev"
	Commit  = ""
)

// pseudoRev finds the commit a pseudo-version names (the 12 hex digits
// after its UTC timestamp: v0.0.0-20261202054200-0123456789ab, or
// v1.2.4-0.20261202054200-0123456789ab after a tag), which is
// all a go install …@commit build knows of its revision.
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+incompatible)?(\+dirty)?$`)

// BuildInfo describes this binary.
func BuildInfo() results.Build {
	b := results.Build{Version: Version, Commit: Commit, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Meters: meter.BuiltIn(), SpecsSHA256: specsHash()}
	if info, ok := debug.ReadBuildInfo(); ok {
		b.Module = info.Main.Version
		if b.Version == "dev" && b.Module != "(devel)" && b.Module != "" {
			b.Version = b.Module // go install …@version
		}
		if m := pseudoRev.FindStringSubmatch(b.Module); m != nil && b.Commit == "" {
			b.Commit = m[1]
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "-tags":
				b.Tags = strings.Split(s.Value, ",")
			case "CGO_ENABLED":
				b.CGO = s.Value == "1"
			}
		}
	}
	return b
}

// specsHash hashes every embedded spec file, name and content, in path
// order (fs.WalkDir's lexical order), so equal hashes mean equal specs.
func specsHash() string {
	h := sha256.New()
	err := eachSpec(func(path string, data []byte) {
		h.Write([]byte(path + "\x00"))
		h.Write(data)
		h.Write([]byte{0})
	})
	if err != nil { // the embedded tree is part of the binary: unreadable only if the binary is broken
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// eachSpec calls fn with every embedded spec file, in path order: the one
// walk both hashes of the specs (the build's and the config's) make.
func eachSpec(fn func(path string, data []byte)) error {
	return fs.WalkDir(specs.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(specs.FS, path)
		if err != nil {
			return err
		}
		fn(path, data)
		return nil
	})
}
