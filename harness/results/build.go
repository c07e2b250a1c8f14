package results

// Build says which granite binary wrote a run: `granite version` prints
// it and run.json records it, so a result can be traced to the build,
// the node's architecture and the benchmark that produced it.
type Build struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, Modified
	// whether the tree had uncommitted changes ("" when not built from a
	// checkout).
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Module is the version the go command recorded for granite's module:
	// "(devel)" for a build from a source tree, a release or pseudo-version
	// for go install …@version.
	Module    string `json:"module,omitempty"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// Tags are the build tags; CGO whether cgo was on.
	Tags []string `json:"tags,omitempty"`
	CGO  bool     `json:"cgo"`
	// Meters are the energy meters built in, in the order auto tries them.
	Meters []string `json:"meters"`
	// SpecsSHA256 hashes the specs embedded in the binary (domains,
	// scenarios, schemas, experiment configs).
	SpecsSHA256 string `json:"specs_sha256"`
}

// CommitText is Commit as a person reads it: the revision, or what is
// known of the build when it carries none.
func (b Build) CommitText() string {
	switch {
	case b.Commit != "" && b.Modified:
		return b.Commit + " (modified)"
	case b.Commit != "":
		return b.Commit
	case b.Module == "(devel)":
		return "unknown: built from a source tree without a VCS stamp (go build -buildvcs=false, which GOFLAGS may set, " +
			"or no .git or git); make build stamps it"
	case b.Module != "":
		return "unknown: installed as module version " + b.Module
	}
	return "unknown: the binary carries no build information"
}
