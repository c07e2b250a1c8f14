package generator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
)

// emitStore writes the Store: one table per entity behind one lock, Reset,
// Clone, a canonical Snapshot and Call by operation name; in a domain with
// workflows also clone and adopt, with which a workflow runs on a copy and
// keeps it.
func emitStore(f *jen.File, d *speclang.Domain) {
	codes := []jen.Code{storeType(d), newStoreFunc(), resetMethod(), resetTables(d), cloneMethod(d)}
	if hasWorkflows(d) {
		codes = append(codes, cloneLockedMethod(d), adoptMethod(d))
	}
	codes = append(codes, cloneStoreMethod(), snapshotType(d), snapshotMethod(d))
	for _, c := range codes {
		f.Add(c)
		f.Line()
	}
	f.Add(callMethod(d))
}

// recv is the receiver of every Store method: (s *Store).
func recv() *jen.Statement { return jen.Params(jen.Id("s").Op("*").Id("Store")) }

// storeType:
//
//	type Store struct { mu sync.RWMutex; lamps mcpdomain.Table[Lamp]; ... }
func storeType(d *speclang.Domain) jen.Code {
	fields := []jen.Code{jen.Id("mu").Qual("sync", "RWMutex")}
	for _, e := range d.Entities {
		fields = append(fields, jen.Id(tableField(e)).Qual(runtimePkg, "Table").Types(jen.Id(e.GoName)))
	}
	return jen.Comment(doc(fmt.Sprintf("Store holds the %s domain's state in memory. It is safe for concurrent use; "+
		"each operation runs under one lock, so it is atomic.", d.Name))).Line().
		Type().Id("Store").Struct(fields...)
}

// newStoreFunc:
//
//	func NewStore() *Store { s := &Store{}; s.reset(); return s }
func newStoreFunc() jen.Code {
	return jen.Comment("NewStore returns a store holding the seed data.").Line().
		Func().Id("NewStore").Params().Op("*").Id("Store").Block(
		jen.Id("s").Op(":=").Op("&").Id("Store").Values(),
		jen.Id("s").Dot("reset").Call(),
		jen.Return(jen.Id("s")),
	)
}

// resetMethod:
//
//	func (s *Store) Reset() { s.mu.Lock(); defer s.mu.Unlock(); s.reset() }
func resetMethod() jen.Code {
	return jen.Comment("Reset restores the seed data and ID counters.").Line().
		Func().Add(recv()).Id("Reset").Params().Block(
		jen.Id("s").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("Unlock").Call(),
		jen.Id("s").Dot("reset").Call(),
	)
}

// resetTables:
//
//	func (s *Store) reset() { s.lamps = mcpdomain.NewTable("lamp", "LP", 2, seedLamps(), lampID, cloneLamp); ... }
func resetTables(d *speclang.Domain) jen.Code {
	var reset []jen.Code
	for _, e := range d.Entities {
		reset = append(reset, jen.Id("s").Dot(tableField(e)).Op("=").Qual(runtimePkg, "NewTable").Call(
			jen.Lit(e.Name), jen.Lit(e.IDPrefix), jen.Lit(e.IDDigits), jen.Id(seedFunc(e)).Call(),
			jen.Id(idFunc(e)), jen.Id(cloneFunc(e))))
	}
	return jen.Func().Add(recv()).Id("reset").Params().Block(reset...)
}

// cloneMethod:
//
//	func (s *Store) Clone() *Store { ...; return &Store{lamps: s.lamps.Clone(), ...} }
func cloneMethod(d *speclang.Domain) jen.Code {
	var clone []kv
	for _, e := range d.Entities {
		clone = append(clone, kv{tableField(e), jen.Id("s").Dot(tableField(e)).Dot("Clone").Call()})
	}
	return jen.Comment("Clone returns a deep copy of the store that shares nothing with it.").Line().
		Func().Add(recv()).Id("Clone").Params().Op("*").Id("Store").Block(
		jen.Id("s").Dot("mu").Dot("RLock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("RUnlock").Call(),
		jen.Return(jen.Op("&").Id("Store").Add(keyed(true, clone...))),
	)
}

// hasWorkflows says whether any operation of d is a workflow.
func hasWorkflows(d *speclang.Domain) bool {
	return slices.ContainsFunc(d.Operations, func(o *speclang.Operation) bool { return o.Kind == opkind.Workflow })
}

// cloneLockedMethod, for a workflow, which holds the write lock:
//
//	func (s *Store) clone() *Store { return &Store{lamps: s.lamps.Clone(), ...} }
func cloneLockedMethod(d *speclang.Domain) jen.Code {
	var clone []kv
	for _, e := range d.Entities {
		clone = append(clone, kv{tableField(e), jen.Id("s").Dot(tableField(e)).Dot("Clone").Call()})
	}
	return jen.Comment("clone is Clone for a caller that holds the lock: a workflow runs its steps on it.").Line().
		Func().Add(recv()).Id("clone").Params().Op("*").Id("Store").Block(
		jen.Return(jen.Op("&").Id("Store").Add(keyed(true, clone...))),
	)
}

// adoptMethod:
//
//	func (s *Store) adopt(c *Store) { s.lamps = c.lamps; ... }
func adoptMethod(d *speclang.Domain) jen.Code {
	var set []jen.Code
	for _, e := range d.Entities {
		set = append(set, jen.Id("s").Dot(tableField(e)).Op("=").Id("c").Dot(tableField(e)))
	}
	return jen.Comment("adopt takes the tables of c, a clone a workflow ran on to its end; the caller").Line().
		Comment("holds the lock.").Line().
		Func().Add(recv()).Id("adopt").Params(jen.Id("c").Op("*").Id("Store")).Block(set...)
}

// cloneStoreMethod:
//
//	func (s *Store) CloneStore() mcpdomain.Store { return s.Clone() }
func cloneStoreMethod() jen.Code {
	return jen.Comment("CloneStore is Clone for code that holds a mcpdomain.Store.").Line().
		Func().Add(recv()).Id("CloneStore").Params().Qual(runtimePkg, "Store").Block(
		jen.Return(jen.Id("s").Dot("Clone").Call()),
	)
}

// snapshotType:
//
//	type snapshot struct { Lamps []Lamp `json:"lamps"`; NextIDs map[string]int `json:"next_ids"` }
func snapshotType(d *speclang.Domain) jen.Code {
	var fields []jen.Code
	for _, e := range d.Entities {
		fields = append(fields, jen.Id(speclang.GoName(e.Plural)).Index().Id(e.GoName).Tag(map[string]string{"json": e.Plural}))
	}
	fields = append(fields, jen.Id("NextIDs").Map(jen.String()).Int().Tag(map[string]string{"json": "next_ids"}))
	return jen.Comment("snapshot is the canonical form of the whole state.").Line().
		Type().Id("snapshot").Struct(fields...)
}

// snapshotMethod:
//
//	func (s *Store) Snapshot() []byte {
//		b, err := json.Marshal(snapshot{Lamps: s.lamps.Rows(), NextIDs: map[string]int{"lamp": s.lamps.Next()}})
//		...
//	}
func snapshotMethod(d *speclang.Domain) jen.Code {
	var vals []kv
	var next []jen.Code
	for _, e := range d.Entities {
		vals = append(vals, kv{speclang.GoName(e.Plural), jen.Id("s").Dot(tableField(e)).Dot("Rows").Call()})
		next = append(next, jen.Line().Lit(e.Name).Op(":").Id("s").Dot(tableField(e)).Dot("Next").Call())
	}
	vals = append(vals, kv{"NextIDs", jen.Map(jen.String()).Int().Values(append(next, jen.Line())...)})
	return jen.Comment("Snapshot returns the canonical JSON of the state: each entity's rows in ID").Line().
		Comment("order, then the next ID of each entity. Equal states have equal bytes.").Line().
		Func().Add(recv()).Id("Snapshot").Params().Index().Byte().Block(
		jen.Id("s").Dot("mu").Dot("RLock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("RUnlock").Call(),
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Qual("encoding/json", "Marshal").Call(jen.Id("snapshot").Add(keyed(true, vals...))),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Comment("Entity fields are strings, numbers, booleans and JSON values: always encodable."),
			jen.Panic(jen.Qual("fmt", "Sprintf").Call(jen.Lit(d.Name+": snapshot: %v"), jen.Err())),
		),
		jen.Return(jen.Id("b")),
	)
}

// callMethod:
//
//	func (s *Store) Call(op string, args []byte) (any, error) {
//		switch op {
//		case "get_lamp":
//			return mcpdomain.Bind(args, s.GetLamp)
//		}
//		return nil, mcpdomain.Errorf("unknown operation %q; tiny has: get_lamp, ...", op)
//	}
func callMethod(d *speclang.Domain) jen.Code {
	cases := make([]jen.Code, 0, len(d.Operations))
	for _, o := range d.Operations {
		cases = append(cases, jen.Case(jen.Lit(o.Name)).Block(jen.Return(jen.Qual(runtimePkg, "Bind").Call(jen.Id("args"), jen.Id("s").Dot(o.GoName)))))
	}
	return jen.Comment("Call runs an operation by name on JSON arguments, without the schema check").Line().
		Comment("that the MCP path performs first.").Line().
		Func().Add(recv()).Id("Call").Params(jen.Id("op").String(), jen.Id("args").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("op")).Block(cases...),
		jen.Return(jen.Nil(), jen.Qual(runtimePkg, "Errorf").Call(text(fmt.Sprintf("unknown operation %%q; %s has: %s", d.Name, joinNames(d.Operations))), jen.Id("op"))),
	)
}

func joinNames(ops []*speclang.Operation) string { return strings.Join(speclang.OpNames(ops), ", ") }
