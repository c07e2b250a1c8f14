// Command granite-gen compiles the domain specs under specs/ into typed Go
// MCP servers under gen/. It must never import gen/: a broken gen/ must not
// stop its own regeneration.
//
//	go run ./cmd/granite-gen -specs specs -out gen
package main

//go:generate go run . -specs ../../specs -out ../../gen

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/internal/speclang"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("granite-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specs := fs.String("specs", "specs", "folder holding domain.schema.json and <domain>/domain.yaml")
	out := fs.String("out", "gen", "folder to write generated code into")
	check := fs.Bool("check", false, "validate the specs and render, but write nothing")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: granite-gen [-specs DIR] [-out DIR] [-check]")
		fmt.Fprintln(stderr, "Compiles domain specs into typed MCP servers, one package per domain under -out.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	spec, err := speclang.Load(os.DirFS(*specs))
	if err != nil {
		fmt.Fprintln(stderr, prefixed(*specs, err))
		return 1
	}
	for _, w := range spec.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", prefixed(*specs, w))
	}
	files, err := generator.Render(spec)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		fmt.Fprintf(stdout, "granite-gen: %d domains, %d files rendered, nothing written\n", len(spec.Domains), len(files))
		return 0
	}
	written, removed, err := generator.Write(*out, files)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "granite-gen: %d domains, %d files (%d written, %d removed)\n", len(spec.Domains), len(files), len(written), len(removed))
	return 0
}

// prefixed makes spec positions relative to the working directory, so an
// editor can jump to them.
func prefixed(dir string, err error) string {
	var list speclang.ErrorList
	var one *speclang.Error
	switch {
	case errors.As(err, &list):
		return speclang.WithDir(dir, list).Error()
	case errors.As(err, &one):
		return speclang.WithDir(dir, speclang.ErrorList{one}).Error()
	}
	return err.Error()
}
