package mcpdomain

import (
	"errors"
	"fmt"
	"strings"
)

// ToolError is an error caused by the caller's arguments or the state they
// refer to. Its message is returned to the model as an MCP tool error, so it
// is written as a sentence the model can act on.
type ToolError struct {
	Msg string
}

func (e *ToolError) Error() string { return e.Msg }

// Errorf returns a ToolError with a formatted message.
func Errorf(format string, args ...any) error {
	return &ToolError{Msg: fmt.Sprintf(format, args...)}
}

// IsToolError reports whether err is caused by the call rather than by a
// fault of the server.
func IsToolError(err error) bool {
	var te *ToolError
	return errors.As(err, &te)
}

// maxListedIDs bounds how many valid IDs an unknown-ID error lists.
const maxListedIDs = 5

// NotFound reports an ID that names no row, listing a few that do.
func NotFound(arg, entity, id string, valid []string) error {
	if len(valid) == 0 {
		return Errorf("argument %q: %s %s does not exist; there are no %s rows", arg, entity, quote(id), entity)
	}
	shown := valid
	if len(shown) > maxListedIDs {
		shown = shown[:maxListedIDs]
	}
	more := ""
	if len(valid) > len(shown) {
		more = fmt.Sprintf(", … (%d in total)", len(valid))
	}
	return Errorf("argument %q: %s %s does not exist; valid %s IDs include %s%s",
		arg, entity, quote(id), entity, strings.Join(shown, ", "), more)
}

// NothingToSet reports an update call that names no field to change.
func NothingToSet(fields ...string) error {
	return Errorf("nothing to change: give at least one of %s", strings.Join(quoteAll(fields), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
