package speclang

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// validateNode checks a parsed file against a schema and returns every
// violation with its position.
func validateNode(sch *jsonschema.Schema, root *node) ErrorList {
	err := sch.Validate(root.toAny())
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return ErrorList{{Pos: root.pos, Path: "$", Msg: err.Error()}}
	}
	var out ErrorList
	seen := map[string]bool{}
	for _, e := range schemacheck.Leaves(verr) {
		for _, pe := range schemaError(e, root) {
			if k := pe.Error(); !seen[k] {
				seen[k] = true
				out = append(out, pe)
			}
		}
	}
	if len(out) == 1 && out[0].Path == "$" && root.isSeq {
		out[0].Msg += listHint(sch)
	}
	return out
}

// listHint says where a file that is a bare list belongs, when its schema
// wants an object with one list-valued key (a scenario table written as
// the list of its scenarios): that key, beside the object's required keys.
func listHint(sch *jsonschema.Schema) string {
	if sch.Types == nil || !slices.Contains(sch.Types.ToStrings(), "object") {
		return ""
	}
	var lists []string
	for k, p := range sch.Properties {
		if p.Types != nil && slices.Contains(p.Types.ToStrings(), "array") {
			lists = append(lists, k)
		}
	}
	if len(lists) != 1 {
		return ""
	}
	keys := slices.Clone(sch.Required)
	if !slices.Contains(keys, lists[0]) {
		keys = append(keys, lists[0])
	}
	return fmt.Sprintf(": the file is a mapping with the keys %s, and this list goes under %s:", strings.Join(keys, " and "), lists[0])
}

// schemaError turns one leaf validation error into positioned errors that
// say what was found and what was expected.
func schemaError(e *jsonschema.ValidationError, root *node) ErrorList {
	path, n := pointerToPath(e.InstanceLocation, root)
	pos := root.pos
	if n != nil {
		pos = n.pos
	}
	one := func(msg string) ErrorList { return ErrorList{{Pos: pos, Path: path, Msg: msg}} }
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return one(fmt.Sprintf("missing required key %s", quoteJoin(k.Missing)))
	case *kind.AdditionalProperties:
		var out ErrorList
		for _, p := range k.Properties {
			at := pos
			if kn := n.keyNode(p); kn != nil {
				at = kn.pos
			}
			out = append(out, &Error{Pos: at, Path: childPath(path, p), Msg: fmt.Sprintf("found unknown key %q; expected only the keys the schema defines here", p)})
		}
		return out
	case *kind.Type:
		if k.Got == "null" { // "found null null" says it twice
			return one(fmt.Sprintf("found null; expected %s", strings.Join(k.Want, " or ")))
		}
		return one(fmt.Sprintf("found %s %s; expected %s", k.Got, n.text(), strings.Join(k.Want, " or ")))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return one(fmt.Sprintf("found %s; expected one of %s", jsonText(k.Got), strings.Join(want, ", ")))
	case *kind.Maximum:
		return one(fmt.Sprintf("found %s; expected at most %s", n.text(), rat(k.Want)))
	case *kind.Minimum:
		return one(fmt.Sprintf("found %s; expected at least %s", n.text(), rat(k.Want)))
	case *kind.Pattern:
		return one(fmt.Sprintf("found %q; expected a string matching %s", k.Got, k.Want))
	case *kind.PropertyNames:
		at := pos
		if kn := n.keyNode(k.Property); kn != nil {
			at = kn.pos
		}
		return ErrorList{{Pos: at, Path: childPath(path, k.Property), Msg: fmt.Sprintf("found name %q; expected snake_case (lower-case letters, digits and single underscores, starting with a letter)", k.Property)}}
	case *kind.MultipleOf:
		return one(fmt.Sprintf("found %s; expected a multiple of %s", n.text(), rat(k.Want)))
	default:
		if size, bound, ok := schemacheck.SizeBound(e.ErrorKind, "key"); ok {
			return one(fmt.Sprintf("found %s, which %s; expected %s", n.text(), size, bound))
		}
		return one(fmt.Sprintf("found %s; expected %s", n.text(), e.ErrorKind.LocalizedString(printer)))
	}
}

// rat prints a schema bound as JSON would.
func rat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
