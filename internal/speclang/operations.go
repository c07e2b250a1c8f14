package speclang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/opkind"
)

// kindKeys lists the operation keys that mean something for each kind;
// any other kind-specific key is an error rather than silently ignored.
var kindKeys = map[opkind.Kind][]string{
	opkind.Get:         {},
	opkind.List:        {"filters", "ranges", "required", "limit"},
	opkind.Create:      {"fields", "optional"},
	opkind.Update:      {"fields", "merge", "clear"},
	opkind.UpdateWhere: {"filters", "required", "fields", "where", "set"},
	opkind.Delete:      {},
	opkind.Aggregate:   {"filters", "required", "fields", "functions", "group_by"},
	opkind.Preset:      {"filters", "required", "argument", "presets"},
	opkind.Workflow:    {"arguments", "required", "steps"},
}

var commonOpKeys = []string{"kind", "entity", "description", "category", "go_name"}

func defaultCategory(kind opkind.Kind) string {
	switch kind {
	case opkind.Get, opkind.List:
		return "status_query"
	case opkind.Aggregate:
		return "analysis"
	case opkind.Create, opkind.Delete:
		return "configuration"
	case opkind.Workflow:
		return "" // known once its steps are: see workflowCategory
	default:
		return "action_execution"
	}
}

func (b *builder) operation(k, n *node) {
	o := &Operation{
		Name:        k.str(),
		GoName:      n.get("go_name").str(),
		Kind:        opkind.Kind(n.get("kind").str()),
		Category:    n.get("category").str(),
		Description: strings.TrimSpace(n.get("description").str()),
		Limit:       50,
		PresetArg:   "preset",
	}
	if o.GoName == "" {
		o.GoName = GoName(o.Name)
	}
	if o.Category == "" {
		o.Category = defaultCategory(o.Kind)
	}
	switch o.Kind {
	case opkind.Get, opkind.List, opkind.Aggregate:
		o.ReadOnly, o.Idempotent = true, true
	case opkind.Create:
	case opkind.Update, opkind.UpdateWhere, opkind.Preset, opkind.Delete:
		o.Destructive, o.Idempotent = true, true
	}
	b.ops[o.Name] = o
	b.opNode[o] = n
	b.d.Operations = append(b.d.Operations, o)
	allowed := append(slices.Clone(commonOpKeys), kindKeys[o.Kind]...)
	if o.Kind == opkind.Workflow {
		allowed = slices.DeleteFunc(allowed, func(k string) bool { return k == "entity" }) // it acts through its steps
	}
	for _, key := range n.mapKeys() {
		if !slices.Contains(allowed, key.str()) {
			b.errorf(key, "found key %q on a %s operation; expected only %s", key.str(), o.Kind, strings.Join(allowed, ", "))
		}
	}
	if o.Kind == opkind.Workflow {
		b.workflowArgs(o, n) // its steps resolve once every operation is known
		return
	}
	e := b.entities[n.get("entity").str()]
	if e == nil {
		b.errorf(n.get("entity"), "found entity %q, which is not declared; expected one of %s", n.get("entity").str(), strings.Join(b.entityNames(), ", "))
		return
	}
	o.Entity = e
	if v := n.get("limit"); v != nil {
		o.Limit = int(toFloat(v.scalar))
	}
	if v := n.get("argument"); v != nil {
		o.PresetArg = v.str()
	}
	o.Merge = n.get("merge") != nil && n.get("merge").scalar == true
	o.Functions = n.get("functions").strs()

	o.Filters = b.fieldList(o, n.get("filters"), "an equality filter", func(f *Field) bool { return f.Type.scalar() })
	o.Ranges = b.fieldList(o, n.get("ranges"), "a range filter", func(f *Field) bool { return f.Type.ordered() })
	o.GroupBy = b.fieldList(o, n.get("group_by"), "a group-by field", func(f *Field) bool { return f.Type.scalar() })
	fieldsOK := func(*Field) bool { return true }
	if o.Kind == opkind.Aggregate {
		fieldsOK = func(f *Field) bool { return f.Type.numeric() }
	}
	o.Fields = b.fieldList(o, n.get("fields"), "a field of this operation", fieldsOK)
	o.Where = b.assigns(o, n.get("where"))
	o.Set = b.assigns(o, n.get("set"))

	// An update_where may also require a field it sets, so that a model
	// must give it (acknowledge_alarms needs acknowledged_by).
	requirable, among := o.Filters, "filters"
	if o.Kind == opkind.UpdateWhere {
		requirable, among = append(slices.Clone(o.Filters), o.Fields...), "filters or fields"
	}
	required := map[string]bool{}
	for _, r := range n.get("required").list() {
		if b.fieldOf(e, r.str()) == nil || !slices.ContainsFunc(requirable, func(f *Field) bool { return f.Name == r.str() }) {
			b.errorf(r, "found required %q, which is not among this operation's %s; expected one of %s", r.str(), among, names(requirable))
		}
		required[r.str()] = true
	}
	for _, r := range n.get("clear").list() {
		i := slices.IndexFunc(o.Fields, func(f *Field) bool { return f.Name == r.str() })
		if i < 0 || !o.Fields[i].Optional {
			b.errorf(r, "found clear %q, which is not an optional field among this operation's fields; expected one of %s", r.str(), names(slices.DeleteFunc(slices.Clone(o.Fields), func(f *Field) bool { return !f.Optional })))
			continue
		}
		o.Clear = append(o.Clear, o.Fields[i])
	}
	optional := map[string]bool{}
	for _, r := range n.get("optional").list() {
		if !slices.ContainsFunc(o.Fields, func(f *Field) bool { return f.Name == r.str() }) {
			b.errorf(r, "found optional %q, which is not among this operation's fields; expected one of %s", r.str(), names(o.Fields))
		}
		optional[r.str()] = true
	}
	if ps := n.get("presets"); ps != nil {
		for i, pk := range ps.mapKeys() {
			pn := ps.vals[i]
			p := &Preset{Name: pk.str(), Description: strings.TrimSpace(pn.get("description").str())}
			for _, sn := range pn.get("apply").list() {
				p.Steps = append(p.Steps, PresetStep{Where: b.assigns(o, sn.get("where")), Set: b.assigns(o, sn.get("set"))})
			}
			o.Presets = append(o.Presets, p)
		}
	}
	switch o.Kind {
	case opkind.UpdateWhere:
		if len(o.Set) == 0 && len(o.Fields) == 0 {
			b.errorf(n, "found an update_where that changes nothing; expected set, fields or both")
		}
	case opkind.Aggregate:
		if len(o.Fields) == 0 && slices.ContainsFunc(o.Functions, func(f string) bool { return f != "count" }) {
			b.errorf(n.get("functions"), "found functions other than count but no fields; expected fields listing the numeric fields to aggregate")
		}
	}
	b.args(o, required, optional)
}

func names(fs []*Field) string {
	if len(fs) == 0 {
		return "(none)"
	}
	return strings.Join(fieldNameList(fs), ", ")
}

// fieldList resolves a list of field names of the operation's entity.
func (b *builder) fieldList(o *Operation, n *node, role string, ok func(*Field) bool) []*Field {
	var out []*Field
	for _, it := range n.list() {
		f := b.fieldOf(o.Entity, it.str())
		switch {
		case f == nil:
			b.errorf(it, "found %q, which is not a field of entity %q; expected one of %s", it.str(), o.Entity.Name, b.fieldNames(o.Entity, ok))
		case f.broken: // its declaration failed the schema, which says so
			out = append(out, f)
		case !ok(f):
			b.errorf(it, "found %s field %q, which cannot be %s; expected one of %s", f.Type, f.Name, role, b.fieldNames(o.Entity, ok))
		default:
			out = append(out, f)
		}
	}
	return out
}

// assigns resolves a where or set mapping of fixed field values.
func (b *builder) assigns(o *Operation, n *node) []Assign {
	var out []Assign
	if n == nil {
		return nil
	}
	for i, k := range n.mapKeys() {
		f := b.fieldOf(o.Entity, k.str())
		if f == nil || !f.Type.scalar() {
			b.errorf(k, "found %q, which is not a scalar field of entity %q; expected one of %s", k.str(), o.Entity.Name, b.fieldNames(o.Entity, func(f *Field) bool { return f.Type.scalar() }))
			continue
		}
		if v, ok := b.value(f, n.vals[i]); ok {
			out = append(out, Assign{Field: f, Value: v})
		}
	}
	return out
}

// args builds the operation's arguments, each with the schema the model
// sees and the description that states its constraints in words.
func (b *builder) args(o *Operation, required, optional map[string]bool) {
	e := o.Entity
	for _, f := range append(append(slices.Clone(o.Fields), o.Filters...), o.Ranges...) {
		if f.Type == TReference && f.Ref == nil {
			return // the dangling reference is reported already
		}
	}
	add := func(a *Arg) {
		for _, x := range o.Args {
			if x.Name == a.Name {
				b.errorf(b.opNode[o], "found two arguments named %q; expected distinct argument names (rename a field or filter)", a.Name)
				return
			}
		}
		if a.GoName == "" {
			a.GoName = GoName(a.Name)
		}
		o.Args = append(o.Args, a)
	}
	idArg := func(verb string) {
		add(&Arg{
			Name: e.Name + "_id", Role: RoleID, Required: true, Entity: e, JSONType: "string", GoType: GoType{Kind: "string"},
			Hint:   fmt.Sprintf("%s ID like %s", e.Name, e.exampleID()),
			Schema: Object{{"type", "string"}, {"description", fmt.Sprintf("ID of the %s to %s, like %s.", words(e.Name), verb, e.exampleID())}, {"pattern", e.idRegexp()}},
		})
	}
	filters := func() {
		for _, f := range o.Filters {
			add(fieldArg(f, f.Name, RoleFilter, required[f.Name], fmt.Sprintf("Only %s whose %s is this value.", words(e.Plural), words(f.Name))))
		}
	}
	switch o.Kind {
	case opkind.Get:
		idArg("get")
	case opkind.Delete:
		idArg("delete")
	case opkind.List:
		filters()
		for _, f := range o.Ranges {
			add(fieldArg(f, "min_"+f.Name, RoleMin, false, fmt.Sprintf("Only %s whose %s is at least this.", words(e.Plural), words(f.Name))))
			add(fieldArg(f, "max_"+f.Name, RoleMax, false, fmt.Sprintf("Only %s whose %s is at most this.", words(e.Plural), words(f.Name))))
		}
		add(&Arg{
			Name: "limit", Role: RoleLimit, JSONType: "integer", GoType: GoType{Kind: "int"},
			Hint:   fmt.Sprintf("integer from 1 to %d", o.Limit),
			Schema: Object{{"type", "integer"}, {"description", fmt.Sprintf("Return at most this many %s (1 to %d; default %d).", words(e.Plural), o.Limit, o.Limit)}, {"minimum", 1}, {"maximum", o.Limit}},
		})
	case opkind.Create:
		for _, f := range o.Fields {
			req := !optional[f.Name] && f.Default == nil && !f.Optional
			add(withDefault(fieldArg(f, f.Name, RoleValue, req, "")))
		}
	case opkind.Update:
		idArg("change")
		for _, f := range o.Fields {
			lead := "New value; left out: unchanged."
			if o.Merge && f.Type == TObject {
				lead = fmt.Sprintf("Keys to change: each given key is merged into the stored %s (null removes the key) and the other keys are kept; left out: unchanged.", words(f.Name))
			}
			add(fieldArg(f, f.Name, RoleValue, false, lead))
		}
		for _, f := range o.Clear {
			add(&Arg{Name: "clear_" + f.Name, Role: RoleClear, Field: f, JSONType: "boolean", GoType: GoType{Kind: "bool"},
				Schema: Object{{"type", "boolean"}, {"description", fmt.Sprintf("true removes the %s of the %s (it may have none); not with %s.", words(f.Name), words(e.Name), f.Name)}}})
		}
	case opkind.UpdateWhere:
		filters()
		for _, f := range o.Fields {
			lead := fmt.Sprintf("New value for every matching %s; left out: unchanged.", e.Name)
			if required[f.Name] {
				lead = fmt.Sprintf("New value for every matching %s.", e.Name)
			}
			add(fieldArg(f, f.Name, RoleValue, required[f.Name], lead))
		}
	case opkind.Aggregate:
		if len(o.Functions) > 1 {
			add(&Arg{Name: "function", Role: RoleFunction, Required: true, JSONType: "string", GoType: GoType{Kind: "string"}, Enum: o.Functions,
				Hint:   "one of " + strings.Join(o.Functions, ", "),
				Schema: Object{{"type", "string"}, {"description", "Statistic to compute: " + strings.Join(o.Functions, ", ") + "."}, {"enum", o.Functions}}})
		}
		if len(o.Fields) > 1 {
			fs := fieldNameList(o.Fields)
			var desc []string
			for _, f := range o.Fields {
				d := strings.TrimSuffix(f.Description, ".")
				if f.Unit != "" && !strings.Contains(d, f.Unit) {
					d += unitWords(f)
				}
				desc = append(desc, fmt.Sprintf("%s (%s)", f.Name, d))
			}
			add(&Arg{Name: "field", Role: RoleAggField, Required: true, JSONType: "string", GoType: GoType{Kind: "string"}, Enum: fs,
				Hint:   "one of " + strings.Join(fs, ", "),
				Schema: Object{{"type", "string"}, {"description", "Field to aggregate: " + strings.Join(desc, "; ") + "."}, {"enum", fs}}})
		}
		if len(o.GroupBy) > 0 {
			gs := fieldNameList(o.GroupBy)
			add(&Arg{Name: "group_by", Role: RoleGroupBy, JSONType: "string", GoType: GoType{Kind: "string"}, Enum: gs,
				Hint:   "one of " + strings.Join(gs, ", "),
				Schema: Object{{"type", "string"}, {"description", "Give one value per " + strings.Join(gs, " or ") + " instead of one overall value."}, {"enum", gs}}})
		}
		filters()
	case opkind.Preset:
		filters()
		ps := make([]string, len(o.Presets))
		var desc []string
		for i, p := range o.Presets {
			ps[i] = p.Name
			desc = append(desc, fmt.Sprintf("%s (%s)", p.Name, p.Description))
		}
		add(&Arg{Name: o.PresetArg, Role: RolePreset, Required: true, JSONType: "string", GoType: GoType{Kind: "string"}, Enum: ps,
			Hint:   "one of " + strings.Join(ps, ", "),
			Schema: Object{{"type", "string"}, {"description", fmt.Sprintf("%s to apply: %s.", capitalize(words(o.PresetArg)), strings.Join(desc, "; "))}, {"enum", ps}}})
	}
}

func fieldNameList(fs []*Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// fieldArg builds an argument that carries a value of field f.
func fieldArg(f *Field, name string, role ArgRole, required bool, lead string) *Arg {
	a := &Arg{Name: name, Role: role, Field: f, Required: required, Enum: f.Values}
	a.Schema, a.JSONType, a.GoType = fieldSchema(f)
	desc := strings.TrimSpace(strings.Join(nonEmpty(lead, f.Description, constraintWords(f)), " "))
	if desc == "" {
		desc = capitalize(words(f.Name)) + "."
	}
	a.Schema = append(Object{{"type", a.Schema[0].V}, {"description", desc}}, a.Schema[1:]...)
	a.Hint = hint(f)
	if f.Type == TReference {
		a.Entity = f.Ref
	}
	return a
}

// withDefault publishes the value a create stores when the argument is
// left out, as the schema's default and in words, since a model cannot
// see the spec. The runtime still applies the default itself.
func withDefault(a *Arg) *Arg {
	f := a.Field
	if f.Default == nil {
		return a
	}
	words := defaultWords(f)
	if f.DefaultNow {
		words = "the domain's current time, " + words
	}
	desc, _ := a.Schema.get("description")
	a.Schema = a.Schema.Set("description", desc.(string)+" Default: "+words+".").Set("default", f.Default)
	return a
}

// defaultWords writes a default value as the description shows it.
func defaultWords(f *Field) string {
	switch v := f.Default.(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(num(v))
	case map[string]any, []any:
		return mustJSON(v)
	default:
		return fmt.Sprint(v)
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			if !strings.HasSuffix(s, ".") {
				s += "."
			}
			out = append(out, s)
		}
	}
	return out
}

// fieldSchema returns a field's JSON Schema (type first, no description),
// its JSON type and its Go type.
// FieldGoType is the Go type of an entity field's values.
func FieldGoType(f *Field) GoType {
	_, _, g := fieldSchema(f)
	return g
}

func fieldSchema(f *Field) (Object, string, GoType) {
	switch f.Type {
	case TInteger, TNumber:
		s := Object{{"type", string(f.Type)}}
		if f.Min != nil {
			s = append(s, kv{"minimum", num(*f.Min)})
		}
		if f.Max != nil {
			s = append(s, kv{"maximum", num(*f.Max)})
		}
		if f.Type == TInteger {
			return s, "integer", GoType{Kind: "int"}
		}
		return s, "number", GoType{Kind: "float64"}
	case TBoolean:
		return Object{{"type", "boolean"}}, "boolean", GoType{Kind: "bool"}
	case TEnum:
		g := GoType{Kind: "string"}
		if f.Enum != nil {
			g.Named = f.Enum.GoName
		}
		return Object{{"type", "string"}, {"enum", f.Values}}, "string", g
	case TTimestamp:
		return Object{{"type", "string"}, {"format", "date-time"}}, "string", GoType{Kind: "string"}
	case TReference:
		return Object{{"type", "string"}, {"pattern", f.Ref.idRegexp()}}, "string", GoType{Kind: "string"}
	case TObject:
		return Object{{"type", "object"}}, "object", GoType{Kind: "map"}
	case TArray:
		is, _, ig := fieldSchema(f.Items)
		return Object{{"type", "array"}, {"items", is}}, "array", GoType{Kind: "slice", Elem: &ig}
	default:
		s := Object{{"type", "string"}}
		if f.MaxLength > 0 {
			s = append(s, kv{"maxLength", f.MaxLength})
		}
		if f.Pattern != "" {
			s = append(s, kv{"pattern", f.Pattern})
		}
		return s, "string", GoType{Kind: "string"}
	}
}

// num keeps integral bounds integral in the emitted schema (100, not 100.0).
func num(x float64) any {
	if x == float64(int64(x)) {
		return int64(x)
	}
	return x
}

// constraintWords states in words what a schema keyword says, because
// Ollama drops minimum, maximum, pattern and format before a model sees
// the schema.
func constraintWords(f *Field) string {
	switch f.Type {
	case TInteger, TNumber:
		w := "Integer"
		if f.Type == TNumber {
			w = "Number"
		}
		r := strings.TrimSpace(rangeWords(f))
		if r == "" && f.Unit == "" {
			return ""
		}
		if r != "" {
			w += " " + r
		}
		if f.Unit != "" {
			w += ", in " + f.Unit
		}
		return w + "."
	case TTimestamp:
		return "RFC 3339 UTC timestamp, like " + f.Example + "."
	case TReference:
		return fmt.Sprintf("ID of %s %s, like %s.", article(f.Ref.Name), f.Ref.Name, f.Ref.exampleID())
	case TString:
		var w []string
		if f.MaxLength > 0 {
			w = append(w, fmt.Sprintf("At most %d characters.", f.MaxLength))
		}
		if f.Pattern != "" {
			w = append(w, fmt.Sprintf("Must match the pattern %s.", f.Pattern))
		}
		return strings.Join(w, " ")
	case TArray:
		if iw := constraintWords(f.Items); iw != "" {
			return "Each item: " + iw
		}
	}
	return ""
}

func unitWords(f *Field) string {
	if f.Unit == "" {
		return ""
	}
	return ", in " + f.Unit
}

// hint is the few words an error message adds about what a value must be.
func hint(f *Field) string {
	switch f.Type {
	case TReference:
		return fmt.Sprintf("%s ID like %s", f.Ref.Name, f.Ref.exampleID())
	case TEnum:
		return "one of " + strings.Join(f.Values, ", ")
	case TTimestamp:
		return "RFC 3339 timestamp like " + f.Example
	case TInteger, TNumber:
		return strings.TrimSpace(string(f.Type) + rangeWords(f) + unitWords(f))
	}
	return string(f.Type)
}

func words(snake string) string { return strings.ReplaceAll(snake, "_", " ") }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
