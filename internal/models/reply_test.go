package models

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReplyLimit(t *testing.T) {
	for _, c := range []struct{ maxTokens, want int64 }{
		{0, DefaultReplyBytes}, {-1, DefaultReplyBytes}, {8, MinReplyBytes}, {1024, MinReplyBytes},
		{4096, 4096 * BytesPerToken}, {1 << 40, (1 << 32) * BytesPerToken},
	} {
		if got := ReplyLimit(c.maxTokens); got != c.want {
			t.Errorf("ReplyLimit(%d) = %d, want %d", c.maxTokens, got, c.want)
		}
	}
}

// TestLimitBody: a body at the bound reads whole; one byte more fails
// with a *TooLongError, having passed on no more than the bound.
func TestLimitBody(t *testing.T) {
	for _, c := range []struct {
		size    int64
		tooLong bool
	}{{MinReplyBytes - 1, false}, {MinReplyBytes, false}, {MinReplyBytes + 1, true}, {10 * MinReplyBytes, true}} {
		var read int64
		body := LimitBody(io.NopCloser(strings.NewReader(strings.Repeat("x", int(c.size)))), 8, &read)
		n, err := io.Copy(io.Discard, body)
		var te *TooLongError
		if c.tooLong != errors.As(err, &te) || !c.tooLong && err != nil || n != read || read > MinReplyBytes {
			t.Errorf("%d bytes: read %d (counted %d), error %v; want too long: %v", c.size, n, read, err, c.tooLong)
		}
		if c.tooLong && (te.Limit != MinReplyBytes || !strings.Contains(err.Error(), "max_tokens 8")) {
			t.Errorf("%d bytes: %+v %q", c.size, te, err)
		}
	}
}
