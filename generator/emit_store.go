package generator

import (
	"fmt"
	"github.com/mcpgranite/granite/internal/speclang"
	"strings"

	"github.com/dave/jennifer/jen"
)

// emitStore writes the Store: one table per entity behind one lock, Reset,
// Clone, a canonical Snapshot and Call by operation name.
func emitStore(f *jen.File, d *speclang.Domain) {
	var fields []jen.Code
	fields = append(fields, jen.Id("mu").Qual("sync", "RWMutex"))
	for _, e := range d.Entities {
		fields = append(fields, jen.Id(tableField(e)).Qual(runtimePkg, "Table").Types(jen.Id(e.GoName)))
	}
	f.Comment(fmt.Sprintf("Store holds the %s domain's state in memory. It is safe for concurrent use;", d.Name))
	f.Comment("each operation runs under one lock, so it is atomic.")
	f.Type().Id("Store").Struct(fields...)
	f.Line()

	f.Comment("NewStore returns a store holding the seed data.")
	f.Func().Id("NewStore").Params().Op("*").Id("Store").Block(
		jen.Id("s").Op(":=").Op("&").Id("Store").Values(),
		jen.Id("s").Dot("reset").Call(),
		jen.Return(jen.Id("s")),
	)
	f.Line()

	f.Comment("Reset restores the seed data and ID counters.")
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("Reset").Params().Block(
		jen.Id("s").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("Unlock").Call(),
		jen.Id("s").Dot("reset").Call(),
	)
	f.Line()

	// s.devices = runtime.NewTable("device", "DV", 3, seedDevices(), deviceID, cloneDevice)
	var reset []jen.Code
	for _, e := range d.Entities {
		reset = append(reset, jen.Id("s").Dot(tableField(e)).Op("=").Qual(runtimePkg, "NewTable").Call(
			jen.Lit(e.Name), jen.Lit(e.IDPrefix), jen.Lit(e.IDDigits), jen.Id(seedFunc(e)).Call(),
			jen.Id(idFunc(e)), jen.Id(cloneFunc(e))))
	}
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("reset").Params().Block(reset...)
	f.Line()

	var clone []kv
	for _, e := range d.Entities {
		clone = append(clone, kv{tableField(e), jen.Id("s").Dot(tableField(e)).Dot("Clone").Call()})
	}
	f.Comment("Clone returns a deep copy of the store that shares nothing with it.")
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("Clone").Params().Op("*").Id("Store").Block(
		jen.Id("s").Dot("mu").Dot("RLock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("RUnlock").Call(),
		jen.Return(jen.Op("&").Id("Store").Add(keyed(true, clone...))),
	)
	f.Line()
	f.Comment("CloneStore is Clone for code that holds a runtime.Store.")
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("CloneStore").Params().Qual(runtimePkg, "Store").Block(
		jen.Return(jen.Id("s").Dot("Clone").Call()),
	)
	f.Line()

	// type snapshot struct { Devices []Device `json:"devices"`; NextIDs map[string]int `json:"next_ids"` }
	var snapFields []jen.Code
	var snapVals []kv
	var next []jen.Code
	for _, e := range d.Entities {
		snapFields = append(snapFields, jen.Id(speclang.GoName(e.Plural)).Index().Id(e.GoName).Tag(map[string]string{"json": e.Plural}))
		snapVals = append(snapVals, kv{speclang.GoName(e.Plural), jen.Id("s").Dot(tableField(e)).Dot("Rows").Call()})
		next = append(next, jen.Line().Lit(e.Name).Op(":").Id("s").Dot(tableField(e)).Dot("Next").Call())
	}
	snapFields = append(snapFields, jen.Id("NextIDs").Map(jen.String()).Int().Tag(map[string]string{"json": "next_ids"}))
	snapVals = append(snapVals, kv{"NextIDs", jen.Map(jen.String()).Int().Values(append(next, jen.Line())...)})
	f.Comment("snapshot is the canonical form of the whole state.")
	f.Type().Id("snapshot").Struct(snapFields...)
	f.Line()
	f.Comment("Snapshot returns the canonical JSON of the state: each entity's rows in ID")
	f.Comment("order, then the next ID of each entity. Equal states have equal bytes.")
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("Snapshot").Params().Index().Byte().Block(
		jen.Id("s").Dot("mu").Dot("RLock").Call(),
		jen.Defer().Id("s").Dot("mu").Dot("RUnlock").Call(),
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Qual("encoding/json", "Marshal").Call(jen.Id("snapshot").Add(keyed(true, snapVals...))),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Comment("Entity fields are strings, numbers, booleans and JSON values: always encodable."),
			jen.Panic(jen.Qual("fmt", "Sprintf").Call(jen.Lit(d.Name+": snapshot: %v"), jen.Err())),
		),
		jen.Return(jen.Id("b")),
	)
	f.Line()

	// func (s *Store) Call(op string, args []byte) (any, error) { switch op { case "get_device": return runtime.Bind(args, s.GetDevice) } }
	cases := make([]jen.Code, 0, len(d.Operations))
	for _, o := range d.Operations {
		cases = append(cases, jen.Case(jen.Lit(o.Name)).Block(jen.Return(jen.Qual(runtimePkg, "Bind").Call(jen.Id("args"), jen.Id("s").Dot(o.GoName)))))
	}
	f.Comment("Call runs an operation by name on JSON arguments, without the schema check")
	f.Comment("that the MCP path performs first.")
	f.Func().Params(jen.Id("s").Op("*").Id("Store")).Id("Call").Params(jen.Id("op").String(), jen.Id("args").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Switch(jen.Id("op")).Block(cases...),
		jen.Return(jen.Nil(), jen.Qual(runtimePkg, "Errorf").Call(jen.Lit(fmt.Sprintf("unknown operation %%q; %s has: %s", d.Name, joinNames(d.Operations))), jen.Id("op"))),
	)
}

func joinNames(ops []*speclang.Operation) string { return strings.Join(speclang.OpNames(ops), ", ") }
