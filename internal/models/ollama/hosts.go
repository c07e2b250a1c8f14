package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"syscall"
	"time"
)

// CheckHosts fails fast, naming each host and the fix, when a host is
// down or lacks one of the models; every problem of every host is
// reported at once.
func CheckHosts(ctx context.Context, hosts []string, models []string, hc *http.Client) error {
	var errs []error
	for _, h := range hosts {
		c, err := New(h, hc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.Check(ctx, models))
	}
	return errors.Join(errs...)
}

// Check reports whether the host answers within 10 seconds and has the
// models (a tag without ":" also matches its ":latest"); its errors say
// how to start Ollama or pull a missing model.
func (c *Client) Check(ctx context.Context, models []string) error {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	list, err := c.List(hctx)
	cancel()
	if err != nil {
		hint := "start it with `ollama serve` (or `systemctl start ollama`), or point ollama.host / OLLAMA_HOST at a running one"
		if isRefused(err) {
			return fmt.Errorf("ollama at %s refused the connection: %s", c.Host, hint)
		}
		return fmt.Errorf("ollama at %s is not answering (%v): %s", c.Host, err, hint)
	}
	var have []string
	for _, m := range list.Models {
		have = append(have, m.Name, m.Model)
	}
	var errs []error
	for _, m := range models {
		if !slices.Contains(have, m) && !slices.Contains(have, m+":latest") {
			errs = append(errs, fmt.Errorf("ollama at %s has no model %q: run `ollama pull %s` there", c.Host, m, m))
		}
	}
	return errors.Join(errs...)
}

func isRefused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial"
}
