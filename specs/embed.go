// Package specs embeds the domain specs, the scenario tables, the
// experiment configs and the JSON Schemas that validate them, so the
// granite binary can validate, verify and run its benchmark anywhere,
// without the source tree.
package specs

import "embed"

// FS holds the schemas, every <domain>/domain.yaml and
// <domain>/scenarios.yaml, and experiments/*.yaml.
//
//go:embed *.schema.json */domain.yaml */scenarios.yaml experiments/*.yaml
var FS embed.FS
