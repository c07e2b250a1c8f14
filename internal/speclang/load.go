package speclang

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaFile is the name of the domain spec schema at the root of a specs
// folder.
const SchemaFile = "domain.schema.json"

// Spec is every domain of a specs folder, sorted by name.
type Spec struct {
	Domains []*Domain
	// Warnings are deliberate deviations worth a look, such as a level
	// with more tools than its definition.
	Warnings ErrorList
	// failed holds the folders of domains that did not load, whose
	// scenario tables can be checked only against their schema.
	failed map[string]bool
}

// Load reads, validates and resolves every <domain>/domain.yaml under
// fsys, with the schema at its root. The error, if any, is an ErrorList
// holding every problem of every file.
func Load(fsys fs.FS) (*Spec, error) {
	spec, errs, err := loadDomains(fsys)
	if err != nil {
		return nil, err
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return spec, nil
}

// loadDomains loads every domain spec it can: spec holds the domains that
// loaded, failed the folders of those that did not, and errs every
// problem of every file. err is a failure to read the folder itself.
func loadDomains(fsys fs.FS) (spec *Spec, errs ErrorList, err error) {
	schemaData, err := fs.ReadFile(fsys, SchemaFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read spec schema: %w", err)
	}
	sch, err := schemacheck.Compile("granite:"+SchemaFile, string(schemaData))
	if err != nil {
		return nil, nil, err
	}
	files, err := fs.Glob(fsys, "*/domain.yaml")
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no domain specs: expected <domain>/domain.yaml files")
	}
	sort.Strings(files)
	spec = &Spec{failed: map[string]bool{}}
	for _, f := range files {
		data, err := readYAMLFS(fsys, f)
		if err != nil {
			return nil, nil, err
		}
		d, derrs, warns := LoadDomain(f, data, sch)
		errs = append(errs, derrs...)
		spec.Warnings = append(spec.Warnings, warns...)
		if d == nil {
			spec.failed[path.Dir(f)] = true
			continue
		}
		if dir := path.Dir(f); d.Name != dir {
			errs = append(errs, &Error{Pos: Pos{File: f, Line: 1, Col: 1}, Path: "$.domain",
				Msg: fmt.Sprintf("found domain %q in folder %q; expected the folder to be named after the domain", d.Name, dir)})
		}
		spec.Domains = append(spec.Domains, d)
	}
	return spec, errs, nil
}

// LoadDomain parses, validates and resolves one domain spec. It returns
// every error of the file at once: a schema violation skips only the
// checks of the part it is in, so the file's other errors still show.
// The domain is nil when there were any.
func LoadDomain(file string, data []byte, sch *jsonschema.Schema) (*Domain, ErrorList, ErrorList) {
	root, errs := parseYAML(file, data)
	if len(errs) > 0 {
		return nil, errs, nil
	}
	serrs := validateNode(sch, root)
	b := &builder{
		file: file, root: root, schemaBroken: len(serrs) > 0, broken: parts(serrs),
		entities: map[string]*Entity{}, ops: map[string]*Operation{},
		seedIDs: map[*Entity]map[string]bool{}, fieldDecl: map[*Field]*node{},
		entityNode: map[*Entity]*node{}, opNode: map[*Operation]*node{}, enumDecl: map[*Enum]*Field{},
		stepNode: map[*Step]*node{},
	}
	d := b.build()
	sum := sha256.Sum256(data)
	d.SHA256 = hex.EncodeToString(sum[:])
	errs = append(serrs, outside(b.errs, serrs)...)
	warns := outside(b.warns, serrs)
	errs.sort()
	warns.sort()
	if len(errs) > 0 {
		return nil, errs, warns
	}
	return d, nil, warns
}

// outside returns the errors of l that are not within a part that a
// schema error in serrs is in: a check there ran on a value of the wrong
// shape, so what it says follows from the schema error.
func outside(l, serrs ErrorList) ErrorList {
	broken := parts(serrs)
	var out ErrorList
	for _, e := range l {
		if !slices.ContainsFunc(broken, func(p string) bool { return within(e.Path, p) }) {
			out = append(out, e)
		}
	}
	return out
}

// part matches the declaration a path is in: one field, one seed row, one
// operation or one scenario. A schema error anywhere in it
// skips the checks of all of it, and of every use of a broken field.
var part = regexp.MustCompile(`^\$\.(entities\.[^.\[]+\.(fields\.[^.\[]+|seed\[\d+\])|operations\.[^.\[]+|scenarios\[\d+\])`)

// parts returns the declarations the schema errors are in; an error outside
// any (at the root, an entity's own keys, levels) stands for its own path.
func parts(serrs ErrorList) []string {
	var out []string
	for _, e := range serrs {
		if m := part.FindString(e.Path); m != "" {
			out = append(out, m)
		} else {
			out = append(out, e.Path)
		}
	}
	return out
}

// within says whether path p is the part or lies inside it. The root "$"
// contains only itself: a missing top-level key skips no other check.
func within(p, part string) bool {
	if p == part || part == "$" {
		return p == part
	}
	return strings.HasPrefix(p, part+".") || strings.HasPrefix(p, part+"[")
}

// isBroken says whether n lies in a part of the file that failed its
// schema.
func (b *builder) isBroken(n *node) bool {
	return n != nil && slices.ContainsFunc(b.broken, func(p string) bool { return within(n.path, p) })
}

type builder struct {
	file string
	root *node
	// schemaBroken says the file failed its schema: the checks still run,
	// but nothing is derived (tool schemas) from a file of the wrong shape.
	schemaBroken bool
	// broken holds the paths of the parts with schema errors (see parts).
	broken   []string
	d        *Domain
	errs     ErrorList
	warns    ErrorList
	entities map[string]*Entity
	ops      map[string]*Operation
	seedIDs  map[*Entity]map[string]bool
	// entityNode, fieldDecl and opNode remember where things were declared.
	entityNode map[*Entity]*node
	fieldDecl  map[*Field]*node
	// enumDecl is the entity field whose declaration an enum type comes
	// from (for array items, the array field).
	enumDecl map[*Enum]*Field
	opNode   map[*Operation]*node
	stepNode map[*Step]*node
}

func (b *builder) errorf(n *node, format string, args ...any) {
	e := &Error{Pos: Pos{File: b.file, Line: 1, Col: 1}, Path: "$", Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Pos, e.Path = n.pos, n.path
	}
	b.errs = append(b.errs, e)
}

func (b *builder) warnf(n *node, format string, args ...any) {
	w := &Error{Pos: Pos{File: b.file, Line: 1, Col: 1}, Path: "$", Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		w.Pos, w.Path = n.pos, n.path
	}
	b.warns = append(b.warns, w)
}

func (b *builder) build() *Domain {
	r := b.root
	b.d = &Domain{
		Name:        r.get("domain").str(),
		Title:       r.get("title").str(),
		Description: strings.TrimSpace(r.get("description").str()),
		Now:         r.get("now").str(),
		File:        b.file,
	}
	ents := r.get("entities")
	for i, k := range ents.mapKeys() {
		b.entity(k, ents.vals[i])
	}
	for _, e := range b.d.Entities {
		b.resolveFields(e)
	}
	for _, e := range b.d.Entities {
		b.enums(e)
	}
	for _, e := range b.d.Entities {
		b.seedIndex(e)
	}
	for _, e := range b.d.Entities {
		b.seedRows(e)
	}
	ops := r.get("operations")
	for i, k := range ops.mapKeys() {
		b.operation(k, ops.vals[i])
	}
	b.workflows()
	b.levels(r.get("levels"))
	b.goNames()
	if len(b.errs) == 0 && !b.schemaBroken {
		b.schemas()
	}
	return b.d
}

// --- entities

func (b *builder) entity(k, n *node) {
	e := &Entity{
		Name:        k.str(),
		Plural:      n.get("plural").str(),
		GoName:      n.get("go_name").str(),
		Description: strings.TrimSpace(n.get("description").str()),
		IDPrefix:    n.get("id_prefix").str(),
		IDDigits:    3,
	}
	if e.Plural == "" {
		e.Plural = plural(e.Name)
	}
	if e.GoName == "" {
		e.GoName = GoName(e.Name)
	}
	if dn := n.get("id_digits"); dn != nil {
		// The schema allows 3.0 as an integer. A value it refuses (three,
		// 0, 12) leaves IDDigits 0: the seed IDs' shape is then unknown, and
		// the schema's one error is the only one, not one per seed row.
		if d := toFloat(dn.scalar); d >= 1 && d <= 9 && d == float64(int(d)) {
			e.IDDigits = int(d)
		} else {
			e.IDDigits = 0
		}
	}
	for _, o := range b.d.Entities {
		if o.IDPrefix == e.IDPrefix {
			b.errorf(n.get("id_prefix"), "found ID prefix %q, already used by entity %q; expected a prefix unique in the domain", e.IDPrefix, o.Name)
		}
	}
	fields := n.get("fields")
	for i, fk := range fields.mapKeys() {
		if fk.str() == "id" {
			b.errorf(fk, "found a field named \"id\"; expected it left out: every entity has an implicit id field")
			continue
		}
		e.Fields = append(e.Fields, b.field(fk.str(), fields.vals[i]))
	}
	b.entities[e.Name] = e
	b.entityNode[e] = n
	b.d.Entities = append(b.d.Entities, e)
}

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ay") && !strings.HasSuffix(s, "ey"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	default:
		return s + "s"
	}
}

func (b *builder) field(name string, n *node) *Field {
	f := &Field{
		broken:      b.isBroken(n),
		Name:        name,
		GoName:      n.get("go_name").str(),
		Description: strings.TrimSpace(n.get("description").str()),
		Type:        FieldType(n.get("type").str()),
		Unit:        n.get("unit").str(),
		Values:      n.get("values").strs(),
		Pattern:     n.get("pattern").str(),
		Optional:    n.get("optional") != nil && n.get("optional").scalar == true,
	}
	if f.GoName == "" {
		f.GoName = GoName(name)
	}
	if f.Type == TTimestamp {
		f.Example = b.d.Now
		if f.Example == "" {
			f.Example = defaultNowExample
		}
	}
	if v := n.get("min"); v != nil {
		x := toFloat(v.scalar)
		f.Min = &x
	}
	if v := n.get("max"); v != nil {
		x := toFloat(v.scalar)
		f.Max = &x
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		b.errorf(n.get("min"), "found min %v above max %v; expected min <= max", *f.Min, *f.Max)
	}
	if v := n.get("max_length"); v != nil {
		f.MaxLength = int(toFloat(v.scalar))
	}
	if f.Pattern != "" {
		if _, err := regexp.Compile(f.Pattern); err != nil {
			b.errorf(n.get("pattern"), "found pattern %q that does not compile (%v); expected a regular expression", f.Pattern, err)
		}
	}
	if it := n.get("items"); it != nil {
		f.Items = b.field(name+"_item", it)
		if !f.Items.Type.scalar() {
			b.errorf(it.get("type"), "found array items of type %s; expected a scalar type (arrays of objects or arrays are not supported)", f.Items.Type)
		}
	}
	b.fieldDecl[f] = n
	return f
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// enums gives each enum field of e, and each array field of enum items, its
// Go type: the entity's Go name and the field's (LampColor,
// ScheduleDaysItem), with a constant per value (LampColorWarm).
func (b *builder) enums(e *Entity) {
	for _, f := range e.Fields {
		for _, ef := range []*Field{f, f.Items} {
			if ef == nil || ef.Type != TEnum || ef.broken || f.broken {
				continue
			}
			en := &Enum{GoName: e.GoName + ef.GoName, Field: ef}
			for _, v := range ef.Values {
				en.Values = append(en.Values, EnumValue{Value: v, GoName: en.GoName + valueGoName(v)})
			}
			ef.Enum = en
			b.d.Enums = append(b.d.Enums, en)
			b.enumDecl[en] = f
		}
	}
}

func (b *builder) resolveFields(e *Entity) {
	var resolve func(f *Field)
	resolve = func(f *Field) {
		n := b.fieldDecl[f]
		if ref := n.get("ref"); ref != nil {
			if f.Type != TReference {
				b.errorf(ref, "found ref on a %s field; expected ref only on type reference", f.Type)
			} else if f.Ref = b.entities[ref.str()]; f.Ref == nil {
				b.errorf(ref, "found reference to entity %q, which is not declared; expected one of %s", ref.str(), strings.Join(b.entityNames(), ", "))
			}
		}
		if f.Type != TEnum && n.get("values") != nil {
			b.errorf(n.get("values"), "found values on a %s field; expected values only on type enum", f.Type)
		}
		if (f.Min != nil || f.Max != nil) && !f.Type.numeric() {
			b.errorf(n, "found min/max on a %s field; expected them only on integer or number fields", f.Type)
		}
		if f.Items != nil {
			resolve(f.Items)
		}
	}
	for _, f := range e.Fields {
		resolve(f)
	}
	// Defaults are checked once references resolve.
	for _, f := range e.Fields {
		n := b.fieldDecl[f]
		if dn := n.get("default"); dn != nil {
			if dn.scalar == "now" && f.Type == TTimestamp {
				if b.d.Now == "" {
					b.errorf(dn, "found default \"now\" but the domain has no \"now\" clock; expected a top-level now: <RFC 3339 timestamp>")
					continue
				}
				f.Default, f.DefaultNow = b.d.Now, true
				continue
			}
			if f.Type == TReference {
				b.errorf(dn, "found a default on a reference field; expected references to be given explicitly")
				continue
			}
			if v, ok := b.value(f, dn); ok {
				f.Default = v
			}
		}
	}
}

func (b *builder) entityNames() []string {
	names := make([]string, len(b.d.Entities))
	for i, e := range b.d.Entities {
		names[i] = e.Name
	}
	return names
}

func (b *builder) fieldOf(e *Entity, name string) *Field {
	for _, f := range e.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (b *builder) fieldNames(e *Entity, ok func(*Field) bool) string {
	var names []string
	for _, f := range e.Fields {
		if ok(f) {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// --- seed rows

func (e *Entity) idRegexp() string { return fmt.Sprintf(`^%s[0-9]{%d,}$`, e.IDPrefix, e.IDDigits) }

// exampleID is an ID of the entity's shape, for descriptions.
func (e *Entity) exampleID() string { return fmt.Sprintf("%s%0*d", e.IDPrefix, e.IDDigits, 1) }

func (b *builder) seedIndex(e *Entity) {
	ids := map[string]bool{}
	// Seed IDs have exactly id_digits digits; IDs allocated later may grow.
	re := regexp.MustCompile(fmt.Sprintf(`^%s[0-9]{%d}$`, e.IDPrefix, e.IDDigits))
	seed := b.entityNode[e].get("seed")
	for _, row := range seed.list() {
		idn := row.get("id")
		id := idn.str()
		if e.IDDigits > 0 && !re.MatchString(id) {
			b.errorf(idn, "found id %q; expected %s followed by %d digits, like %s", id, e.IDPrefix, e.IDDigits, e.exampleID())
		}
		if ids[id] {
			b.errorf(idn, "found id %q a second time; expected unique seed ids", id)
		}
		ids[id] = true
	}
	b.seedIDs[e] = ids
}

func (b *builder) seedRows(e *Entity) {
	seed := b.entityNode[e].get("seed")
	for _, rn := range seed.list() {
		row := &Row{ID: rn.get("id").str(), Values: map[string]any{}}
		invalid := map[string]bool{} // reported already: not "missing" too
		given := map[string]bool{}   // given as null: unset, not "missing"
		for i, k := range rn.mapKeys() {
			if k.str() == "id" {
				continue
			}
			f := b.fieldOf(e, k.str())
			if f == nil {
				b.errorf(k, "found field %q, which entity %q does not have; expected one of %s", k.str(), e.Name, b.fieldNames(e, func(*Field) bool { return true }))
				continue
			}
			switch v, ok := b.value(f, rn.vals[i]); {
			case !ok:
				invalid[f.Name] = true
			case v == nil:
				given[f.Name] = true // unset on purpose: the row has no value
			default:
				row.Values[f.Name] = v
			}
		}
		for _, f := range e.Fields {
			if _, ok := row.Values[f.Name]; ok || invalid[f.Name] || given[f.Name] {
				continue
			}
			switch {
			case f.Default != nil:
				row.Values[f.Name] = f.Default
			case f.Optional:
				// Unset: the row has no value, which no filter matches.
			default:
				b.errorf(rn, "seed row %s lacks field %q; expected %s %s value (or declare the field optional or with a default)", row.ID, f.Name, article(string(f.Type)), f.Type)
			}
		}
		e.Seed = append(e.Seed, row)
	}
	// Rows live in ID order in the store; sort the seed the same way so
	// the generated literal reads in that order.
	sort.SliceStable(e.Seed, func(i, j int) bool { return e.Seed[i].ID < e.Seed[j].ID })
}

// isUnset reports whether a spec value says "no value": null, or the
// mapping {unset: true} that state conditions use.
func isUnset(n *node) bool {
	if n.isMap {
		u := n.get("unset")
		return len(n.keys) == 1 && u != nil && u.scalar == true
	}
	return !n.isSeq && n.scalar == nil
}

// ZeroValue is the value a field that is neither given nor optional nor
// defaulted gets: 0, false, "", {} or [].
func ZeroValue(f *Field) any {
	switch f.Type {
	case TInteger:
		return int64(0)
	case TNumber:
		return float64(0)
	case TBoolean:
		return false
	case TObject:
		return map[string]any{}
	case TArray:
		return []any{}
	default:
		return ""
	}
}

// value checks a spec value against a field and returns it normalised.
func (b *builder) value(f *Field, n *node) (any, bool) {
	bad := func(expected string) (any, bool) {
		b.errorf(n, "found %s for field %q; expected %s", n.text(), f.Name, expected)
		return nil, false
	}
	if f.broken {
		return n.toAny(), true // its declaration is reported; its uses say nothing new
	}
	if isUnset(n) {
		if !f.Optional {
			return bad(fmt.Sprintf("a value: only an optional field can be unset, and %q is not optional", f.Name))
		}
		return nil, true
	}
	v := n.scalar
	switch f.Type {
	case TString:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if f.MaxLength > 0 && len([]rune(s)) > f.MaxLength {
			return bad(fmt.Sprintf("at most %d characters", f.MaxLength))
		}
		if f.Pattern != "" {
			if re, err := regexp.Compile(f.Pattern); err == nil && !re.MatchString(s) {
				return bad("a string matching " + f.Pattern)
			}
		}
		return s, true
	case TEnum:
		s, ok := v.(string)
		if !ok || !slices.Contains(f.Values, s) {
			return bad("one of " + strings.Join(f.Values, ", "))
		}
		return s, true
	case TTimestamp:
		s, ok := v.(string)
		if !ok {
			return bad("an RFC 3339 timestamp like " + f.Example)
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return bad("an RFC 3339 timestamp like " + f.Example)
		}
		return s, true
	case TReference:
		if f.Ref == nil {
			return nil, false // the dangling reference is reported where it is declared
		}
		s, ok := v.(string)
		if !ok {
			return bad(fmt.Sprintf("the ID of a %s", refName(f)))
		}
		if !b.seedIDs[f.Ref][s] {
			return bad(fmt.Sprintf("the ID of a seed %s row (%s)", f.Ref.Name, strings.Join(sortedKeys(b.seedIDs[f.Ref]), ", ")))
		}
		return s, true
	case TBoolean:
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
		return v, true
	case TInteger:
		i, ok := v.(int64)
		if !ok {
			return bad("an integer" + rangeWords(f))
		}
		if !inRange(f, float64(i)) {
			return bad("an integer" + rangeWords(f))
		}
		return i, true
	case TNumber:
		var x float64
		switch t := v.(type) {
		case int64:
			x = float64(t)
		case float64:
			x = t
		default:
			return bad("a number" + rangeWords(f))
		}
		if !inRange(f, x) {
			return bad("a number" + rangeWords(f))
		}
		return x, true
	case TObject:
		if !n.isMap {
			return bad("a mapping")
		}
		return n.toAny(), true
	case TArray:
		if !n.isSeq {
			return bad("a sequence")
		}
		out := make([]any, 0, len(n.items))
		for _, it := range n.list() {
			if x, ok := b.value(f.Items, it); ok {
				out = append(out, x)
			}
		}
		return out, true
	}
	return bad("a known field type")
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func refName(f *Field) string {
	if f.Ref == nil {
		return "row"
	}
	return f.Ref.Name
}

func inRange(f *Field, x float64) bool {
	return (f.Min == nil || x >= *f.Min) && (f.Max == nil || x <= *f.Max)
}

func rangeWords(f *Field) string {
	switch {
	case f.Min != nil && f.Max != nil:
		return fmt.Sprintf(" from %v to %v", *f.Min, *f.Max)
	case f.Min != nil:
		return fmt.Sprintf(" of at least %v", *f.Min)
	case f.Max != nil:
		return fmt.Sprintf(" of at most %v", *f.Max)
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > 6 {
		out = append(out[:6], "…")
	}
	return out
}
