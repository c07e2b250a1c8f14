package view

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgranite/granite/internal/oneline"
	"github.com/mcpgranite/granite/internal/serve"
	"github.com/mcpgranite/granite/internal/stats"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options shape the viewer.
type Options struct {
	// Token, when set, is required of every request (see serve.Guard); a
	// browser gives it once as ?token=, which sets a cookie.
	Token string
	// AllowedOrigins are browser origins allowed besides loopback ones.
	AllowedOrigins []string
	// AllowedHosts are names the viewer may be reached under besides
	// loopback ones and its own IP (see serve.GuardOptions).
	AllowedHosts []string
	// Poll is how often an open page asks whether trials arrived
	// (default 2 s).
	Poll time.Duration
}

// tokenCookie carries the token for a browser after its first visit.
const tokenCookie = "granite_view_token"

// Viewer serves the pages of one or more results folders.
type Viewer struct {
	folders []*Folder
	o       Options
	pages   map[string]*template.Template
	handler http.Handler
	// intervals are the Run page's TC intervals, kept between pages.
	intervals intervals
}

// New returns a viewer of the folders, in the order given; each is
// indexed as it is now, and again on every page.
func New(dirs []string, o Options) (*Viewer, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no results folder: pass --results DIR")
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	v := &Viewer{o: o, pages: map[string]*template.Template{}}
	for _, d := range dirs {
		f, err := OpenFolder(d)
		if err != nil {
			return nil, err
		}
		v.folders = append(v.folders, f)
	}
	for _, name := range []string{"run", "trials", "trial", "scenario"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", name, err)
		}
		v.pages[name] = t
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", v.run)
	mux.HandleFunc("GET /trials", v.trials)
	mux.HandleFunc("GET /trial", v.trial)
	mux.HandleFunc("GET /scenario", v.scenario)
	mux.HandleFunc("GET /api/state", v.state)
	mux.Handle("GET /static/", http.FileServerFS(staticFS))
	pages := serve.Guard(mux, serve.GuardOptions{Token: o.Token, Cookie: tokenCookie, AllowedOrigins: o.AllowedOrigins, AllowedHosts: o.AllowedHosts})
	// Host and Origin are checked before the token in the address is
	// taken, so a rebound name is refused however it asks.
	v.handler = serve.Guard(v.takeToken(pages), serve.GuardOptions{AllowedOrigins: o.AllowedOrigins, AllowedHosts: o.AllowedHosts})
	return v, nil
}

// ServeHTTP serves the viewer.
func (v *Viewer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	v.handler.ServeHTTP(w, r)
}

// takeToken gives a request carrying the right ?token= the cookie and
// sends it on to the same address without it, so that the token does not
// stay in the address bar or the history; other requests go to next.
func (v *Viewer) takeToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := r.URL.Query().Get("token"); v.o.Token != "" && t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(v.o.Token)) == 1 {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: v.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, localTarget(r.URL), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localTarget is the address a request is sent on to once its token is
// taken out: its own path and query, or "/" when the path could be read
// by a browser as another site's address (//host, or /\host, which
// browsers read as //host): a link carrying the token must not become a
// way off granite. The path is checked escaped and decoded, as a browser
// or a proxy may read either.
func localTarget(u *url.URL) string {
	p := u.EscapedPath()
	if !localPath(p) || !localPath(u.Path) {
		p = "/"
	}
	q := u.Query()
	q.Del("token")
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// localPath reports whether a path starts with a single slash, not with
// two nor with a slash and a backslash.
func localPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "/\\")
}

// snaps refreshes every folder and returns their state.
func (v *Viewer) snaps() []snapshot {
	out := make([]snapshot, len(v.folders))
	for i, f := range v.folders {
		out[i] = f.snap()
	}
	return out
}

// stateOf names what the folders hold: it changes when a trial arrives
// or run.json is rewritten.
func stateOf(snaps []snapshot) string {
	var b strings.Builder
	for _, s := range snaps {
		stamp := 0
		if s.manifest != nil {
			stamp = s.manifest.Trials
		}
		fmt.Fprintf(&b, "%d.%d.%d.%d;", len(s.entries), s.indexed, s.pending, stamp)
	}
	return b.String()
}

func (v *Viewer) state(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	snaps := v.snaps()
	n := 0
	for _, s := range snaps {
		n += len(s.entries)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"state": stateOf(snaps), "trials": n})
}

// page is what every page's layout needs.
type page struct {
	Title string
	// State and PollMS drive the live update of pages that list trials;
	// empty State: the page does not update itself.
	State  string
	PollMS int64
	Nav    string
}

// render writes a page, or a 500 that says what broke.
func (v *Viewer) render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := v.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		log.Printf("granite view: page %s: %s", name, oneline.Escape(err.Error()))
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

// folderOf reads the run query parameter.
func (v *Viewer) folderOf(q url.Values) (int, *Folder, error) {
	i, err := strconv.Atoi(q.Get("run"))
	if err != nil || i < 0 || i >= len(v.folders) {
		return 0, nil, fmt.Errorf("run %q: want a folder number from 0 to %d", q.Get("run"), len(v.folders)-1)
	}
	return i, v.folders[i], nil
}

// trialLink is the address of a trial's page.
func trialLink(run int, id string) string {
	return "/trial?" + url.Values{"run": {strconv.Itoa(run)}, "id": {id}}.Encode()
}

// acrossLink is the address of a trial's scenario across levels.
func acrossLink(run int, e *entry) string {
	return "/scenario?" + url.Values{"run": {strconv.Itoa(run)}, "model": {e.model}, "scenario": {e.scenario}, "rep": {strconv.Itoa(e.rep)}}.Encode()
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"pct": func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) },
	"f2":  func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) },
	"f3":  func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
	"joules": func(x *float64) string {
		if x == nil {
			return "—"
		}
		return strconv.FormatFloat(*x, 'f', 1, 64) + " J"
	},
	// pretty indents JSON for reading; text that is not JSON is shown as is.
	"pretty": func(raw any) string {
		var b []byte
		switch r := raw.(type) {
		case json.RawMessage:
			b = r
		case string:
			b = []byte(r)
		default:
			b, _ = json.Marshal(r)
		}
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") != nil {
			return string(b)
		}
		return out.String()
	},
	"compact": compact,
	// ci writes a TC interval in percent.
	"ci": func(c stats.CI) string {
		if c.Empty() {
			return ""
		}
		return fmt.Sprintf("%.0f–%.0f%%", 100*c.Lo, 100*c.Hi)
	},
	"add": func(a, b int) int { return a + b },
	"levelName": func(l string) string {
		if l == "" {
			return "—"
		}
		return l
	},
}

// compact writes a value as one line of JSON.
func compact(v any) string {
	if r, ok := v.(json.RawMessage); ok {
		var out bytes.Buffer
		if json.Compact(&out, r) == nil {
			return out.String()
		}
		return string(r)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// heat colours a TC share from red (0) through yellow to green (1).
func heat(tc float64) template.CSS {
	if math.IsNaN(tc) {
		return ""
	}
	return template.CSS(fmt.Sprintf("background:hsl(%.0f,65%%,78%%)", 120*tc))
}

// distinct lists a column's values over the folders, sorted.
func distinct(snaps []snapshot, col func(*entry) string) []string {
	seen := map[string]bool{}
	for _, s := range snaps {
		for k := range s.entries {
			seen[col(&s.entries[k])] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// notFound answers a missing trial or folder in words.
func notFound(w http.ResponseWriter, what string) {
	http.Error(w, what, http.StatusNotFound)
}
