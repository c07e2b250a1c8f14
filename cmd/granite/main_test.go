package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLI(t *testing.T) {
	broken := t.TempDir()
	schema, err := os.ReadFile("../../specs/domain.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(broken, "domain.schema.json"), schema, 0o644))
	must(t, os.MkdirAll(filepath.Join(broken, "bad"), 0o755))
	must(t, os.WriteFile(filepath.Join(broken, "bad", "domain.yaml"), []byte("domain: bad\ntitle: t\ndescription: d\nentities: {}\noperations: {}\n"), 0o644))

	cases := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"list"}, 0, "smarthome    10  4   2   1", ""},
		{[]string{"list", "--json"}, 0, `"name": "agriculture"`, ""},
		{[]string{"validate"}, 0, "embedded specs: 2 domains", ""},
		{[]string{"validate", "--specs", "../../specs"}, 0, "all valid", ""},
		{[]string{"validate", "--specs", broken}, 1, "", filepath.Join(broken, "bad/domain.yaml") + ":4:11: $.entities: found {}; expected minProperties: got 0, want 1"},
		{[]string{"validate", "--specs", "/no/such/dir"}, 2, "", "not a folder"},
		{[]string{"serve", "--domain", "kitchen"}, 2, "", `unknown domain "kitchen": want one of agriculture, smarthome`},
		{[]string{"serve", "--domain", "smarthome", "--level", "L5"}, 2, "", `unknown level "L5"`},
		{[]string{"serve", "--domain", "smarthome", "--transport", "smoke"}, 2, "", `unknown --transport "smoke"`},
		{[]string{"list", "--colour"}, 2, "", "flag provided but not defined: -colour"},
		{[]string{"list", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"serve", "-h"}, 0, "", "usage: granite serve"},
		{[]string{"help"}, 0, "Commands:", ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("granite %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant stdout ∋ %q, stderr ∋ %q",
				strings.Join(c.args, " "), code, c.code, out.String(), errb.String(), c.out, c.err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
