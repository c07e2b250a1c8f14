package serve

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// GuardOptions are the safety defaults of granite serve for any local web
// handler (granite view uses them).
type GuardOptions struct {
	// Token, when set, must come with every request: as a bearer token,
	// or in the cookie named Cookie, which a browser sends by itself.
	Token  string
	Cookie string
	// AllowedOrigins are browser origins allowed besides loopback ones.
	AllowedOrigins []string
	// AllowedHosts are names the server may be reached under besides
	// loopback ones and the address a request came in on (a host name,
	// a name a proxy sends); a port, if given, is ignored.
	AllowedHosts []string
}

// Guard wraps next with the checks granite serve makes: the Host must name
// the server (see hostAllowed) so that a page on another site whose name
// was rebound to this machine cannot read local data, a browser Origin
// must be loopback or allowed, and the token must match when one is set.
// Refusals are 403, or 401 for the token, each a JSON-RPC error object
// like every other refusal of granite serve (httpError), so an MCP client
// shows the reason instead of failing to parse a plain-text body.
func Guard(next http.Handler, o GuardOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r, o.AllowedHosts) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's address, loopback, or an allowed host; "+
				"if you reach granite under that name, start it with --allow-host %s", r.Host, hostname(r.Host)))
			return
		}
		if !originAllowed(r.Header.Get("Origin"), o.AllowedOrigins) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("origin not allowed: %q is not loopback or an allowed origin; "+
				"to let its pages reach granite, start it with --allow-origin and that origin", r.Header.Get("Origin")))
			return
		}
		if o.Token != "" && !tokenGiven(r, o) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="granite"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong token: open the address granite printed, which carries it")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenGiven reports whether the request carries the token, as a bearer
// token (the scheme case-insensitive, RFC 9110 section 11.1) or a cookie.
func tokenGiven(r *http.Request, o GuardOptions) bool {
	scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(o.Token)) == 1 {
		return true
	}
	if o.Cookie != "" {
		if c, err := r.Cookie(o.Cookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(o.Token)) == 1 {
			return true
		}
	}
	return false
}

// originAllowed accepts requests without an Origin (non-browser clients),
// loopback origins, and the allowed ones.
func originAllowed(origin string, allowed []string) bool {
	if origin == "" {
		return true
	}
	for _, o := range allowed {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return u.Scheme == "http" || u.Scheme == "https"
	}
	return false
}

// hostAllowed reports whether the request's Host names this server: a
// loopback name or IP (no page on the web can be served under one), the
// IP literal of the local address the request came in on (the one a
// client dialled, also on a 0.0.0.0 or :: bind), or an allowed name. Any
// other name is one an attacker may have pointed at us, the machine's own
// host name included: that one must be allowed by name. A request not
// served by a net/http listener has no local address to compare with and
// is not checked.
func hostAllowed(r *http.Request, allowed []string) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return true
	}
	host := hostname(r.Host)
	switch {
	case host == "":
		return false
	case isLoopback(host):
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(hostname(a), host) {
			return true
		}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	at, err := netip.ParseAddrPort(local.String())
	return err == nil && at.Addr().Unmap().WithZone("") == ip.Unmap().WithZone("")
}

// hostname is a Host header or host:port without its port, brackets or
// final dot, as the name it is compared by.
func hostname(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	return strings.TrimSuffix(host, ".")
}

// isLoopback reports whether a host or host:port names a loopback
// interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
