// Package testdomain holds domains generated for tests, apart from gen/ and
// from the generator's golden files: tests import internal/testdomain/tiny,
// generated from the golden tiny spec, rather than the golden want/ output,
// so that the goldens stay expectations and never become code others build on.
package testdomain

//go:generate go run ../../cmd/granite-gen -specs ../../specs -domain ../../generator/testdata/golden/tiny/domain.yaml -out . -root github.com/mcpgranite/granite/internal/testdomain
