package generator

import (
	"fmt"
	"github.com/mcpgranite/granite/internal/speclang"

	"github.com/dave/jennifer/jen"
)

// emitServer writes the operation and tool tables, NewServer and the
// registry entry. A tool's calls need no generated dispatcher: the runtime
// picks the operation (mcpdomain.Tool.Prepare) and runs it by name on the
// store.
func emitServer(f *jen.File, d *speclang.Domain) {
	for _, o := range d.Operations {
		f.Var().Id(opVar(o)).Op("=").Op("&").Qual(runtimePkg, "Operation").Values(operationDict(o))
	}
	f.Line()
	f.Comment("Operations lists every operation of the domain, in spec order.")
	f.Var().Id("Operations").Op("=").Index().Op("*").Qual(runtimePkg, "Operation").ValuesFunc(func(g *jen.Group) {
		for _, o := range d.Operations {
			g.Id(opVar(o))
		}
	})
	f.Line()

	tools := jen.Dict{}
	for _, lv := range d.Levels {
		var vals []jen.Code
		for _, t := range lv.Tools {
			vals = append(vals, jen.Line().Values(jen.Dict{
				jen.Id("Level"):       jen.Qual(runtimePkg, lv.Name),
				jen.Id("Name"):        jen.Lit(t.Name),
				jen.Id("Description"): jen.Lit(t.Description),
				jen.Id("InputSchema"): jen.Id(toolSchema(lv, t)),
				jen.Id("Operations"): jen.Index().Op("*").Qual(runtimePkg, "Operation").ValuesFunc(func(g *jen.Group) {
					for _, o := range t.Operations {
						g.Id(opVar(o))
					}
				}),
			}))
		}
		tools[jen.Qual(runtimePkg, lv.Name)] = jen.Values(append(vals, jen.Line())...)
	}
	f.Comment("Tools holds each level's tools with the schemas the model sees.")
	f.Var().Id("Tools").Op("=").Map(jen.Qual(runtimePkg, "Level")).Index().Op("*").Qual(runtimePkg, "Tool").Values(tools)
	f.Line()

	f.Comment("NewServer returns an MCP server that exposes st at the given level.")
	f.Func().Id("NewServer").Params(jen.Id("level").Qual(runtimePkg, "Level"), jen.Id("st").Op("*").Id("Store")).Params(jen.Op("*").Qual(serverPkg, "MCPServer"), jen.Error()).Block(
		jen.List(jen.Id("tools"), jen.Id("ok")).Op(":=").Id("Tools").Index(jen.Id("level")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(d.Name+": unknown level %q: want one of L4, L3, L2, L1"), jen.Id("level")))),
		jen.Id("s").Op(":=").Qual(serverPkg, "NewMCPServer").Call(
			jen.Lit("granite-"+d.Name), jen.Lit("1.0.0"),
			jen.Qual(serverPkg, "WithToolCapabilities").Call(jen.False()),
			jen.Qual(serverPkg, "WithRecovery").Call(),
			jen.Qual(serverPkg, "WithInstructions").Call(jen.Lit(d.Description)),
		),
		jen.Qual(runtimePkg, "Register").Call(jen.Id("s"), jen.Id("tools"), jen.Id("st")),
		jen.Return(jen.Id("s"), jen.Nil()),
	)
	f.Line()

	f.Comment(fmt.Sprintf("Domain is the registry entry of %s.", d.Name))
	f.Var().Id("Domain").Op("=").Qual(runtimePkg, "NewDomain").Call(
		jen.Qual(runtimePkg, "Domain").Values(jen.Dict{
			jen.Id("Name"):        jen.Lit(d.Name),
			jen.Id("Title"):       jen.Lit(d.Title),
			jen.Id("Description"): jen.Lit(d.Description),
			jen.Id("Entities"): jen.Index().String().ValuesFunc(func(g *jen.Group) {
				for _, e := range d.Entities {
					g.Lit(e.Name)
				}
			}),
			jen.Id("Operations"):   jen.Id("Operations"),
			jen.Id("Tools"):        jen.Id("Tools"),
			jen.Id("StageSchemas"): jen.Id("StageSchemas"),
			jen.Id("NewStore"): jen.Func().Params().Qual(runtimePkg, "Store").Block(
				jen.Return(jen.Id("NewStore").Call())),
		}),
		jen.Func().Params(jen.Id("level").Qual(runtimePkg, "Level"), jen.Id("st").Qual(runtimePkg, "Store")).Params(jen.Op("*").Qual(serverPkg, "MCPServer"), jen.Error()).Block(
			jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Id("st").Assert(jen.Op("*").Id("Store")),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(d.Name+": store is %T, want *"+d.Name+".Store"), jen.Id("st")))),
			jen.Return(jen.Id("NewServer").Call(jen.Id("level"), jen.Id("s"))),
		),
	)
}

func opVar(o *speclang.Operation) string { return "op" + o.GoName }

// operationDict is the runtime.Operation literal of o.
func operationDict(o *speclang.Operation) jen.Dict {
	args := make([]jen.Code, len(o.Args))
	for i, a := range o.Args {
		dict := jen.Dict{jen.Id("Name"): jen.Lit(a.Name), jen.Id("Type"): jen.Lit(a.JSONType)}
		if a.Required {
			dict[jen.Id("Required")] = jen.True()
		}
		if len(a.Enum) > 0 {
			dict[jen.Id("Enum")] = jen.Index().String().ValuesFunc(func(g *jen.Group) {
				for _, v := range a.Enum {
					g.Lit(v)
				}
			})
		}
		if a.Entity != nil {
			dict[jen.Id("Entity")] = jen.Lit(a.Entity.Name)
		}
		if a.Hint != "" {
			dict[jen.Id("Hint")] = jen.Lit(a.Hint)
		}
		args[i] = jen.Line().Values(dict)
	}
	if len(args) > 0 {
		args = append(args, jen.Line())
	}
	return jen.Dict{
		jen.Id("Name"):        jen.Lit(o.Name),
		jen.Id("Kind"):        jen.Lit(o.Kind),
		jen.Id("Category"):    jen.Lit(o.Category),
		jen.Id("Entity"):      jen.Lit(o.Entity.Name),
		jen.Id("Description"): jen.Lit(o.Description),
		jen.Id("ReadOnly"):    jen.Lit(o.ReadOnly),
		jen.Id("Destructive"): jen.Lit(o.Destructive),
		jen.Id("Idempotent"):  jen.Lit(o.Idempotent),
		jen.Id("Args"):        jen.Index().Qual(runtimePkg, "Arg").Values(args...),
		jen.Id("Schema"):      jen.Id(opSchema(o)),
		jen.Id("Example"):     rawString(o.Example),
	}
}

// emitRegistry writes gen/registry.go, which lists every domain.
func emitRegistry(f *jen.File, spec *speclang.Spec) {
	f.PackageComment("Package gen holds the code granite-gen generates from specs/: one package per")
	f.PackageComment("domain and this registry of them all. Never edit it by hand; run go generate ./...")
	f.Comment("Domains lists every generated domain, sorted by name.")
	f.Var().Id("Domains").Op("=").Index().Op("*").Qual(runtimePkg, "Domain").ValuesFunc(func(g *jen.Group) {
		for _, d := range spec.Domains {
			g.Qual(Module+"/gen/"+d.Name, "Domain")
		}
	})
	f.Line()
	f.Comment("Lookup returns the domain with the given name.")
	f.Func().Id("Lookup").Params(jen.Id("name").String()).Params(jen.Op("*").Qual(runtimePkg, "Domain"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("d")).Op(":=").Range().Id("Domains")).Block(
			jen.If(jen.Id("d").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("d"), jen.True())),
		),
		jen.Return(jen.Nil(), jen.False()),
	)
}
