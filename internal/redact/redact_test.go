package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestText(t *testing.T) {
	const key = "sk-granite-7f3a9c1e5b"
	cases := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"nothing secret", "404 Not Found: The model `m` does not exist.", []string{key}, "404 Not Found: The model `m` does not exist."},
		{"the key anywhere", "invalid key " + key + " (" + key + ")", []string{key}, "invalid key [redacted] ([redacted])"},
		{"no key given", "invalid key abc", []string{""}, "invalid key abc"},
		{"an echoed header", "401: got Authorization: Bearer sk-other-1234567890", nil, "401: got Authorization: Bearer [redacted]"},
		{"a header without a scheme", "authorization=secretvalue; next", nil, "authorization=[redacted]; next"},
		{"a header as JSON", `{"headers":{"Authorization":"Bearer abcdefgh12345"}}`, nil, `{"headers":{"Authorization":"Bearer [redacted]"}}`},
		{"a bare bearer token", "token bearer eyJhbGciOiJIUzI1NiJ9.e30.x rejected", nil, "token bearer [redacted] rejected"},
		{"basic credentials", "Basic dXNlcjpwYXNzd29yZA== refused", nil, "Basic [redacted] refused"},
		{"an api-key header", "X-Api-Key: abc123def456 is wrong", nil, "X-Api-Key: [redacted] is wrong"},
		{"an api_key parameter", "GET /v1/models?api_key=abc123&x=1", nil, "GET /v1/models?api_key=[redacted]&x=1"},
		{"prose about tokens", "a bearer token is required; basic auth is off", nil, "a bearer token is required; basic auth is off"},
		{"the key and its header", "Authorization: Bearer " + key, []string{key}, "Authorization: Bearer [redacted]"},
		{"a header in brackets", "(headers: Authorization: sk-other-99)", nil, "(headers: Authorization: [redacted])"},
	}
	for _, c := range cases {
		if got := Text(c.in, c.secrets...); got != c.want {
			t.Errorf("%s: Text(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestErr: a redacted error says less but is still what it wrapped.
func TestErr(t *testing.T) {
	if Err(nil, "k") != nil {
		t.Error("Err(nil) is not nil")
	}
	plain := errors.New("no secret here")
	if Err(plain, "sk-12345678") != plain {
		t.Error("an error without a secret was wrapped")
	}
	err := Err(fmt.Errorf("open: Bearer sk-12345678: %w", fs.ErrPermission), "sk-12345678")
	if err.Error() != "open: Bearer [redacted]: permission denied" || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Err = %q (is ErrPermission: %v)", err, errors.Is(err, fs.ErrPermission))
	}
}
