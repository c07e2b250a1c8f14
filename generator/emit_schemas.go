package generator

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/speclang"
)

// emitSchemas writes the JSON Schemas the domain's tools publish, each once,
// as a raw string constant a reader can read:
//
//	// listLampsSchema is the JSON Schema of list_lamps's arguments.
//	const listLampsSchema = `{"type":"object",...}`
//
// A tool with a single operation publishes that operation's schema, so it
// shares the operation's constant instead of getting a copy; a tool with
// an action publishes the union of its operations' schemas, which the
// runtime computes from them (mcpdomain.NewDomain), so it gets none.
func emitSchemas(f *jen.File, d *speclang.Domain) {
	for _, o := range d.Operations {
		f.Comment(doc(fmt.Sprintf("%s is the JSON Schema of %s's arguments.", opSchema(o), o.Name)))
		f.Const().Id(opSchema(o)).Op("=").Add(rawString(o.Schema))
		f.Line()
	}
}

// opSchema names the constant holding an operation's schema.
func opSchema(o *speclang.Operation) string { return lowerFirst(o.GoName) + "Schema" }

// sharesOpSchema reports whether a tool publishes its single operation's
// schema unchanged.
func sharesOpSchema(t *speclang.Tool) bool {
	return len(t.Operations) == 1 && t.Schema == t.Operations[0].Schema
}

// toolSchema names the constant holding a tool's input schema, or "" for
// a tool with an action, whose schema the runtime computes.
func toolSchema(lv *speclang.LevelTools, t *speclang.Tool) string {
	if sharesOpSchema(t) {
		return opSchema(t.Operations[0])
	}
	return ""
}

// rawString renders s as a raw (backtick) string literal, which shows JSON
// without escapes, or as a quoted one when a raw literal cannot hold s
// exactly: a backtick, a carriage return (dropped from raw literals), a
// NUL, a byte order mark or invalid UTF-8.
func rawString(s string) jen.Code {
	if strings.ContainsAny(s, "`\r\x00\ufeff") || !utf8.ValidString(s) {
		return jen.Lit(s)
	}
	return jen.Op(fmt.Sprintf("`%s`", s))
}
