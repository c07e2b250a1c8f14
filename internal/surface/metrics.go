package surface

// Metrics are what an interface shows a model, measured: the properties
// the report's complexity model regresses task completion on. The same
// definitions hold for every interface of every server.
type Metrics struct {
	Tools int `json:"tools"`
	// SchemaBytes is the size of the tool list as the model is sent it:
	// each tool's name, description and input schema as compact JSON;
	// SchemaTokens the same text in tokens of the counter Measure is given
	// (granite uses cl100k_base, see package tokens).
	SchemaBytes  int `json:"schema_bytes"`
	SchemaTokens int `json:"schema_tokens"`
	// ArgsMax and ArgsMean count each tool's arguments: its leaf
	// properties at any depth, the action aside.
	ArgsMax  int     `json:"args_max"`
	ArgsMean float64 `json:"args_mean"`
	// ActionsMax and ActionsMean count the operations behind each tool (1
	// for a tool without an action).
	ActionsMax  int     `json:"actions_max"`
	ActionsMean float64 `json:"actions_mean"`
	// EnumMax is the largest enum an argument offers (action's included),
	// EnumValues every enum's values together.
	EnumMax    int `json:"enum_max"`
	EnumValues int `json:"enum_values"`
	// Depth is the deepest nesting of argument objects: 1 for flat
	// arguments, 2 for a nested action's or a grouped range's.
	Depth int `json:"depth"`
	// DescriptionChars is the length of every tool and argument
	// description together.
	DescriptionChars int `json:"description_chars"`
	// Constraints counts constraint keywords (ranges, lengths, patterns,
	// formats); SchemaOnly is the share of them no description states.
	Constraints int     `json:"constraints"`
	SchemaOnly  float64 `json:"schema_only_share"`
	// Dropped counts the schema keywords the backend drops before the
	// model sees the tools (Ollama's tool types keep only a few).
	Dropped int `json:"dropped_keywords"`
}

// Measure computes an interface's metrics. tokens counts the tokens of a
// text; dropped counts the keywords a backend drops from one input schema
// (nil: none dropped).
func Measure(i *Interface, tokens func(string) int, dropped func(schema []byte) int) Metrics {
	m := Metrics{Tools: len(i.Tools)}
	var text []byte
	var args, acts, constraints, only int
	for k, t := range i.Tools {
		schema, err := parseObj(t.InputSchema)
		if err != nil {
			schema = obj{}
		}
		shown := encode(obj{{"name", t.Name}, {"description", t.Description}, {"parameters", schema}})
		if k > 0 {
			text = append(text, '\n')
		}
		text = append(text, shown...)
		n := leafArgs(schema, true)
		args += n
		m.ArgsMax = max(m.ArgsMax, n)
		a := max(1, len(i.shaped[k].actions))
		acts += a
		m.ActionsMax = max(m.ActionsMax, a)
		m.DescriptionChars += len(t.Description)
		m.Depth = max(m.Depth, depth(schema))
		visitSchemas(schema, func(p obj) {
			m.DescriptionChars += len(p.getString("description"))
			if e := stringsOf(mustGet(p, "enum")); len(e) > 0 {
				m.EnumMax = max(m.EnumMax, len(e))
				m.EnumValues += len(e)
			}
			c, o := schemaOnly(p)
			constraints, only = constraints+c, only+o
		})
		if dropped != nil {
			m.Dropped += dropped(t.InputSchema)
		}
	}
	m.SchemaBytes = len(text)
	if tokens != nil {
		m.SchemaTokens = tokens(string(text))
	}
	if m.Tools > 0 {
		m.ArgsMean = float64(args) / float64(m.Tools)
		m.ActionsMean = float64(acts) / float64(m.Tools)
	}
	m.Constraints = constraints
	if constraints > 0 {
		m.SchemaOnly = float64(only) / float64(constraints)
	}
	return m
}

// visitSchemas calls f on every argument schema at any depth: properties,
// array items, oneOf branches' properties.
func visitSchemas(s obj, f func(obj)) {
	for _, m := range s.getObj("properties") {
		if p, ok := m.val.(obj); ok {
			f(p)
			visitSchemas(p, f)
		}
	}
	if items := s.getObj("items"); items != nil {
		f(items)
		visitSchemas(items, f)
	}
	if branches, ok := mustGet(s, "oneOf").([]any); ok {
		for _, b := range branches {
			if bo, ok := b.(obj); ok {
				for _, m := range bo.getObj("properties") {
					if p, ok := m.val.(obj); ok && m.key != "action" {
						f(p)
						visitSchemas(p, f)
					}
				}
			}
		}
	}
}

// leafArgs counts the arguments a call can fill: properties that are not
// objects of named members, at any depth, the top-level action aside;
// oneOf branches count each argument name once.
func leafArgs(s obj, top bool) int {
	seen := map[string]bool{}
	n := 0
	var count func(o obj, prefix string, top bool)
	count = func(o obj, prefix string, top bool) {
		for _, m := range o.getObj("properties") {
			if top && m.key == "action" {
				continue
			}
			p, _ := m.val.(obj)
			if p.getObj("properties") != nil {
				count(p, prefix+m.key+".", false)
				continue
			}
			if !seen[prefix+m.key] {
				seen[prefix+m.key] = true
				n++
			}
		}
		if branches, ok := mustGet(o, "oneOf").([]any); ok {
			for _, b := range branches {
				if bo, ok := b.(obj); ok {
					count(bo, prefix, top)
				}
			}
		}
	}
	count(s, "", top)
	return n
}

// depth is how deep argument objects nest: 1 for flat arguments.
func depth(s obj) int {
	d := 0
	for _, m := range s.getObj("properties") {
		p, _ := m.val.(obj)
		if p.getObj("properties") != nil {
			d = max(d, 1+depth(p))
		} else {
			d = max(d, 1)
		}
	}
	if branches, ok := mustGet(s, "oneOf").([]any); ok {
		for _, b := range branches {
			if bo, ok := b.(obj); ok {
				d = max(d, depth(bo))
			}
		}
	}
	return d
}
