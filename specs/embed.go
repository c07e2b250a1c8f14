// Package specs embeds the domain specs and their JSON Schema, so the
// granite binary can validate and describe its domains anywhere, without
// the source tree.
package specs

import "embed"

// FS holds domain.schema.json and every <domain>/domain.yaml.
//
//go:embed domain.schema.json */domain.yaml
var FS embed.FS
