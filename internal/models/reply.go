// Package models holds what every model backend's client shares: the
// bound on how much of one reply it reads. An endpoint that streams
// forever (seen: about 110 MB/s until the trial's deadline) must end the
// reply, not the harness.
package models

import (
	"errors"
	"fmt"
	"io"
)

// The reply bound. A streamed token costs 150–300 bytes on the wire (an
// SSE chunk or an NDJSON line carries the id, model and timestamps around
// it), so BytesPerToken leaves about four times that; MinReplyBytes lets
// a short max_tokens still carry an error body or a warm-up; a request
// that sets no token limit gets DefaultReplyBytes.
const (
	BytesPerToken     = 1 << 10
	MinReplyBytes     = 1 << 20
	DefaultReplyBytes = 16 << 20
)

// ReplyLimit is the most bytes one reply may take on the wire when the
// request allows maxTokens tokens (0 or less: no limit was set).
func ReplyLimit(maxTokens int64) int64 {
	if maxTokens <= 0 {
		return DefaultReplyBytes
	}
	return max(MinReplyBytes, min(maxTokens, 1<<32)*BytesPerToken)
}

// TooLongError is a reply that went past its bound: the endpoint's
// failure, which asking again would repeat, never retried.
type TooLongError struct {
	// Limit is the bound in bytes, MaxTokens the request's token limit it
	// came from (0: none set).
	Limit, MaxTokens int64
}

func (e *TooLongError) Error() string {
	if e.MaxTokens > 0 {
		return fmt.Sprintf("the endpoint's reply went past %d bytes, more than max_tokens %d can take (%d bytes a token): it was cut off; check the server, or raise max_tokens if its replies are that long", e.Limit, e.MaxTokens, BytesPerToken)
	}
	return fmt.Sprintf("the endpoint's reply went past %d bytes without a max_tokens to allow more: it was cut off; check the server", e.Limit)
}

// IsTooLong reports whether err is or wraps a *TooLongError.
func IsTooLong(err error) bool {
	var te *TooLongError
	return errors.As(err, &te)
}

// LimitBody returns body cut at limit bytes: reading past them fails with
// a *TooLongError. read, when not nil, counts the bytes passed on.
func LimitBody(body io.ReadCloser, maxTokens int64, read *int64) io.ReadCloser {
	if read == nil {
		read = new(int64)
	}
	return &limitedBody{ReadCloser: body, err: &TooLongError{Limit: ReplyLimit(maxTokens), MaxTokens: max(maxTokens, 0)}, read: read}
}

type limitedBody struct {
	io.ReadCloser
	err  *TooLongError
	read *int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	left := b.err.Limit - *b.read
	if left <= 0 {
		// A reply exactly at the bound is whole: only a byte past it is
		// too many.
		var probe [1]byte
		if n, err := b.ReadCloser.Read(probe[:]); n == 0 {
			return 0, err // the end, or nothing yet
		}
		return 0, b.err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.ReadCloser.Read(p)
	*b.read += int64(n)
	return n, err
}
