package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgranite/granite/harness"
)

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("version", "[--json]",
		"Prints which granite this is: version, commit, Go version, OS/arch, build tags and cgo,\n"+
			"the energy meters built in, and a hash of the embedded specs. run.json records the same.", stderr)
	asJSON := fset.Bool("json", false, "print JSON")
	if err := parse(fset, args); err != nil {
		return err
	}
	b := harness.BuildInfo()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			return exitStatus(1)
		}
		return nil
	}
	tags := strings.Join(b.Tags, ",")
	if tags == "" {
		tags = "none"
	}
	fmt.Fprintf(stdout, "granite %s\ncommit:  %s\ngo:      %s\nos/arch: %s/%s\ntags:    %s (cgo %v)\nmeters:  %s\nspecs:   sha256 %s\n",
		b.Version, b.CommitText(), b.GoVersion, b.OS, b.Arch, tags, b.CGO, strings.Join(b.Meters, ", "), b.SpecsSHA256)
	return nil
}
