// Package specs embeds the domain specs and their JSON Schema, so the
// granite binary can validate and describe its domains anywhere, without
// the source tree.
package specs

import "embed"

// FS holds the two schemas, every <domain>/domain.yaml and every
// <domain>/scenarios.yaml.
//
//go:embed domain.schema.json scenario.schema.json */domain.yaml */scenarios.yaml
var FS embed.FS
