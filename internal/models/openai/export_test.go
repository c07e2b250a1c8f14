package openai

import (
	"context"
	"time"
)

// SetSleep replaces how c waits between attempts, so that tests see the
// waits asked for without waiting them.
func SetSleep(c *Client, sleep func(context.Context, time.Duration) bool) { c.sleep = sleep }
