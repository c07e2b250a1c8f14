package generator

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/opkind"
	"github.com/mcpgranite/granite/internal/speclang"
)

// emitServer writes the domain's description, the operation and tool
// tables, NewServer and the registry entry. A tool's calls need no generated dispatcher: the runtime
// picks the operation (mcpdomain.Tool.Prepare) and runs it by name on the
// store.
func emitServer(f *jen.File, d *speclang.Domain) {
	f.Comment(doc(fmt.Sprintf("description says what %s is, to a model (the server's instructions) and to a reader (the registry).", d.Name)))
	f.Const().Id("description").Op("=").Add(text(d.Description))
	f.Line()
	f.Comment(doc(fmt.Sprintf("The operations of %s, one per operation of its spec: what each does to which entity, "+
		"its arguments and their schema. The tools below expose them, at L4 one tool each, which gives the operation's description as its own.", d.Name)))
	f.Var().Defs(operationDefs(d)...)
	f.Line()
	for _, c := range []jen.Code{operationsVar(d), toolsVar(d), newServerFunc(d)} {
		f.Add(c)
		f.Line()
	}
	f.Add(domainVar(d))
}

// operationDefs are the definitions of the operations' block, in spec
// order, under the description emitServer gives it:
//
//	var (
//		opGetLamp = &mcpdomain.Operation{Name: "get_lamp", ...}
//		...
//	)
func operationDefs(d *speclang.Domain) []jen.Code {
	defs := make([]jen.Code, len(d.Operations))
	for i, o := range d.Operations {
		defs[i] = jen.Id(opVar(o)).Op("=").Op("&").Qual(runtimePkg, "Operation").Add(operationLit(o))
	}
	return defs
}

// operationsVar:
//
//	var Operations = []*mcpdomain.Operation{opGetLamp, opListLamps, ...}
func operationsVar(d *speclang.Domain) jen.Code {
	return jen.Comment("Operations lists every operation of the domain, in spec order.").Line().
		Var().Id("Operations").Op("=").Index().Op("*").Qual(runtimePkg, "Operation").Values(opList(d.Operations)...)
}

// opList is a list of operation variables: opGetLamp, opListLamps.
func opList(ops []*speclang.Operation) []jen.Code {
	vals, size := make([]jen.Code, len(ops)), 0
	for i, o := range ops {
		vals[i] = jen.Id(opVar(o))
		size += len(opVar(o)) + 2
	}
	return list(size, vals)
}

// stringsLit is a []string literal: []string{"hall", "den"}.
func stringsLit(vs []string) jen.Code {
	vals, size := make([]jen.Code, len(vs)), 0
	for i, v := range vs {
		vals[i] = jen.Lit(v)
		size += len(v) + 4
	}
	return jen.Index().String().Values(list(size, vals)...)
}

// optText is text(s), or nothing for an empty s.
func optText(s string) jen.Code {
	if s == "" {
		return nil
	}
	return text(s)
}

// toolsVar:
//
//	var Tools = map[level.Level][]*mcpdomain.Tool{
//		level.L4: {{Level: level.L4, Name: "get_lamp", ..., InputSchema: getLampSchema, ...}},
//	}
func toolsVar(d *speclang.Domain) jen.Code {
	var tools []jen.Code
	for _, lv := range d.Levels {
		var vals []jen.Code
		for _, t := range lv.Tools {
			vals = append(vals, jen.Line().Add(keyed(true,
				kv{"Level", jen.Qual(levelPkg, string(lv.Level))},
				kv{"Name", jen.Lit(t.Name)},
				kv{"Description", toolDescription(lv, t)},
				kv{"InputSchema", schemaRef(lv, t)},
				kv{"Operations", jen.Index().Op("*").Qual(runtimePkg, "Operation").Values(opList(t.Operations)...)},
			)))
		}
		tools = append(tools, jen.Line().Qual(levelPkg, string(lv.Level)).Op(":").Values(append(vals, jen.Line())...))
	}
	return jen.Comment("Tools holds each level's tools with the schemas the model sees.").Line().
		Var().Id("Tools").Op("=").Map(jen.Qual(levelPkg, "Level")).Index().Op("*").Qual(runtimePkg, "Tool").Values(append(tools, jen.Line())...)
}

// schemaRef is the constant of a tool's input schema, or nothing (the
// element left out) for a tool with an action, whose schema
// mcpdomain.NewDomain computes.
func schemaRef(lv *speclang.LevelTools, t *speclang.Tool) jen.Code {
	if name := toolSchema(lv, t); name != "" {
		return jen.Id(name)
	}
	return nil
}

// toolDescription is a tool's description: at L4 its operation's, which it
// refers to rather than repeat (opGetLamp.Description).
func toolDescription(lv *speclang.LevelTools, t *speclang.Tool) jen.Code {
	if lv.Level == level.L4 && len(t.Operations) == 1 && t.Description == t.Operations[0].Description && t.Description != "" {
		return jen.Id(opVar(t.Operations[0])).Dot("Description")
	}
	return optText(t.Description)
}

// newServerFunc:
//
//	func NewServer(lv level.Level, st *Store) (*server.MCPServer, error) {
//		tools, ok := Tools[lv]
//		...
//		mcpdomain.Register(s, tools, st)
//		return s, nil
//	}
func newServerFunc(d *speclang.Domain) jen.Code {
	return jen.Comment("NewServer returns an MCP server that exposes st at the given level.").Line().
		Func().Id("NewServer").Params(jen.Id("lv").Qual(levelPkg, "Level"), jen.Id("st").Op("*").Id("Store")).Params(jen.Op("*").Qual(serverPkg, "MCPServer"), jen.Error()).Block(
		jen.List(jen.Id("tools"), jen.Id("ok")).Op(":=").Id("Tools").Index(jen.Id("lv")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(d.Name+": unknown level %q: want one of L4, L3, L2, L1"), jen.Id("lv")))),
		jen.Id("s").Op(":=").Qual(serverPkg, "NewMCPServer").Call(list(len(d.Description)+100, []jen.Code{
			jen.Lit("granite-" + d.Name), jen.Lit("1.0.0"),
			jen.Qual(serverPkg, "WithToolCapabilities").Call(jen.False()),
			jen.Qual(serverPkg, "WithRecovery").Call(),
			jen.Qual(serverPkg, "WithInstructions").Call(jen.Id("description")),
		})...),
		jen.Qual(runtimePkg, "Register").Call(jen.Id("s"), jen.Id("tools"), jen.Id("st")),
		jen.Return(jen.Id("s"), jen.Nil()),
	)
}

// domainVar:
//
//	var Domain = mcpdomain.NewDomain(mcpdomain.Domain{Name: "tiny", ...}, func(lv level.Level, st mcpdomain.Store) (*server.MCPServer, error) {...})
func domainVar(d *speclang.Domain) jen.Code {
	return jen.Commentf("Domain is the registry entry of %s.", d.Name).Line().
		Var().Id("Domain").Op("=").Qual(runtimePkg, "NewDomain").Call(
		jen.Qual(runtimePkg, "Domain").Add(keyed(true,
			kv{"Name", jen.Lit(d.Name)},
			kv{"Title", jen.Lit(d.Title)},
			kv{"Description", jen.Id("description")},
			kv{"SpecSHA256", jen.Lit(d.SHA256)},
			kv{"Entities", stringsLit(entityNames(d))},
			kv{"Operations", jen.Id("Operations")},
			kv{"Tools", jen.Id("Tools")},
			kv{"NewStore", jen.Func().Params().Qual(runtimePkg, "Store").Block(
				jen.Return(jen.Id("NewStore").Call()))},
		)),
		jen.Func().Params(jen.Id("lv").Qual(levelPkg, "Level"), jen.Id("st").Qual(runtimePkg, "Store")).Params(jen.Op("*").Qual(serverPkg, "MCPServer"), jen.Error()).Block(
			jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Id("st").Assert(jen.Op("*").Id("Store")),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(d.Name+": store is %T, want *"+d.Name+".Store"), jen.Id("st")))),
			jen.Return(jen.Id("NewServer").Call(jen.Id("lv"), jen.Id("s"))),
		),
	)
}

func opVar(o *speclang.Operation) string { return "op" + o.GoName }

// opKindConsts names opkind's constant of each operation kind.
var opKindConsts = map[opkind.Kind]string{
	opkind.Get: "Get", opkind.List: "List", opkind.Create: "Create",
	opkind.Update: "Update", opkind.UpdateWhere: "UpdateWhere", opkind.Delete: "Delete",
	opkind.Aggregate: "Aggregate", opkind.Preset: "Preset", opkind.Workflow: "Workflow",
}

// kindConst renders an operation kind as its constant, opkind.List, rather
// than the string it stands for.
func kindConst(k opkind.Kind) jen.Code {
	name, ok := opKindConsts[k]
	if !ok {
		panic(fmt.Sprintf("generator: operation kind %q has no opkind constant", k)) // speclang checks kinds
	}
	return jen.Qual(opkindPkg, name)
}

// operationLit is the mcpdomain.Operation literal of o, its fields in the
// struct's order and each argument on one line:
//
//	{Name: "room", Type: "string", Enum: []string{"hall"}, Hint: "one of hall"},
func operationLit(o *speclang.Operation) jen.Code {
	args := make([]jen.Code, len(o.Args))
	for i, a := range o.Args {
		elems := []kv{{"Name", jen.Lit(a.Name)}, {"Type", jen.Lit(a.JSONType)}}
		if a.Required {
			elems = append(elems, kv{"Required", jen.True()})
		}
		size := len(a.Name) + len(a.JSONType) + len(a.Hint) + 40
		if len(a.Enum) > 0 {
			elems = append(elems, kv{"Enum", stringsLit(a.Enum)})
			for _, v := range a.Enum {
				size += len(v) + 4
			}
		}
		if a.Entity != nil {
			elems = append(elems, kv{"Entity", jen.Lit(a.Entity.Name)})
		}
		if a.Hint != "" {
			elems = append(elems, kv{"Hint", text(a.Hint)})
		}
		args[i] = jen.Line().Add(keyed(size > longList, elems...))
	}
	if len(args) > 0 {
		args = append(args, jen.Line())
	}
	return keyed(true,
		kv{"Name", jen.Lit(o.Name)},
		kv{"Kind", kindConst(o.Kind)},
		kv{"Category", nonZero(o.Category)},
		kv{"Entity", entityName(o)},
		kv{"Description", optText(o.Description)},
		kv{"ReadOnly", nonZero(o.ReadOnly)},
		kv{"Destructive", nonZero(o.Destructive)},
		kv{"Idempotent", nonZero(o.Idempotent)},
		kv{"Args", jen.Index().Qual(runtimePkg, "Arg").Values(args...)},
		kv{"Schema", jen.Id(opSchema(o))},
		kv{"Example", rawString(o.Example)},
	)
}

// entityName is the entity an operation acts on, or nothing for a
// workflow, which acts through its steps.
func entityName(o *speclang.Operation) jen.Code {
	if o.Entity == nil {
		return nil
	}
	return jen.Lit(o.Entity.Name)
}

// entityNames lists a domain's entity names in spec order.
func entityNames(d *speclang.Domain) []string {
	out := make([]string, len(d.Entities))
	for i, e := range d.Entities {
		out[i] = e.Name
	}
	return out
}

// emitRegistry writes gen/registry.go, which lists every domain.
func emitRegistry(f *jen.File, spec *speclang.Spec) {
	f.PackageComment("Package gen holds the code granite-gen generates from specs/: one package per")
	f.PackageComment("domain and this registry of them all. Never edit it by hand; run go generate ./...")
	for _, d := range spec.Domains {
		f.ImportName(Module+"/gen/"+d.Name, d.Name)
	}
	f.Comment("Domains lists every generated domain, sorted by name.")
	vals, size := make([]jen.Code, len(spec.Domains)), 0
	for i, d := range spec.Domains {
		vals[i] = jen.Qual(Module+"/gen/"+d.Name, "Domain")
		size += len(d.Name) + len(".Domain, ")
	}
	f.Var().Id("Domains").Op("=").Index().Op("*").Qual(runtimePkg, "Domain").Values(list(size, vals)...)
	f.Line()
	f.Comment("Lookup returns the domain with the given name.")
	f.Func().Id("Lookup").Params(jen.Id("name").String()).Params(jen.Op("*").Qual(runtimePkg, "Domain"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("d")).Op(":=").Range().Id("Domains")).Block(
			jen.If(jen.Id("d").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("d"), jen.True())),
		),
		jen.Return(jen.Nil(), jen.False()),
	)
}
