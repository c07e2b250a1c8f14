package speclang

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/schemacheck"
)

// ScenarioSchemaFile is the name of the scenario table schema at the root
// of a specs folder.
const ScenarioSchemaFile = "scenario.schema.json"

// Difficulty tiers, as MCP-GRANITE defines them.
const (
	Easy   = "easy"
	Medium = "medium"
	Hard   = "hard"
)

// Tier is the range of gold calls at L4 a difficulty allows.
type Tier struct {
	Name     string
	Min, Max int
	// Reach says how many rows the calls touch, in words.
	Reach string
}

// Tiers lists the difficulty tiers, easiest first.
var Tiers = []Tier{
	{Easy, 1, 2, "one entity"},
	{Medium, 4, 5, "2-3 entities"},
	{Hard, 9, 10, "4 or more entities"},
}

// TierOf returns the tier with the given name.
func TierOf(name string) (Tier, bool) {
	for _, t := range Tiers {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}

// Scenario is one task: a prompt shared by every level, gold calls per
// level and the expectations that decide whether it was done.
type Scenario struct {
	ID         string
	Title      string
	Difficulty string
	Prompt     string
	Pos        Pos
	// Gold holds every level's calls; levels the table leaves out are
	// derived from L4 (Derived says which).
	Gold    map[level.Level][]*Call
	Derived map[level.Level]bool
	State   []*StateCheck
	Answer  []*Fact
	// Contains are the strings the paper's reference implementation asks
	// the answer to contain (expect.contains); without them the scorer
	// derives them from the answer facts.
	Contains []string
}

// Call is one gold tool call.
type Call struct {
	Tool string
	// Op is the operation the call runs.
	Op string
	// Args are the arguments sent, with "action" for a tool that has one.
	Args map[string]any
	// Alternatives are other right values of an argument.
	Alternatives map[string][]any
	// Optional names arguments a right call may leave out.
	Optional []string
	Pos      Pos
}

// JSON returns the call's arguments as a JSON object.
func (c *Call) JSON() []byte { return mustMarshal(c.Args) }

// With returns the call's arguments with one argument replaced, or left
// out when v is nil.
func (c *Call) With(arg string, v any) []byte {
	m := maps.Clone(c.Args)
	if v == nil {
		delete(m, arg)
	} else {
		m[arg] = v
	}
	return mustMarshal(m)
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("generator: marshal YAML value: %v", err)) // YAML scalars, maps and lists always marshal
	}
	return b
}

// StateCheck is a condition on the final store.
type StateCheck struct {
	Entity string
	// Collection is the key of the entity's rows in Store.Snapshot.
	Collection string
	// ID selects one seeded row; otherwise Where selects rows.
	ID string
	// Where and Fields map field names to values; a nil value means the
	// row has no value for that optional field (null or {unset: true}).
	Where map[string]any
	// Count, when not nil, is the exact number of rows Where must match.
	Count  *int
	Absent bool
	// Fields are values every selected row must hold.
	Fields map[string]any
	Pos    Pos
	Path   string
}

// String says the condition in words, for failure messages.
func (c *StateCheck) String() string {
	sel := c.Entity + " " + c.ID
	if c.ID == "" {
		sel = c.Entity + " rows where " + jsonText(c.Where)
	}
	switch {
	case c.Absent:
		return sel + " absent"
	case c.Count != nil:
		sel += fmt.Sprintf(" (exactly %d)", *c.Count)
	}
	if len(c.Fields) > 0 {
		sel += " with " + string(mustMarshal(c.Fields))
	}
	return sel
}

// Fact is a value the final answer must state, about its subject.
type Fact struct {
	Value        any
	Alternatives []any
	What         string
	// About, when the table writes it, says what the value is about; the
	// harness derives the subject of every other fact from the gold's
	// reads.
	About *About
	Pos   Pos
	Path  string
}

// About names a fact's subject: a row's field (ID and Field), a row as a
// member of the set the prompt asks for (ID alone), a group of a
// statistic (Group and Field) or a number of rows (Count).
type About struct {
	Entity string // the entity of ID or Count
	ID     string
	Field  string
	Group  string
	Count  string
	Pos    Pos
}

// Forms returns the value and its alternatives.
func (f *Fact) Forms() []any { return append([]any{f.Value}, f.Alternatives...) }

// LoadAll loads the domain specs and the scenario tables of a specs
// folder.
func LoadAll(fsys fs.FS) (*Spec, error) {
	spec, errs, err := loadDomains(fsys)
	if err != nil {
		return nil, err
	}
	serrs, err := loadScenarios(fsys, spec)
	if err != nil {
		return nil, err
	}
	// Every error of every file at once: a broken domain skips only the
	// checks of its table against it.
	if err := append(errs, serrs...).Err(); err != nil {
		return nil, err
	}
	return spec, nil
}

// LoadScenarios reads every <domain>/scenarios.yaml under fsys, validates
// it against the scenario schema at its root and against the domain's
// tools, and attaches the scenarios to their domains. A domain without a
// table keeps no scenarios and gets a warning.
func LoadScenarios(fsys fs.FS, spec *Spec) error {
	errs, err := loadScenarios(fsys, spec)
	if err != nil {
		return err
	}
	return errs.Err()
}

// loadScenarios is LoadScenarios returning the problems of the tables as a
// list, and only a failure to read as err.
func loadScenarios(fsys fs.FS, spec *Spec) (ErrorList, error) {
	files, err := fs.Glob(fsys, "*/scenarios.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var sch *jsonschema.Schema
	if len(files) > 0 { // a folder of domain specs alone needs no scenario schema
		data, err := fs.ReadFile(fsys, ScenarioSchemaFile)
		if err != nil {
			return nil, fmt.Errorf("read scenario schema: %w", err)
		}
		if sch, err = schemacheck.Compile("granite:"+ScenarioSchemaFile, string(data)); err != nil {
			return nil, err
		}
	}
	var errs ErrorList
	for _, f := range files {
		data, err := readYAMLFS(fsys, f)
		if err != nil {
			return nil, err
		}
		d := spec.Domain(path.Dir(f))
		if d == nil && spec.failed[path.Dir(f)] {
			// The domain has errors of its own: check what does not
			// depend on it.
			if root, perrs := parseYAML(f, data); len(perrs) > 0 {
				errs = append(errs, perrs...)
			} else {
				errs = append(errs, validateNode(sch, root)...)
			}
			continue
		}
		if d == nil {
			errs = append(errs, &Error{Pos: Pos{File: f, Line: 1, Col: 1}, Path: "$",
				Msg: fmt.Sprintf("found scenarios for %q; expected them beside a %s/domain.yaml", path.Dir(f), path.Dir(f))})
			continue
		}
		scs, ferrs := LoadScenarioTable(f, data, sch, d)
		errs = append(errs, ferrs...)
		d.Scenarios = scs
	}
	// A domain without a table is valid, and new while it is written, but
	// granite verify fails on it and granite run plays nothing of it.
	for _, d := range spec.Domains {
		if !slices.Contains(files, d.Name+"/scenarios.yaml") {
			spec.Warnings = append(spec.Warnings, &Error{Pos: Pos{File: d.File, Line: 1, Col: 1},
				Msg: fmt.Sprintf("domain %q has no scenarios; add %s/scenarios.yaml (granite verify fails and granite run plays nothing without them)", d.Name, d.Name)})
		}
	}
	spec.Warnings.sort()
	return errs, nil
}

// Domain returns the domain with the given name, or nil.
func (s *Spec) Domain(name string) *Domain {
	for _, d := range s.Domains {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// LoadScenarioTable parses and checks one scenario table against its
// domain. It returns every error of the file at once: a schema violation
// skips only the checks of the part it is in.
func LoadScenarioTable(file string, data []byte, sch *jsonschema.Schema, d *Domain) ([]*Scenario, ErrorList) {
	root, errs := parseYAML(file, data)
	if len(errs) > 0 {
		return nil, errs
	}
	serrs := validateNode(sch, root)
	l := &scenarioLoader{builder: builder{file: file, root: root, d: d, seedIDs: map[*Entity]map[string]bool{}, schemaBroken: len(serrs) > 0, broken: parts(serrs)}, opSchemas: map[*Operation]*jsonschema.Schema{}}
	for _, e := range d.Entities {
		ids := map[string]bool{}
		for _, r := range e.Seed {
			ids[r.ID] = true
		}
		l.seedIDs[e] = ids
	}
	scs := l.table()
	errs = append(serrs, outside(l.errs, serrs)...)
	errs.sort()
	if len(errs) > 0 {
		return nil, errs
	}
	return scs, nil
}

type scenarioLoader struct {
	builder
	opSchemas map[*Operation]*jsonschema.Schema
}

func (l *scenarioLoader) table() []*Scenario {
	if dn := l.root.get("domain"); dn.str() != l.d.Name {
		l.errorf(dn, "found domain %q; expected %q, the domain of the folder", dn.str(), l.d.Name)
	}
	seen := map[string]bool{}
	var out []*Scenario
	for _, n := range l.root.get("scenarios").list() {
		s := l.scenario(n)
		if seen[s.ID] {
			l.errorf(n.get("id"), "found id %q a second time; expected unique scenario ids", s.ID)
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out
}

func (l *scenarioLoader) scenario(n *node) *Scenario {
	s := &Scenario{
		ID:         n.get("id").str(),
		Title:      n.get("title").str(),
		Difficulty: n.get("difficulty").str(),
		Prompt:     strings.TrimSpace(n.get("prompt").str()),
		Pos:        n.pos,
		Gold:       map[level.Level][]*Call{},
		Derived:    map[level.Level]bool{},
	}
	if !strings.HasPrefix(s.ID, l.d.Name+"-") {
		l.errorf(n.get("id"), "found id %q; expected %s-<three digits>", s.ID, l.d.Name)
	}
	l.prompt(n.get("prompt"), s.Prompt)
	gold := n.get("gold")
	for _, lv := range l.d.Levels {
		calls := gold.get(string(lv.Level))
		if calls == nil {
			s.Gold[lv.Level] = deriveCalls(lv, s.Gold[level.L4])
			s.Derived[lv.Level] = true
			continue
		}
		for _, cn := range calls.list() {
			if c := l.call(lv, cn); c != nil {
				s.Gold[lv.Level] = append(s.Gold[lv.Level], c)
			}
		}
	}
	l4 := gold.get("L4").list()
	if t, ok := TierOf(s.Difficulty); ok && (len(l4) < t.Min || len(l4) > t.Max) {
		l.errorf(gold.get("L4"), "found %d gold calls at L4 for %s %s scenario; expected %d-%d (%s on %s)", len(l4), article(t.Name), t.Name, t.Min, t.Max, t.Name, t.Reach)
	}
	exp := n.get("expect")
	for _, sn := range exp.get("state").list() {
		if c := l.stateCheck(sn); c != nil {
			s.State = append(s.State, c)
		}
	}
	for _, fn := range exp.get("answer").list() {
		s.Answer = append(s.Answer, &Fact{Value: fn.get("value").toAny(), Alternatives: fn.get("alternatives").anys(), What: fn.get("what").str(),
			About: l.about(fn.get("about"), s.Gold[level.L4]), Pos: fn.pos, Path: fn.path})
	}
	for _, cn := range exp.get("contains").list() {
		s.Contains = append(s.Contains, cn.str())
	}
	writes := slices.ContainsFunc(s.Gold[level.L4], func(c *Call) bool { return !l.op(c.Op).ReadOnly })
	switch {
	case writes && exp.get("state") == nil:
		l.errorf(exp, "found gold that changes the store but no state conditions; expected expect.state to say what the task must leave behind")
	case !writes && exp.get("answer") == nil:
		l.errorf(exp, "found gold that only reads but no answer facts; expected expect.answer to say what the answer must state")
	}
	return s
}

// mapKeys returns a mapping's key nodes (nil for a missing node).
func (n *node) mapKeys() []*node {
	if n == nil {
		return nil
	}
	return n.keys
}

// anys converts a sequence node to a slice, nil for a missing node.
func (n *node) anys() []any {
	if n == nil {
		return nil
	}
	out, _ := n.toAny().([]any)
	return out
}

var snakeWord = regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)

// prompt rejects prompts that name tools: the prompt is an operator's
// request, and a tool name in it would tell the model which tool to pick.
func (l *scenarioLoader) prompt(n *node, text string) {
	names := map[string]bool{}
	for _, lv := range l.d.Levels {
		for _, t := range lv.Tools {
			names[t.Name] = true
		}
	}
	for _, o := range l.d.Operations {
		names[o.Name] = true
	}
	for _, w := range snakeWord.FindAllString(text, -1) {
		if names[w] {
			l.errorf(n, "found the tool name %q in the prompt; expected the words an operator would use", w)
		}
	}
}

func (l *scenarioLoader) op(name string) *Operation {
	for _, o := range l.d.Operations {
		if o.Name == name {
			return o
		}
	}
	return &Operation{Name: name}
}

// CallsAt maps L4 calls onto level lv of d, as a scenario's gold at a
// level the table leaves out is derived; nil for a level d lacks.
func (d *Domain) CallsAt(lv level.Level, l4 []*Call) []*Call {
	if lv == level.L4 {
		return l4
	}
	for _, lt := range d.Levels {
		if lt.Level == lv {
			return deriveCalls(lt, l4)
		}
	}
	return nil
}

// deriveCalls maps L4 calls onto a coarser level: each operation is called
// through the level's tool that offers it, with its name as the action.
func deriveCalls(lv *LevelTools, l4 []*Call) []*Call {
	var out []*Call
	for _, c := range l4 {
		for _, t := range lv.Tools {
			if !slices.ContainsFunc(t.Operations, func(o *Operation) bool { return o.Name == c.Op }) {
				continue
			}
			d := *c
			d.Tool = t.Name
			d.Args = maps.Clone(c.Args)
			delete(d.Args, "action")
			if len(t.Operations) > 1 {
				d.Args["action"] = c.Op
			}
			out = append(out, &d)
		}
	}
	return out
}

// call resolves a gold call at a level and checks its arguments against
// the schema of the operation it runs, which is at least as strict as
// the tool's.
func (l *scenarioLoader) call(lv *LevelTools, n *node) *Call {
	tn := n.get("tool")
	var tool *Tool
	for _, t := range lv.Tools {
		if t.Name == tn.str() {
			tool = t
		}
	}
	if tool == nil {
		l.errorf(tn, "found tool %q, which %s does not have; expected one of %s", tn.str(), lv.Level, strings.Join(toolNames(lv), ", "))
		return nil
	}
	argsNode := n.get("arguments")
	args, _ := argsNode.toAny().(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	op := tool.Operations[0]
	if len(tool.Operations) > 1 {
		an := argsNode.get("action")
		op = nil
		for _, o := range tool.Operations {
			if o.Name == an.str() && an != nil {
				op = o
			}
		}
		if op == nil {
			at := n
			if an != nil {
				at = an
			}
			l.errorf(at, "found action %s for tool %q; expected one of %s", an.text(), tool.Name, strings.Join(opNames(tool.Operations), ", "))
			return nil
		}
	}
	c := &Call{Tool: tool.Name, Op: op.Name, Args: args, Alternatives: map[string][]any{}, Optional: n.get("optional").strs(), Pos: n.pos}
	plain := maps.Clone(args)
	delete(plain, "action")
	l.checkArgs(op, argsNode, plain)
	alts := n.get("alternatives")
	for i, k := range alts.mapKeys() {
		name := k.str()
		if _, ok := plain[name]; !ok {
			l.errorf(k, "found alternatives for %q, which the call does not send; expected alternatives for one of its arguments: %s", name, strings.Join(slices.Sorted(maps.Keys(plain)), ", "))
			continue
		}
		for _, vn := range alts.vals[i].list() {
			alt := maps.Clone(plain)
			alt[name] = vn.toAny()
			l.checkValue(op, vn, name, alt)
			c.Alternatives[name] = append(c.Alternatives[name], vn.toAny())
		}
	}
	for _, on := range n.get("optional").list() {
		name := on.str()
		a := opArg(op, name)
		switch {
		case a == nil || plain[name] == nil:
			l.errorf(on, "found optional %q, which the call does not send; expected one of its arguments", name)
		case a.Required:
			l.errorf(on, "found optional %q, which %s requires; expected an argument the tool lets a call leave out", name, op.Name)
		}
	}
	return c
}

func opNames(ops []*Operation) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

func opArg(op *Operation, name string) *Arg {
	for _, a := range op.Args {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// opSchema compiles an operation's argument schema once.
func (l *scenarioLoader) opSchema(op *Operation) *jsonschema.Schema {
	if s, ok := l.opSchemas[op]; ok {
		return s
	}
	s, err := schemacheck.Compile("granite:"+op.Name, op.Schema)
	if err != nil {
		panic(fmt.Sprintf("generator: schema of %s does not compile: %v", op.Name, err)) // built by schemas(), compiled by the runtime tests
	}
	l.opSchemas[op] = s
	return s
}

// checkArgs validates a call's arguments against the operation's schema
// and reports each violation where it is.
func (l *scenarioLoader) checkArgs(op *Operation, argsNode *node, args map[string]any) {
	err := l.opSchema(op).Validate(args)
	if err == nil {
		return
	}
	at := argsNode
	if at == nil {
		at = &node{pos: l.root.pos, path: "$"}
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		l.errorf(at, "arguments of %s: %v", op.Name, err)
		return
	}
	for _, e := range schemacheck.Leaves(verr) {
		for _, pe := range schemaError(e, at) {
			pe.Path = at.path + strings.TrimPrefix(pe.Path, "$")
			pe.Msg = "arguments of " + op.Name + ": " + pe.Msg
			l.errs = append(l.errs, pe)
		}
	}
}

// checkValue validates arguments in which one alternative value replaced
// the gold one, reporting at the alternative.
func (l *scenarioLoader) checkValue(op *Operation, vn *node, name string, args map[string]any) {
	if err := l.opSchema(op).Validate(args); err != nil {
		l.errorf(vn, "found alternative %s for %q, which %s does not accept; expected a value its schema allows (%s)", vn.text(), name, op.Name, firstSentence(err))
	}
}

func firstSentence(err error) string {
	if verr, ok := err.(*jsonschema.ValidationError); ok {
		if leaves := schemacheck.Leaves(verr); len(leaves) > 0 {
			switch k := leaves[0].ErrorKind.(type) {
			case *kind.Type:
				return fmt.Sprintf("%s, not %s", strings.Join(k.Want, " or "), k.Got)
			default:
				if size, bound, ok := schemacheck.SizeBound(k, "key"); ok {
					return fmt.Sprintf("it %s; %s", size, bound)
				}
			}
			return leaves[0].ErrorKind.LocalizedString(printer)
		}
	}
	return err.Error()
}

// stateCheck resolves a state condition against the domain's entities
// and seed rows.
func (l *scenarioLoader) stateCheck(n *node) *StateCheck {
	en := n.get("entity")
	var e *Entity
	for _, x := range l.d.Entities {
		if x.Name == en.str() {
			e = x
		}
	}
	if e == nil {
		l.errorf(en, "found entity %q, which domain %s does not have; expected one of %s", en.str(), l.d.Name, strings.Join(entityNames(l.d), ", "))
		return nil
	}
	c := &StateCheck{Entity: e.Name, Collection: e.Plural, ID: n.get("id").str(), Absent: n.get("absent") != nil, Pos: n.pos, Path: n.path}
	if idn := n.get("id"); idn != nil && !l.seedIDs[e][c.ID] {
		l.errorf(idn, "found id %q, which is not a seeded %s; expected one of %s (match rows the task creates with where)", c.ID, e.Name, idRange(e))
	}
	c.Where = l.fieldValues(e, n.get("where"))
	c.Fields = l.fieldValues(e, n.get("fields"))
	if cn := n.get("count"); cn != nil {
		k := int(toFloat(cn.scalar))
		c.Count = &k
		if c.ID != "" {
			l.errorf(cn, "found count with id; expected count only with where")
		}
	}
	if c.Absent && (c.Fields != nil || c.Count != nil) {
		l.errorf(n.get("absent"), "found absent with fields or count; expected absent alone: an absent row holds no values")
	}
	return c
}

// about reads a fact's subject and checks it against the domain and the
// gold: the row must be seeded, the field one of its entity's, and some
// gold read must report rows of the entity (or group a statistic), for
// the gold's outputs to carry the subject at all.
func (l *scenarioLoader) about(n *node, gold []*Call) *About {
	if n == nil {
		return nil
	}
	a := &About{ID: n.get("id").str(), Field: n.get("field").str(), Group: n.get("group").str(), Count: n.get("count").str(), Pos: n.pos}
	var e *Entity
	switch {
	case a.ID != "" && (a.Group != "" || a.Count != ""), a.Group != "" && a.Count != "":
		l.errorf(n, "found more than one of id, group and count; expected one subject")
		return a
	case a.ID != "":
		for _, x := range l.d.Entities {
			if l.seedIDs[x][a.ID] {
				e = x
			}
		}
		if e == nil {
			l.errorf(n.get("id"), "found id %q, which is no seeded row of domain %s; expected the ID of the row the fact is about", a.ID, l.d.Name)
			return a
		}
	case a.Count != "":
		for _, x := range l.d.Entities {
			if x.Name == a.Count {
				e = x
			}
		}
		if e == nil {
			l.errorf(n.get("count"), "found entity %q, which domain %s does not have; expected one of %s", a.Count, l.d.Name, strings.Join(entityNames(l.d), ", "))
			return a
		}
		if a.Field != "" {
			l.errorf(n.get("field"), "found field with count; expected count alone: a count is a number of rows")
		}
	case a.Group != "" && a.Field == "":
		l.errorf(n, "found group without field; expected the statistic's field too")
	case a.Group == "" && a.Field != "":
		l.errorf(n, "found field without id or group; expected the row or group whose field it is")
	}
	if e != nil {
		a.Entity = e.Name
		if a.Field != "" && !slices.ContainsFunc(e.Fields, func(f *Field) bool { return f.Name == a.Field }) {
			l.errorf(n.get("field"), "found field %q, which %s does not have; expected one of %s", a.Field, e.Name, strings.Join(fieldNames(e), ", "))
		}
	}
	reads := func(ok func(o *Operation) bool) bool {
		return slices.ContainsFunc(gold, func(c *Call) bool { o := l.op(c.Op); return o.ReadOnly && ok(o) })
	}
	switch {
	case e != nil && !reads(func(o *Operation) bool { return o.Entity == e }):
		l.errorf(n, "found a fact about %s rows, which no gold call reads; expected a gold read that reports the subject", e.Name)
	case a.Group != "" && !reads(func(o *Operation) bool { return len(o.GroupBy) > 0 }):
		l.errorf(n, "found a fact about group %q, which no gold statistic groups; expected a gold read that reports the subject", a.Group)
	}
	return a
}

func fieldNames(e *Entity) []string {
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Name
	}
	return out
}

func entityNames(d *Domain) []string {
	out := make([]string, len(d.Entities))
	for i, e := range d.Entities {
		out[i] = e.Name
	}
	return out
}

func idRange(e *Entity) string {
	switch len(e.Seed) {
	case 0:
		return "no seeded row"
	case 1:
		return e.Seed[0].ID
	}
	return e.Seed[0].ID + ".." + e.Seed[len(e.Seed)-1].ID
}

// fieldValues checks a where or fields mapping against the entity's
// fields and returns it with values normalised.
func (l *scenarioLoader) fieldValues(e *Entity, n *node) map[string]any {
	if n == nil {
		return nil
	}
	out := map[string]any{}
	for i, k := range n.mapKeys() {
		name := k.str()
		if name == "id" {
			out[name] = n.vals[i].toAny()
			continue
		}
		f := l.fieldOf(e, name)
		if f == nil {
			l.errorf(k, "found field %q, which entity %q does not have; expected one of %s", name, e.Name, l.fieldNames(e, func(*Field) bool { return true }))
			continue
		}
		if v, ok := l.value(f, n.vals[i]); ok {
			out[name] = v
		}
	}
	return out
}
