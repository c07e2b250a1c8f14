// Package redact takes secrets out of text granite records or prints: an
// endpoint's error body may quote the request it refused, its key and
// Authorization header included, and that text would otherwise land in
// trials.jsonl and on stderr.
package redact

import (
	"regexp"
	"strings"
)

// Mark replaces what was taken out.
const Mark = "[redacted]"

// credential finds a credential's value by what precedes it, whatever
// the secret: an Authorization header or JSON key's value (after its
// scheme), a bearer or basic token, an api-key header or parameter. A
// token is 8 or more token characters (RFC 6750's b64token), so that
// prose ("a bearer token is required") stays as it was.
var credential = regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token)\s+)?|\b(?:x-)?api[_-]?key["']?\s*[:=]\s*["']?)[^\s"',;&<>()\\]+|(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/-]{8,}=*`)

// Text returns s without the secrets (each non-empty one, wherever it
// appears) and without any credential value a header or token names.
func Text(s string, secrets ...string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, Mark)
		}
	}
	return credential.ReplaceAllString(s, "${1}${2}"+Mark)
}

// Err returns err with Text applied to its message, nil for nil. The
// result still unwraps to err, so that errors.As and errors.Is classify
// it as before; only its message changes.
func Err(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := Text(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
