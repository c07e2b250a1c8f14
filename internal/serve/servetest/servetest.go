// Package servetest holds what tests of several packages need to serve a
// domain: a level as the interface it is.
package servetest

import (
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/surface"
)

// Level is a level of d as its identity interface (serve.Identity), for
// serve.Open, serve.NewServer and serve.DomainFactory; the test fails
// when d has no such level.
func Level(t testing.TB, d *mcpdomain.Domain, lv level.Level) *surface.Interface {
	t.Helper()
	iface, err := serve.Identity(d, lv)
	if err != nil {
		t.Fatal(err)
	}
	return iface
}
