package results

// Build says which granite binary wrote a run: `granite version` prints
// it and run.json records it, so a result can be traced to the build,
// the node's architecture and the benchmark that produced it.
type Build struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, Modified
	// whether the tree had uncommitted changes ("" when not built from a
	// checkout).
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
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
