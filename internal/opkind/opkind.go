// Package opkind names the kinds of operation of the spec language: what an
// operation does to its entity's rows. The spec IR, the generator and the
// runtime that generated code links against all name a kind by these
// constants; the package is a leaf, so that the spec language links no MCP
// runtime to name one.
package opkind

// Kind is the kind of an operation, as a spec's kind key spells it.
type Kind string

// The operation kinds of the spec language.
const (
	Get         Kind = "get"          // one row by ID
	List        Kind = "list"         // rows by equality filters and ranges
	Create      Kind = "create"       // a new row
	Update      Kind = "update"       // fields of one row by ID
	UpdateWhere Kind = "update_where" // fields of every row a fixed where and filters match
	Delete      Kind = "delete"       // one row by ID
	Aggregate   Kind = "aggregate"    // count, sum, avg, min or max, optionally grouped
	Preset      Kind = "preset"       // a named bundle of field values
	Workflow    Kind = "workflow"     // a sequence of other operations, applied all or nothing
)
