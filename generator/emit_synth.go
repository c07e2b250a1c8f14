package generator

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/speclang"
	"github.com/mcpgranite/granite/internal/stage"
)

// emitSynth writes the synthesizer's typed stage contracts: per level, an
// enum of the level's tool names, the Go types of the scenario stage's
// output, and its JSON Schema, in which each call's tool is one of the
// level's tools and its arguments must satisfy that tool's input schema.
//
//	type L4Tool string
//	const L4GetLamp L4Tool = "get_lamp"
//	type L4ScenarioCall struct { Tool L4Tool; Arguments json.RawMessage; Reason string }
//	var StageSchemas = map[mcpdomain.Level]string{mcpdomain.L4: `{...}`}
func emitSynth(f *jen.File, d *speclang.Domain) {
	var schemas []jen.Code
	for _, lv := range d.Levels {
		enum := lv.Name + "Tool"
		f.Commentf("%s names a tool of level %s.", enum, lv.Name)
		f.Type().Id(enum).String()
		f.Const().DefsFunc(func(g *jen.Group) {
			for _, t := range lv.Tools {
				g.Id(toolConst(lv, t)).Id(enum).Op("=").Lit(t.Name)
			}
		})
		f.Commentf("%sScenarioCall is one call of a synthesized scenario at %s.", lv.Name, lv.Name)
		f.Type().Id(lv.Name+"ScenarioCall").Struct(
			jen.Id("Tool").Id(enum).Tag(map[string]string{"json": "tool"}),
			jen.Id("Arguments").Qual("encoding/json", "RawMessage").Tag(map[string]string{"json": "arguments"}),
			jen.Id("Reason").String().Tag(map[string]string{"json": "reason"}),
		)
		f.Commentf("%sScenarioStage is the scenario stage's output at %s (StageSchemas[mcpdomain.%s]).", lv.Name, lv.Name, lv.Name)
		f.Type().Id(lv.Name+"ScenarioStage").Struct(
			jen.Id("Title").String().Tag(map[string]string{"json": "title"}),
			jen.Id("Instruction").String().Tag(map[string]string{"json": "instruction"}),
			jen.Id("Calls").Index().Id(lv.Name+"ScenarioCall").Tag(map[string]string{"json": "calls"}),
			jen.Id("Novelty").String().Tag(map[string]string{"json": "novelty"}),
			jen.Id("FollowUp").String().Tag(map[string]string{"json": "follow_up"}),
		)
		f.Line()
		st := make([]stage.Tool, len(lv.Tools))
		for i, t := range lv.Tools {
			st[i] = stage.Tool{Name: t.Name, InputSchema: t.Schema}
		}
		b, err := stage.ScenarioSchema(st)
		if err != nil {
			panic(fmt.Sprintf("generator: stage schema of %s %s: %v", d.Name, lv.Name, err)) // tool schemas are built by schemas()
		}
		schemas = append(schemas, jen.Line().Qual(runtimePkg, lv.Name).Op(":").Add(rawString(string(b))))
	}
	f.Comment("StageSchemas holds each level's scenario stage contract, for Ollama's format and for validation.")
	f.Var().Id("StageSchemas").Op("=").Map(jen.Qual(runtimePkg, "Level")).String().Values(append(schemas, jen.Line())...)
}
