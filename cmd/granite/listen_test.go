package main

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/gen"
)

// TestHTTPHostChecks starts granite view and granite serve --transport http
// on every address, as --addr 0.0.0.0 does, and checks that each refuses a
// rebound Host, passes the address dialled and an --allow-host name, and
// warns that it is open beyond loopback without a token; with a token, or
// on loopback, it does not warn.
func TestHTTPHostChecks(t *testing.T) {
	results := t.TempDir()
	domain := gen.Domains[0].Name
	cases := []struct {
		name     string
		args     []string
		path     string
		wantWarn bool
	}{
		{"view on every address", []string{"view", "--results", results, "--addr", "0.0.0.0:0", "--allow-host", "granite.lan"}, "/", true},
		{"view on every address with a token", []string{"view", "--results", results, "--addr", "0.0.0.0:0", "--allow-host", "granite.lan", "--token", "tok"}, "/?token=tok", false},
		{"view on loopback", []string{"view", "--results", results, "--addr", "127.0.0.1:0", "--allow-host", "granite.lan"}, "/", false},
		{"serve on every address", []string{"serve", "--domain", domain, "--level", "L4", "--transport", "http", "--addr", "0.0.0.0:0", "--allow-host", "granite.lan"}, "/healthz", true},
		{"serve on every address with a token", []string{"serve", "--domain", domain, "--level", "L4", "--transport", "http", "--addr", "[::]:0", "--allow-host", "granite.lan", "--token", "tok"}, "/healthz", false},
	}
	listening := regexp.MustCompile(`http://(\S+?)/`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GRANITE_TOKEN", "")
			ctx, cancel := context.WithCancel(context.Background())
			out := newWatchedBuffer("http://")
			done := make(chan int, 1)
			go func() { done <- run(ctx, c.args, out, out) }()
			defer func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("exit %d: %s", code, out)
				}
			}()
			select {
			case <-out.seen:
			case code := <-done:
				done <- code
				t.Fatalf("exit %d before listening: %s", code, out)
			case <-time.After(20 * time.Second):
				t.Fatalf("not listening after 20 s: %s", out)
			}
			m := listening.FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("no address in %q", out)
			}
			_, port, _ := net.SplitHostPort(m[1])
			warned := strings.Contains(out.String(), "without a token")
			if warned != c.wantWarn {
				t.Errorf("warned %v, want %v: %s", warned, c.wantWarn, out)
			}
			dial := net.JoinHostPort("127.0.0.1", port)
			if ip := lanAddr(); ip != "" && !strings.HasPrefix(m[1], "127.") {
				dial = net.JoinHostPort(ip, port)
			}
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for host, want := range map[string]int{dial: http.StatusOK, "granite.lan:" + port: http.StatusOK, "rebound.example:" + port: http.StatusForbidden} {
				req, _ := http.NewRequest(http.MethodGet, "http://"+dial+c.path, nil)
				req.Host = host
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.StatusCode
				if got == http.StatusSeeOther {
					got = http.StatusOK // the token taken out of the address
				}
				if got != want {
					t.Errorf("Host %s at %s: %d, want %d", host, dial, resp.StatusCode, want)
				}
			}
		})
	}
}

// lanAddr returns an IPv4 address of this machine other than loopback,
// or "" when it has none.
func lanAddr() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// watchedBuffer is a buffer safe for concurrent writes that closes seen
// once what was written contains want.
type watchedBuffer struct {
	lockedBuffer
	want string
	once sync.Once
	seen chan struct{}
}

func newWatchedBuffer(want string) *watchedBuffer {
	return &watchedBuffer{want: want, seen: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}
