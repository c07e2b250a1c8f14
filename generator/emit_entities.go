package generator

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/mcpgranite/granite/internal/speclang"
)

// emitEntities writes each entity's struct, its copy and ID accessors, and
// its seed rows.
func emitEntities(f *jen.File, d *speclang.Domain) {
	for _, e := range d.Entities {
		// type Device struct { ID string `json:"id"`; ... }
		// An optional field without a value is left out of the JSON.
		fields := []jen.Code{jen.Id("ID").String().Tag(map[string]string{"json": "id"})}
		for _, fd := range e.Fields {
			tag := fd.Name
			if fd.Optional {
				tag += ",omitzero"
			}
			c := jen.Id(fd.GoName).Add(fieldTypeCode(fd)).Tag(map[string]string{"json": tag})
			if fd.Description != "" {
				c = jen.Comment(doc(fd.Description)).Line().Add(c)
			}
			fields = append(fields, c)
		}
		f.Comment(doc(entityDoc(e.GoName, e.Description)))
		f.Type().Id(e.GoName).Struct(fields...)
		f.Line()
		for _, fd := range e.Fields {
			for _, ef := range []*speclang.Field{fd, fd.Items} {
				if ef != nil && ef.Enum != nil {
					enumType(f, e, fd, ef.Enum)
				}
			}
		}

		// func cloneDevice(v Device) Device { v.Tags = mcpdomain.CloneSlice(v.Tags); return v }
		var body []jen.Code
		for _, fd := range e.Fields {
			switch fd.Type {
			case speclang.TObject:
				body = append(body, jen.Id("v").Dot(fd.GoName).Op("=").Qual(runtimePkg, "CloneObject").Call(jen.Id("v").Dot(fd.GoName)))
			case speclang.TArray:
				body = append(body, jen.Id("v").Dot(fd.GoName).Op("=").Qual(runtimePkg, "CloneSlice").Call(jen.Id("v").Dot(fd.GoName)))
			}
		}
		body = append(body, jen.Return(jen.Id("v")))
		f.Func().Id(cloneFunc(e)).Params(jen.Id("v").Id(e.GoName)).Id(e.GoName).Block(body...)
		f.Func().Id(idFunc(e)).Params(jen.Id("v").Op("*").Id(e.GoName)).Op("*").String().Block(jen.Return(jen.Op("&").Id("v").Dot("ID")))
		f.Line()

		// func seedDevices() []Device { return []Device{{ID: "DV001", ...}} }
		rows := make([]jen.Code, len(e.Seed))
		for i, r := range e.Seed {
			elems := []kv{{"ID", jen.Lit(r.ID)}}
			for _, fd := range e.Fields {
				if v, ok := r.Values[fd.Name]; ok && (fd.Optional || !isZero(v)) {
					elems = append(elems, kv{fd.GoName, stored(fd, v)})
				}
			}
			rows[i] = keyed(true, elems...)
		}
		f.Comment(fmt.Sprintf("seed%s returns fresh copies of the %s seed rows, in ID order.", speclang.GoName(e.Plural), e.Name))
		f.Func().Id(seedFunc(e)).Params().Index().Id(e.GoName).Block(
			jen.Return(jen.Index().Id(e.GoName).ValuesFunc(func(g *jen.Group) {
				for _, r := range rows {
					g.Line().Add(r)
				}
				g.Line()
			})),
		)
		f.Line()
	}
}

// enumType writes an enum field's type and a constant per value, which
// encode to JSON as the values themselves:
//
//	// LampColor is the type of Lamp's color field.
//	type LampColor string
//
//	// The values of LampColor, in spec order.
//	const (
//		LampColorWarm LampColor = "warm"
//		LampColorCool LampColor = "cool"
//	)
func enumType(f *jen.File, e *speclang.Entity, fd *speclang.Field, en *speclang.Enum) {
	what := fmt.Sprintf("%s's %s field", e.GoName, fd.Name)
	if en.Field != fd {
		what = fmt.Sprintf("the items of %s's %s field", e.GoName, fd.Name)
	}
	f.Comment(fmt.Sprintf("%s is the type of %s.", en.GoName, what))
	f.Type().Id(en.GoName).String()
	f.Line()
	consts := make([]jen.Code, len(en.Values))
	for i, v := range en.Values {
		consts[i] = jen.Id(v.GoName).Id(en.GoName).Op("=").Lit(v.Value)
	}
	f.Comment(fmt.Sprintf("The values of %s, in spec order.", en.GoName))
	f.Const().Defs(consts...)
	f.Line()
}

// isZero reports values a struct literal can leave out.
func isZero(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case int64:
		return v == 0
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return false
	case map[string]any:
		return false
	}
	return v == nil
}
