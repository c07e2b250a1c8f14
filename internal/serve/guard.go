package serve

import (
	"crypto/subtle"
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
}

// Guard wraps next with the checks granite serve makes: a request that
// came to a loopback address must name a loopback Host (a page on another
// site whose name was rebound to 127.0.0.1 must not read local data), a
// browser Origin must be loopback or allowed, and the token must match
// when one is set. Refusals are 403, or 401 for the token.
func Guard(next http.Handler, o GuardOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			isLoopback(local.String()) && !isLoopback(r.Host) {
			http.Error(w, "Forbidden: Host "+r.Host+" is not loopback", http.StatusForbidden)
			return
		}
		if !originAllowed(r.Header.Get("Origin"), o.AllowedOrigins) {
			http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
			return
		}
		if o.Token != "" && !tokenGiven(r, o) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="granite"`)
			http.Error(w, "missing or wrong token: open the address granite printed, which carries it", http.StatusUnauthorized)
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
