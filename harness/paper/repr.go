package paper

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

// argumentsKey writes a call's arguments as the reference keys a repeated
// call: its top-level pairs sorted by key, every value as Python writes it
// (repr), nested objects in the order the call wrote them. So 1 and 1.0,
// true and 1, or {"a":1,"b":2} and {"b":2,"a":1} nested, are different
// arguments, as they are to the reference; key order at the top is not.
// Arguments that are not an object are keyed by their bytes.
func argumentsKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return string(raw)
	}
	type pair struct{ key, value string }
	var pairs []pair
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return string(raw)
		}
		var b strings.Builder
		if err := writeRepr(&b, dec); err != nil {
			return string(raw)
		}
		pairs = append(pairs, pair{k.(string), b.String()})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return strings.Compare(a.key, b.key) })
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + strconv.Quote(p.key) + ", " + p.value + ")")
	}
	b.WriteByte(']')
	return b.String()
}

// writeRepr writes the next JSON value of dec as Python's repr of it
// decoded: None, True, False, an int as written, a float's shortest
// digits, strings quoted, lists and dicts in document order.
func writeRepr(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case json.Number:
		b.WriteString(numberRepr(t))
	case string:
		b.WriteString(strconv.Quote(t))
	case json.Delim:
		closing := "]"
		if t == '{' {
			closing = "}"
		}
		b.WriteString(string(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				b.WriteString(strconv.Quote(k.(string)) + ": ")
			}
			if err := writeRepr(b, dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteString(closing)
	default:
		return io.ErrUnexpectedEOF
	}
	return nil
}

// numberRepr is Python's repr of a JSON number: an integer literal stays
// as written (Python's ints are exact), anything with a point or an
// exponent is a float.
func numberRepr(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return strings.TrimPrefix(s, "+")
	}
	f, err := n.Float64()
	if err != nil {
		return s
	}
	return FloatText(f)
}
