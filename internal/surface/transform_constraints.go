package surface

// constraintsTransform: words (ranges, formats and patterns stated in
// descriptions too, as granite writes them) or schema (the sentences
// that state a schema constraint removed: the schema alone says it; see
// constraints.go for which sentences state one).
var constraintsTransform = newTransform("constraints", "ranges, formats and patterns stated in descriptions too, or in the schema only",
	func(t *Transforms) *string { return &t.Constraints },
	option{value: "words"},
	option{value: "schema", rewrite: unstateConstraints, excludes: []exclusion{{"descriptions", "none",
		"found constraints: schema beside descriptions: none, which already leaves every constraint to the schema; expected one of the two"}}},
)

// unstateConstraints drops from every argument's description the
// sentences that state one of its constraints.
func unstateConstraints(d *draft) {
	walkProps(d.schema, func(p obj) obj { return p.set("description", unstated(p)) })
	d.schema = dropEmptyDescriptions(d.schema)
}
