// Package generator holds granite-gen's emitters: from the spec language's
// IR (package speclang) it renders each domain's typed Go MCP server into
// gen/<domain>/ and the registry gen/registry.go, with jennifer, one
// emitter per generated file, and writes them safely (everything rendered
// before anything is written, unchanged files skipped, stale ones removed).
//
// Only cmd/granite-gen imports it; everything that needs domains as data
// imports speclang.
package generator
