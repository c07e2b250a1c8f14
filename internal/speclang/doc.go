// Package speclang is granite's spec language: it decodes domain specs and
// scenario tables from YAML keeping every node's position, validates them
// against the published JSON Schemas, and resolves them into an IR (every
// reference resolved, every Go name fixed, everything in spec or sorted
// order). Errors come all at once, each as file:line:col with the JSON path
// and what was expected.
//
// The generator emits Go from the IR; the harness and the synthesizer read
// domains and scenarios from it. Nothing here emits code.
package speclang
