// Command granite-gen compiles the domain specs under specs/ into typed Go
// MCP servers under gen/. It must never import gen/: a broken gen/ must not
// stop its own regeneration.
//
//	go run ./cmd/granite-gen -specs specs -out gen
//
// With -domain it generates one domain package from a single domain.yaml
// (checked against the schema under -specs) and no registry, as a package
// under the import path -root: how tests get a fixture domain of their own.
//
//	go run ./cmd/granite-gen -domain generator/testdata/golden/tiny/domain.yaml \
//		-out internal/testdomain -root github.com/mcpgranite/granite/internal/testdomain
package main

//go:generate go run . -specs ../../specs -out ../../gen

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing/fstest"

	"github.com/mcpgranite/granite/generator"
	"github.com/mcpgranite/granite/internal/speclang"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("granite-gen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	specs := flags.String("specs", "specs", "folder holding domain.schema.json and <domain>/domain.yaml")
	out := flags.String("out", "gen", "folder to write generated code into")
	check := flags.Bool("check", false, "validate the specs and render, but write nothing")
	domain := flags.String("domain", "", "generate only the domain package of this <domain>/domain.yaml, without the registry")
	root := flags.String("root", generator.Module+"/gen", "import path of -out, with -domain")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: granite-gen [-specs DIR] [-out DIR] [-check] [-domain FILE -root IMPORTPATH]")
		fmt.Fprintln(stderr, "Compiles domain specs into typed MCP servers, one package per domain under -out.")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var fsys fs.FS = os.DirFS(*specs)
	dir := *specs
	if *domain != "" {
		data, err := speclang.ReadYAMLFile(*domain)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		name := filepath.Base(filepath.Dir(*domain))
		fsys = oneDomain{schemas: fsys, file: name + "/domain.yaml", data: data}
		dir = filepath.Dir(filepath.Dir(*domain))
	}
	spec, err := speclang.Load(fsys)
	if err != nil {
		fmt.Fprintln(stderr, prefixed(dir, err))
		return 1
	}
	for _, w := range spec.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", prefixed(dir, w))
	}
	var files map[string][]byte
	if *domain != "" {
		files, err = generator.RenderDomains(spec, *root)
	} else {
		files, err = generator.Render(spec)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		fmt.Fprintf(stdout, "granite-gen: %s, %d files rendered, nothing written\n", domains(len(spec.Domains)), len(files))
		return 0
	}
	written, removed, err := generator.Write(*out, files)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "granite-gen: %s, %d files (%d written, %d removed)\n", domains(len(spec.Domains)), len(files), len(written), len(removed))
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

// oneDomain is a specs folder holding only the schemas of another one and a
// single domain file, so that one domain.yaml kept elsewhere (a golden
// case) can be loaded on its own.
type oneDomain struct {
	schemas fs.FS
	file    string
	data    []byte
}

// Open serves the domain file too: the loader reads through Open, to bound
// what it reads.
func (o oneDomain) Open(name string) (fs.File, error) {
	if name == o.file {
		return fstest.MapFS{name: {Data: o.data}}.Open(name)
	}
	return o.schemas.Open(name)
}

func (o oneDomain) ReadFile(name string) ([]byte, error) {
	if name == o.file {
		return o.data, nil
	}
	return fs.ReadFile(o.schemas, name)
}

func (o oneDomain) Glob(pattern string) ([]string, error) {
	if ok, err := path.Match(pattern, o.file); !ok || err != nil {
		return nil, err
	}
	return []string{o.file}, nil
}

// domains says "1 domain" or "9 domains".
func domains(n int) string {
	if n == 1 {
		return "1 domain"
	}
	return fmt.Sprintf("%d domains", n)
}
