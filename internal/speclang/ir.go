package speclang

import (
	"fmt"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
)

// The IR is what the emitters see: every reference resolved, every Go name
// fixed, everything in spec (document) order or sorted. Emitters never look
// at YAML.

// FieldType is the type of an entity field.
type FieldType string

// Field types of the spec language.
const (
	TString    FieldType = "string"
	TInteger   FieldType = "integer"
	TNumber    FieldType = "number"
	TBoolean   FieldType = "boolean"
	TEnum      FieldType = "enum"
	TTimestamp FieldType = "timestamp"
	TObject    FieldType = "object"
	TArray     FieldType = "array"
	TReference FieldType = "reference"
)

// scalar reports whether values of the type can be compared for equality.
func (t FieldType) scalar() bool { return t != TObject && t != TArray }

// ordered reports whether values of the type can be range-filtered.
func (t FieldType) ordered() bool { return t == TInteger || t == TNumber || t == TTimestamp }

// numeric reports whether values of the type can be aggregated.
func (t FieldType) numeric() bool { return t == TInteger || t == TNumber }

// Categories, in the order L3 tools are derived.
var categories = []string{"status_query", "action_execution", "configuration", "analysis"}

// defaultNowExample is the example timestamp of a domain without now.
const defaultNowExample = "2026-01-01T08:00:00Z"

// Domain is one domain spec, checked and resolved.
type Domain struct {
	Name        string
	Title       string
	Description string
	Now         string
	File        string
	// SHA256 is the hex SHA-256 of the domain.yaml bytes the domain was
	// loaded from: generated code records it, so that code generated from
	// another version of the file is known stale.
	SHA256     string
	Entities   []*Entity
	Operations []*Operation
	Levels     []*LevelTools // L4, L3, L2, L1
	// Enums are the domain's enum fields' types, in spec order.
	Enums []*Enum
	// Scenarios are the domain's scenario table, once LoadScenarios ran.
	Scenarios []*Scenario
}

// Entity is an entity type with its seed rows.
type Entity struct {
	Name        string
	Plural      string
	GoName      string
	Description string
	IDPrefix    string
	IDDigits    int
	Fields      []*Field
	Seed        []*Row
}

// Field is one field of an entity (the ID field is implicit).
type Field struct {
	// broken says the field's declaration failed the schema: checks of its
	// uses are skipped, since its type is not known.
	broken      bool
	Name        string
	GoName      string
	Description string
	Type        FieldType
	Unit        string
	Values      []string
	// Enum is the Go type of an enum field's values; nil for other types.
	Enum      *Enum
	Min, Max  *float64
	Pattern   string
	MaxLength int
	Ref       *Entity
	Items     *Field
	// Optional says the field may hold no value: seed rows and creates
	// may leave it out and a set clause may unset it (null). An unset
	// field is omitted from outputs and matches no filter or range.
	Optional bool
	// Example is a valid value of a timestamp field (the domain's now),
	// for descriptions and error hints.
	Example string
	// Default is the value a seed row or create without the field gets;
	// nil means none: an optional field is then unset, any other field
	// holds its zero value.
	Default any
	// DefaultNow says Default is the domain's now, given as default: now.
	DefaultNow bool
}

// Enum is the named Go type an enum field's values have, with a constant
// per value: type LampColor string; const LampColorWarm LampColor = "warm".
// The JSON a value encodes to, and the schema, are the value itself.
type Enum struct {
	GoName string
	Field  *Field
	Values []EnumValue
}

// EnumValue is one value of an enum and the Go name of its constant.
type EnumValue struct {
	Value  string
	GoName string
}

// Const returns the Go name of the constant of value v.
func (e *Enum) Const(v string) string {
	for _, ev := range e.Values {
		if ev.Value == v {
			return ev.GoName
		}
	}
	panic(fmt.Sprintf("speclang: %q is not a value of %s", v, e.GoName)) // values are checked against the field when loaded
}

// Row is one seed row; Values holds a normalised Go value per field name
// (string, int64, float64, bool, map[string]any, []any). An optional field
// the row leaves unset has no entry.
type Row struct {
	ID     string
	Values map[string]any
}

// Assign is a fixed field value in a where or set clause. A nil Value is
// "unset": a where clause then selects rows without a value, and a set
// clause removes the value (optional fields only).
type Assign struct {
	Field *Field
	Value any
}

// Preset is one named bundle of a preset operation.
type Preset struct {
	Name        string
	Description string
	Steps       []PresetStep
}

// PresetStep sets fields on the rows a where clause matches.
type PresetStep struct {
	Where []Assign
	Set   []Assign
}

// Step is one call of a workflow: the operation it calls and a value for
// each argument it gives, once, or once per element of a list (ForEach).
type Step struct {
	Call *Operation
	// ForEach is the binding of the list to call once per element of
	// ($locks.items), "" for one call.
	ForEach string
	With    []Binding
	// As names the step's result for later steps' bindings; "" for none.
	As string
}

// Binding is the value a step gives one argument of the operation it
// calls: a reference to a value known at run time ($room, $locks.items,
// $item.id), or a literal checked against the argument.
type Binding struct {
	Arg *Arg
	// Ref is the reference as written, "" for a literal.
	Ref string
	// Value is the literal, normalised as a seed value is.
	Value any
}

// ArgRole says what an argument does in its operation.
type ArgRole int

// Argument roles.
const (
	RoleID       ArgRole = iota // the row an operation acts on
	RoleFilter                  // equality filter on Field
	RoleMin                     // lower bound on Field
	RoleMax                     // upper bound on Field
	RoleLimit                   // page size of a list
	RoleValue                   // value of Field to create or set
	RoleFunction                // aggregate function
	RoleAggField                // field to aggregate
	RoleGroupBy                 // aggregate grouping
	RolePreset                  // preset to apply
	RoleClear                   // true removes the value of optional Field
	RoleInput                   // workflow argument, bound into its steps' arguments
)

// Arg is one argument of an operation.
type Arg struct {
	Name     string
	GoName   string
	Role     ArgRole
	Field    *Field // for filters, bounds and values
	Required bool
	// Schema is the argument's JSON Schema as the model sees it.
	Schema Object
	// JSONType is the schema's type; GoType the Go type of a required value.
	JSONType string
	GoType   GoType
	Enum     []string
	// Entity is set on arguments that carry the ID of a row.
	Entity *Entity
	Hint   string
}

// Operation is one atomic operation.
type Operation struct {
	Name        string
	GoName      string
	Kind        opkind.Kind
	Category    string
	Description string
	Entity      *Entity // nil for a workflow, which acts through its steps
	Args        []*Arg
	ReadOnly    bool
	Destructive bool
	Idempotent  bool

	Filters []*Field
	Ranges  []*Field
	Fields  []*Field
	Merge   bool
	// Clear are an update's optional fields it may remove, each through
	// a boolean argument clear_<field>.
	Clear     []*Field
	Where     []Assign
	Set       []Assign
	Functions []string
	GroupBy   []*Field
	Limit     int
	PresetArg string
	Presets   []*Preset
	// Steps are a workflow's calls, in order; nil for other kinds.
	Steps []*Step

	// Schema is the JSON Schema of the arguments; Example a valid call.
	Schema  string
	Example string
}

// LevelTools is the tools a domain exposes at one granularity level.
type LevelTools struct {
	Level level.Level
	Tools []*Tool
}

// Tool is a tool at one level: one operation, or several behind "action".
type Tool struct {
	Name        string
	GoName      string
	Description string
	Operations  []*Operation
	// Schema is the tool's input schema: its operation's, or for a tool
	// with an action combine.Schema of its operations'.
	Schema string
}

// GoType is a Go type in a form every emitter can render.
type GoType struct {
	Kind string  // string, int, float64, bool, map, slice
	Elem *GoType // slice element
	// Named is the generated type over Kind that values have, an enum's;
	// "" for none. String and comparisons of argument types ignore it.
	Named string
}

func (g GoType) String() string {
	switch g.Kind {
	case "map":
		return "map[string]any"
	case "slice":
		return "[]" + g.Elem.String()
	default:
		return g.Kind
	}
}

// Nilable reports whether the type has nil as its absent value, so an
// optional argument of it needs no pointer.
func (g GoType) Nilable() bool { return g.Kind == "map" || g.Kind == "slice" }
