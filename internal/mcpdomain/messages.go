package mcpdomain

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/mcpgranite/granite/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var defaultPrinter = message.NewPrinter(language.English)

// sentences turns a schema validation error into one sentence per problem,
// each naming the argument and what was expected, in the order the
// validator found them.
func (t *Tool) sentences(op *Operation, verr *jsonschema.ValidationError) []string {
	var out []string
	seen := map[string]bool{}
	more := 0
	for _, e := range schemacheck.Leaves(verr) {
		for _, s := range t.sentence(op, e) {
			switch {
			case seen[s]:
			case len(out) == maxProblems:
				// A call with thousands of wrong keys gets the first few
				// and a count, not an error larger than the call, which
				// a model would be sent back every turn.
				more++
			default:
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more problems of the same kinds", more))
	}
	if len(out) == 0 {
		out = append(out, "invalid arguments: "+Clip(verr.Error()))
	}
	return out
}

// maxProblems bounds how many problems one tool error lists.
const maxProblems = 10

func (t *Tool) sentence(op *Operation, e *jsonschema.ValidationError) []string {
	arg := strings.Join(e.InstanceLocation, ".")
	subject := fmt.Sprintf("argument %q", arg)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []string
		for _, m := range k.Missing {
			name := m
			if arg != "" {
				name = arg + "." + m
			}
			s := fmt.Sprintf("missing required argument %q", name)
			if a := op.Arg(m); a != nil && arg == "" && a.Hint != "" {
				s += " (" + a.Hint + ")"
			}
			out = append(out, s)
		}
		return out
	case *kind.AdditionalProperties:
		var out []string
		for _, p := range slices.Sorted(slices.Values(k.Properties)) { // the validator's order varies
			if arg != "" {
				out = append(out, fmt.Sprintf("%s has no field %q", subject, Clip(p)))
				continue
			}
			out = append(out, fmt.Sprintf("unknown argument %s; %s", quote(Clip(p)), t.takes(op)))
		}
		return out
	case *kind.Type:
		return []string{fmt.Sprintf("%s: expected %s, got %s", subject, strings.Join(k.Want, " or "), k.Got)}
	case *kind.MultipleOf:
		return []string{fmt.Sprintf("%s: %s is not a multiple of %s", subject, rat(k.Got), rat(k.Want))}
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = plain(w)
		}
		return []string{fmt.Sprintf("%s: %s is not one of %s", subject, display(k.Got), strings.Join(want, ", "))}
	case *kind.Const:
		return []string{fmt.Sprintf("%s: %s is not %s", subject, display(k.Got), plain(k.Want))}
	case *kind.Minimum:
		return []string{fmt.Sprintf("%s: %s is below the minimum %s", subject, rat(k.Got), rat(k.Want))}
	case *kind.Maximum:
		return []string{fmt.Sprintf("%s: %s is above the maximum %s", subject, rat(k.Got), rat(k.Want))}
	case *kind.ExclusiveMinimum:
		return []string{fmt.Sprintf("%s: %s must be greater than %s", subject, rat(k.Got), rat(k.Want))}
	case *kind.ExclusiveMaximum:
		return []string{fmt.Sprintf("%s: %s must be less than %s", subject, rat(k.Got), rat(k.Want))}
	case *kind.Pattern:
		s := fmt.Sprintf("%s: %s does not match the pattern %s", subject, quote(k.Got), k.Want)
		if a := op.Arg(arg); a != nil && a.Hint != "" {
			s = fmt.Sprintf("%s: %s is not a %s", subject, quote(k.Got), a.Hint)
		}
		return []string{s}
	case *kind.Format:
		if a := op.Arg(arg); a != nil && a.Hint != "" {
			return []string{fmt.Sprintf("%s: %s is not a valid %s (%s)", subject, display(k.Got), k.Want, a.Hint)}
		}
		return []string{fmt.Sprintf("%s: %s is not a valid %s%s", subject, display(k.Got), k.Want, formatHint(k.Want))}
	default:
		if size, bound, ok := schemacheck.SizeBound(e.ErrorKind, "field"); ok {
			return []string{fmt.Sprintf("%s %s; %s", subject, size, bound)}
		}
		return []string{fmt.Sprintf("%s: %s", subject, e.ErrorKind.LocalizedString(defaultPrinter))}
	}
}

// takes says which arguments the tool (or its chosen action) accepts.
func (t *Tool) takes(op *Operation) string {
	who := fmt.Sprintf("tool %s", t.Name)
	if t.HasAction() {
		who = fmt.Sprintf("action %s", op.Name)
	}
	if len(op.Args) == 0 {
		return who + " takes no arguments"
	}
	return fmt.Sprintf("%s takes: %s", who, strings.Join(op.argNames(), ", "))
}

func formatHint(format string) string {
	if format == "date-time" {
		return " (RFC 3339, like 2026-01-31T08:00:00Z)"
	}
	return ""
}

func rat(r *big.Rat) string {
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// display renders a JSON value as the model wrote it, strings quoted, and
// clipped: an error repeats at most a short prefix of a bad value.
func display(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Clip(fmt.Sprint(v))
	}
	return Clip(string(b))
}

// plain renders an allowed value unquoted when it is a string, so lists
// read "one of plain, shout, whisper".
func plain(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return display(v)
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
