package generator

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
)

// emitOperations writes, per operation, its typed argument struct and the
// Store method that performs it.
func emitOperations(f *jen.File, d *speclang.Domain) {
	for _, o := range d.Operations {
		emitArgsStruct(f, argsType(o), fmt.Sprintf("%s are the arguments of %s.", argsType(o), o.Name), o.Args)
		if needsMatch(o) {
			emitMatch(f, o)
		}
		if o.Kind == opkind.Workflow {
			emitWorkflow(f, o)
			continue
		}
		emitOperation(f, o)
	}
}

// emitArgsStruct writes an argument struct. Required arguments are values,
// optional ones pointers (maps and slices are nil when absent).
func emitArgsStruct(f *jen.File, name, comment string, args []*speclang.Arg) {
	var fields []jen.Code
	for _, a := range args {
		t := typeCode(a.GoType)
		tag := a.Name
		if !a.Required {
			tag += ",omitempty"
			if !a.GoType.Nilable() {
				t = jen.Op("*").Add(t)
			}
		}
		fields = append(fields, jen.Id(a.GoName).Add(t).Tag(map[string]string{"json": tag}))
	}
	f.Comment(doc(comment))
	f.Type().Id(name).Struct(fields...)
	f.Line()
}

// argValue is the value of an argument that is known to be present.
func argValue(a *speclang.Arg) *jen.Statement {
	if a.Required || a.GoType.Nilable() {
		return jen.Id("a").Dot(a.GoName)
	}
	return jen.Op("*").Id("a").Dot(a.GoName)
}

// present is the condition that an optional argument was given.
func present(a *speclang.Arg) *jen.Statement {
	return jen.Id("a").Dot(a.GoName).Op("!=").Nil()
}

func needsMatch(o *speclang.Operation) bool {
	switch o.Kind {
	case opkind.List, opkind.UpdateWhere, opkind.Aggregate, opkind.Preset:
		return true
	}
	return false
}

// compare renders `v.Field <op> value` for a field's value, comparing
// timestamps by instant rather than as text. For an optional scalar it
// compares the value the pointer holds: callers test for nil first.
func compare(fd *speclang.Field, op string, value jen.Code) *jen.Statement {
	field := fieldValue(fd)
	if fd.Type == speclang.TTimestamp && op != "!=" {
		return jen.Qual(runtimePkg, "CompareTime").Call(field, value).Op(op).Lit(0)
	}
	return field.Op(op).Add(value)
}

// fieldValue is row v's value of a field: v.Level, or *v.Watts for an
// optional scalar, which the caller has tested for nil.
func fieldValue(fd *speclang.Field) *jen.Statement {
	if nullable(fd) {
		return jen.Op("*").Id("v").Dot(fd.GoName)
	}
	return jen.Id("v").Dot(fd.GoName)
}

// unset is the condition that an optional field has no value.
func unset(fd *speclang.Field) *jen.Statement {
	return jen.Id("v").Dot(fd.GoName).Op("==").Nil()
}

// fails renders the condition under which a row fails a filter, given as
// the comparison that fails it (!=, < or >). A row without a value fails
// every filter.
func fails(fd *speclang.Field, op string, value jen.Code) *jen.Statement {
	if nullable(fd) {
		return jen.Parens(unset(fd).Op("||").Add(compare(fd, op, value)))
	}
	return compare(fd, op, value)
}

// whereFails renders the condition under which a row fails a fixed where
// value; a nil value selects the rows without a value.
func whereFails(w speclang.Assign) *jen.Statement {
	if w.Value == nil {
		return jen.Id("v").Dot(w.Field.GoName).Op("!=").Nil()
	}
	return fails(w.Field, "!=", literal(w.Field, w.Value))
}

// whereHolds is the negation of whereFails.
func whereHolds(w speclang.Assign) *jen.Statement {
	switch {
	case w.Value == nil:
		return unset(w.Field)
	case nullable(w.Field):
		return jen.Parens(jen.Id("v").Dot(w.Field.GoName).Op("!=").Nil().Op("&&").Add(compare(w.Field, "==", literal(w.Field, w.Value))))
	}
	return compare(w.Field, "==", literal(w.Field, w.Value))
}

// emitMatch writes the filter an operation applies to rows:
//
//	func (a ListDevicesArgs) match(v *Device) bool {
//		if a.Room != nil && v.Room != *a.Room { return false }
//		return true
//	}
func emitMatch(f *jen.File, o *speclang.Operation) {
	var body []jen.Code
	for _, w := range o.Where {
		body = append(body, jen.If(whereFails(w)).Block(jen.Return(jen.False())))
	}
	for _, a := range o.Args {
		var cond *jen.Statement
		switch a.Role {
		case speclang.RoleFilter:
			cond = fails(a.Field, "!=", argValue(a))
		case speclang.RoleMin:
			cond = fails(a.Field, "<", argValue(a))
		case speclang.RoleMax:
			cond = fails(a.Field, ">", argValue(a))
		default:
			continue
		}
		if !a.Required {
			cond = present(a).Op("&&").Add(cond)
		}
		body = append(body, jen.If(cond).Block(jen.Return(jen.False())))
	}
	body = append(body, jen.Return(jen.True()))
	f.Comment(fmt.Sprintf("match reports whether a row passes %s's filters.", o.Name))
	f.Func().Params(jen.Id("a").Id(argsType(o))).Id("match").Params(jen.Id("v").Op("*").Id(o.Entity.GoName)).Bool().Block(body...)
	f.Line()
}

// lockFor returns the statements that take the store's lock for o.
func lockFor(o *speclang.Operation) []jen.Code {
	if o.ReadOnly {
		return []jen.Code{jen.Id("s").Dot("mu").Dot("RLock").Call(), jen.Defer().Id("s").Dot("mu").Dot("RUnlock").Call()}
	}
	return []jen.Code{jen.Id("s").Dot("mu").Dot("Lock").Call(), jen.Defer().Id("s").Dot("mu").Dot("Unlock").Call()}
}

// refChecks returns checks that every reference argument names a row,
// all made before anything changes: a value's, or a workflow argument's,
// so that a workflow given a row that does not exist is refused rather
// than done on no rows.
func refChecks(o *speclang.Operation, zero jen.Code) []jen.Code {
	var out []jen.Code
	for _, a := range o.Args {
		if a.Role != speclang.RoleValue && a.Role != speclang.RoleInput || a.Field.Type != speclang.TReference {
			continue
		}
		check := jen.If(jen.Err().Op(":=").Id("s").Dot(tableField(a.Field.Ref)).Dot("Check").Call(jen.Lit(a.Name), argValue(a)), jen.Err().Op("!=").Nil()).Block(
			jen.Return(zero, jen.Err()))
		if !a.Required {
			check = jen.If(present(a)).Block(check)
		}
		out = append(out, check)
	}
	return out
}

// assignArgs sets each given value argument on row v.
func assignArgs(o *speclang.Operation) []jen.Code {
	var out []jen.Code
	for _, a := range o.Args {
		if a.Role != speclang.RoleValue {
			continue
		}
		var val jen.Code = argValue(a)
		switch {
		case a.Field.Type == speclang.TObject && o.Merge:
			val = jen.Qual(runtimePkg, "MergeObject").Call(jen.Id("v").Dot(a.Field.GoName), jen.Id("a").Dot(a.GoName))
		case a.Field.Type == speclang.TObject:
			val = jen.Qual(runtimePkg, "CloneObject").Call(jen.Id("a").Dot(a.GoName))
		case a.Field.Type == speclang.TArray:
			val = jen.Qual(runtimePkg, "CloneSlice").Call(jen.Id("a").Dot(a.GoName))
		}
		set := jen.Id("v").Dot(a.Field.GoName).Op("=").Add(storedCode(a.Field, val))
		if a.Required {
			out = append(out, set)
		} else {
			out = append(out, jen.If(present(a)).Block(set))
		}
	}
	return out
}

// clearChecks refuse an update that both sets and removes a field.
func clearChecks(o *speclang.Operation, zero jen.Code) []jen.Code {
	var out []jen.Code
	for _, c := range o.Args {
		if c.Role != speclang.RoleClear {
			continue
		}
		for _, a := range o.Args {
			if a.Role == speclang.RoleValue && a.Field == c.Field {
				out = append(out, jen.If(present(a).Op("&&").Add(present(c)).Op("&&").Op("*").Id("a").Dot(c.GoName)).Block(
					jen.Return(zero, jen.Qual(runtimePkg, "Errorf").Call(jen.Lit(fmt.Sprintf("found %s and %s: true; expected a new %s or its removal, not both", a.Name, c.Name, a.Name))))))
			}
		}
	}
	return out
}

// clears remove the fields whose clear_<field> argument is true.
func clears(o *speclang.Operation) []jen.Code {
	var out []jen.Code
	for _, c := range o.Args {
		if c.Role == speclang.RoleClear {
			out = append(out, jen.If(present(c).Op("&&").Op("*").Id("a").Dot(c.GoName)).Block(jen.Id("v").Dot(c.Field.GoName).Op("=").Nil()))
		}
	}
	return out
}

func assignFixed(set []speclang.Assign) []jen.Code {
	var out []jen.Code
	for _, s := range set {
		out = append(out, jen.Id("v").Dot(s.Field.GoName).Op("=").Add(stored(s.Field, s.Value)))
	}
	return out
}

// nothingToSet returns the check that an update names at least one field,
// which a required field makes needless.
func nothingToSet(o *speclang.Operation, zero jen.Code) jen.Code {
	var cond *jen.Statement
	var names []jen.Code
	for _, a := range o.Args {
		if a.Role != speclang.RoleValue && a.Role != speclang.RoleClear {
			continue
		}
		if a.Required {
			return jen.Null()
		}
		c := jen.Id("a").Dot(a.GoName).Op("==").Nil()
		if cond == nil {
			cond = c
		} else {
			cond = cond.Op("&&").Add(c)
		}
		names = append(names, jen.Lit(a.Name))
	}
	if cond == nil {
		return jen.Null()
	}
	return jen.If(cond).Block(jen.Return(zero, jen.Qual(runtimePkg, "NothingToSet").Call(names...)))
}

func argByRole(o *speclang.Operation, r speclang.ArgRole) *speclang.Arg {
	for _, a := range o.Args {
		if a.Role == r {
			return a
		}
	}
	return nil
}

// emitOperation writes the Store method of one operation.
func emitOperation(f *jen.File, o *speclang.Operation) {
	e := o.Entity
	table := jen.Id("s").Dot(tableField(e))
	var result jen.Code
	var body []jen.Code
	body = append(body, lockFor(o)...)
	switch o.Kind {
	case opkind.Get:
		result = jen.Id(e.GoName)
		body = append(body, jen.Return(table.Clone().Dot("Get").Call(jen.Lit(e.Name+"_id"), jen.Id("a").Dot(argByRole(o, speclang.RoleID).GoName))))
	case opkind.List:
		result = jen.Qual(runtimePkg, "ListResult").Types(jen.Id(e.GoName))
		body = append(body, jen.Return(table.Clone().Dot("List").Call(
			jen.Qual(runtimePkg, "Or").Call(jen.Id("a").Dot("Limit"), jen.Lit(o.Limit)), jen.Id("a").Dot("match")), jen.Nil()))
	case opkind.Create:
		result = jen.Id(e.GoName)
		zero := jen.Id(e.GoName).Values()
		body = append(body, refChecks(o, zero)...)
		// v := Rule{Enabled: true}  (defaults), then the given arguments.
		var defaults []kv
		for _, fd := range e.Fields {
			switch {
			case fd.Default != nil && (fd.Optional || !isZero(fd.Default)):
				defaults = append(defaults, kv{fd.GoName, stored(fd, fd.Default)})
			case fd.Optional: // unset until given
			case fd.Type == speclang.TObject || fd.Type == speclang.TArray:
				defaults = append(defaults, kv{fd.GoName, literal(fd, speclang.ZeroValue(fd))})
			}
		}
		body = append(body, jen.Id("v").Op(":=").Id(e.GoName).Add(keyed(len(defaults) > 2, defaults...)))
		body = append(body, assignArgs(o)...)
		body = append(body, jen.Return(table.Clone().Dot("Insert").Call(jen.Id("v")), jen.Nil()))
	case opkind.Update:
		result = jen.Id(e.GoName)
		zero := jen.Id(e.GoName).Values()
		body = append(body,
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Add(table.Clone()).Dot("Ptr").Call(jen.Lit(e.Name+"_id"), jen.Id("a").Dot(argByRole(o, speclang.RoleID).GoName)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(zero, jen.Err())),
			nothingToSet(o, zero),
		)
		body = append(body, refChecks(o, zero)...)
		body = append(body, clearChecks(o, zero)...)
		body = append(body, assignArgs(o)...)
		body = append(body, clears(o)...)
		body = append(body, jen.Return(jen.Id(cloneFunc(e)).Call(jen.Op("*").Id("v")), jen.Nil()))
	case opkind.UpdateWhere:
		result = jen.Qual(runtimePkg, "BulkResult")
		zero := jen.Qual(runtimePkg, "BulkResult").Values()
		if len(o.Set) == 0 {
			body = append(body, nothingToSet(o, zero))
		}
		body = append(body, refChecks(o, zero)...)
		set := append(assignFixed(o.Set), assignArgs(o)...)
		body = append(body,
			jen.Id("ids").Op(":=").Add(table.Clone()).Dot("Update").Call(jen.Id("a").Dot("match"),
				jen.Func().Params(jen.Id("v").Op("*").Id(e.GoName)).Block(set...)),
			jen.Return(jen.Qual(runtimePkg, "NewBulkResult").Call(jen.Lit(e.Name), jen.Lit(""), jen.Id("ids")), jen.Nil()),
		)
	case opkind.Delete:
		result = jen.Qual(runtimePkg, "DeleteResult")
		body = append(body, jen.Return(table.Clone().Dot("Delete").Call(jen.Lit(e.Name+"_id"), jen.Id("a").Dot(argByRole(o, speclang.RoleID).GoName))))
	case opkind.Aggregate:
		result = jen.Qual(runtimePkg, "AggregateResult")
		body = append(body, aggregateBody(o, table)...)
	case opkind.Preset:
		result = jen.Qual(runtimePkg, "BulkResult")
		body = append(body, presetBody(o, table)...)
	}
	f.Comment(doc(opDoc(o.GoName, o.Name, o.Description)))
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id(o.GoName).Params(jen.Id("a").Id(argsType(o))).Params(result, jen.Error()).Block(body...)
	f.Line()
}

// aggregateBody computes one statistic, optionally grouped:
//
//	agg := mcpdomain.NewAggregator("sensor", a.Function, a.Field, mcpdomain.Deref(a.GroupBy))
//	s.sensors.Each(a.match, func(v *Sensor) { ...; agg.Add(key, x) })
//	return agg.Result(), nil
func aggregateBody(o *speclang.Operation, table *jen.Statement) []jen.Code {
	fn := jen.Lit(o.Functions[0])
	if a := argByRole(o, speclang.RoleFunction); a != nil {
		fn = jen.Id("a").Dot(a.GoName)
	}
	var field jen.Code = jen.Lit("")
	if len(o.Fields) == 1 {
		field = jen.Lit(o.Fields[0].Name)
	} else if a := argByRole(o, speclang.RoleAggField); a != nil {
		field = jen.Id("a").Dot(a.GoName)
	}
	var group jen.Code = jen.Lit("")
	if a := argByRole(o, speclang.RoleGroupBy); a != nil {
		group = jen.Qual(runtimePkg, "Deref").Call(jen.Id("a").Dot(a.GoName))
	}
	var each []jen.Code
	each = append(each, jen.Var().Id("x").Float64())
	if len(o.Fields) > 0 {
		var cases []jen.Code
		for _, fd := range o.Fields {
			var c []jen.Code
			if nullable(fd) { // a row without a value adds nothing
				c = append(c, jen.If(unset(fd)).Block(jen.Return()))
			}
			c = append(c, jen.Id("x").Op("=").Float64().Call(fieldValue(fd)))
			cases = append(cases, jen.Case(jen.Lit(fd.Name)).Block(c...))
		}
		each = append(each, jen.Switch(jen.Id("agg").Dot("Field").Call()).Block(cases...))
	}
	each = append(each, jen.Var().Id("key").String())
	if len(o.GroupBy) > 0 {
		var cases []jen.Code
		for _, fd := range o.GroupBy {
			var val jen.Code = fieldValue(fd)
			switch g := speclang.FieldGoType(fd); {
			case g.Named != "":
				val = jen.String().Call(val)
			case g.Kind != "string":
				val = jen.Qual("fmt", "Sprint").Call(val)
			}
			set := jen.Id("key").Op("=").Add(val)
			if nullable(fd) {
				set = jen.If(unset(fd)).Block(jen.Id("key").Op("=").Qual(runtimePkg, "UnsetKey")).Else().Block(set)
			}
			cases = append(cases, jen.Case(jen.Lit(fd.Name)).Block(set))
		}
		each = append(each, jen.Switch(jen.Id("agg").Dot("GroupBy").Call()).Block(cases...))
	}
	each = append(each, jen.Id("agg").Dot("Add").Call(jen.Id("key"), jen.Id("x")))
	return []jen.Code{
		jen.Id("agg").Op(":=").Qual(runtimePkg, "NewAggregator").Call(jen.Lit(o.Entity.Name), fn, field, group),
		table.Clone().Dot("Each").Call(jen.Id("a").Dot("match"), jen.Func().Params(jen.Id("v").Op("*").Id(o.Entity.GoName)).Block(each...)),
		jen.Return(jen.Id("agg").Dot("Result").Call(), jen.Nil()),
	}
}

// presetBody applies the chosen bundle's steps to the rows in scope:
//
//	switch a.Mode {
//	case "night":
//		ids = append(ids, s.devices.Update(func(v *Device) bool { return a.match(v) && v.Kind == "light" }, func(v *Device) { v.Power = "off" })...)
//	}
func presetBody(o *speclang.Operation, table *jen.Statement) []jen.Code {
	e := o.Entity
	pa := argByRole(o, speclang.RolePreset)
	var cases []jen.Code
	for _, p := range o.Presets {
		var steps []jen.Code
		for _, st := range p.Steps {
			cond := jen.Id("a").Dot("match").Call(jen.Id("v"))
			for _, w := range st.Where {
				cond = cond.Op("&&").Add(whereHolds(w))
			}
			steps = append(steps, jen.Id("ids").Op("=").Append(jen.Id("ids"), table.Clone().Dot("Update").Call(
				jen.Func().Params(jen.Id("v").Op("*").Id(e.GoName)).Bool().Block(jen.Return(cond)),
				jen.Func().Params(jen.Id("v").Op("*").Id(e.GoName)).Block(assignFixed(st.Set)...),
			).Op("...")))
		}
		cases = append(cases, jen.Case(jen.Lit(p.Name)).Block(steps...))
	}
	return []jen.Code{
		jen.Var().Id("ids").Index().String(),
		jen.Switch(jen.Id("a").Dot(pa.GoName)).Block(cases...),
		jen.Return(jen.Qual(runtimePkg, "NewBulkResult").Call(jen.Lit(e.Name), jen.Id("a").Dot(pa.GoName), jen.Id("ids")), jen.Nil()),
	}
}

// emitWorkflow writes a workflow's step table and its Store method, which
// runs the steps on a clone under the store's write lock and keeps the
// clone only when every step succeeded, so the workflow applies all or
// nothing and no other call sees it half done:
//
//	var dimRoomSteps = []mcpdomain.Step{{Op: opListLamps, With: `{"room":"$room"}`, As: "lit"}, ...}
//
//	func (s *Store) DimRoom(a DimRoomArgs) (mcpdomain.WorkflowResult, error) {
//		s.mu.Lock()
//		defer s.mu.Unlock()
//		c := s.clone()
//		res, err := mcpdomain.RunWorkflow(c, "dim_room", dimRoomSteps, a)
//		if err != nil {
//			return mcpdomain.WorkflowResult{}, err
//		}
//		s.adopt(c)
//		return res, nil
//	}
func emitWorkflow(f *jen.File, o *speclang.Operation) {
	steps := make([]jen.Code, len(o.Steps))
	for i, st := range o.Steps {
		steps[i] = jen.Line().Add(keyed(false,
			kv{"Op", jen.Id(opVar(st.Call))},
			kv{"ForEach", nonZero(st.ForEach)},
			kv{"With", rawString(st.WithJSON())},
			kv{"As", nonZero(st.As)},
		))
	}
	steps = append(steps, jen.Line())
	f.Comment(fmt.Sprintf("%s are the steps of %s, in order.", stepsVar(o), o.Name))
	f.Var().Id(stepsVar(o)).Op("=").Index().Qual(runtimePkg, "Step").Values(steps...)
	f.Line()
	result := jen.Qual(runtimePkg, "WorkflowResult")
	body := append(lockFor(o), refChecks(o, result.Clone().Values())...)
	body = append(body,
		jen.Id("c").Op(":=").Id("s").Dot("clone").Call(),
		jen.List(jen.Id("res"), jen.Err()).Op(":=").Qual(runtimePkg, "RunWorkflow").Call(jen.Id("c"), jen.Lit(o.Name), jen.Id(stepsVar(o)), jen.Id("a")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(result.Clone().Values(), jen.Err())),
		jen.Id("s").Dot("adopt").Call(jen.Id("c")),
		jen.Return(jen.Id("res"), jen.Nil()),
	)
	f.Comment(doc(opDoc(o.GoName, o.Name, o.Description)))
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id(o.GoName).Params(jen.Id("a").Id(argsType(o))).Params(result, jen.Error()).Block(body...)
	f.Line()
}

func stepsVar(o *speclang.Operation) string { return lowerFirst(o.GoName) + "Steps" }
