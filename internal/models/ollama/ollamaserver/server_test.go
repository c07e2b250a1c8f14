package ollamaserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRealOllamaServer: the server built from the pinned module answers
// /api/version with that version, starts with an empty store, creates a
// model from a Modelfile and a GGUF with its template and parameters, and
// after Kill answers nothing.
func TestRealOllamaServer(t *testing.T) {
	bin := Binary(t)
	want := strings.TrimPrefix(pinnedVersion(t), "v")

	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "version is "+want) {
		t.Errorf("%s --version = %q, %v; want it to say version is %s", bin, out, err, want)
	}

	s := Start(t, bin)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || s.URL != "http://"+s.Host {
		t.Errorf("URL %q, Host %q: want http://127.0.0.1:PORT and its host", s.URL, s.Host)
	}
	var version struct{ Version string }
	getJSON(t, s.URL+"/api/version", &version)
	if version.Version != want {
		t.Errorf("/api/version = %q; want %s, the version go.mod pins", version.Version, want)
	}
	if names := tags(t, s); len(names) != 0 {
		t.Errorf("/api/tags of a new store = %v; want none", names)
	}

	const template = "{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}<assistant>"
	s.Create(t, "probe:one", "FROM ./probe.gguf\nTEMPLATE \"\"\""+template+"\"\"\"\nPARAMETER temperature 0\nPARAMETER num_ctx 256\n",
		map[string][]byte{"probe.gguf": emptyGGUF()})
	if names := tags(t, s); !slices.Equal(names, []string{"probe:one"}) {
		t.Errorf("/api/tags after Create = %v; want [probe:one]", names)
	}
	var show struct {
		Template   string
		Parameters string
	}
	postJSON(t, s.URL+"/api/show", `{"model":"probe:one"}`, &show)
	if show.Template != template {
		t.Errorf("/api/show template = %q; want the Modelfile's %q", show.Template, template)
	}
	for _, p := range []string{"temperature", "num_ctx"} {
		if !strings.Contains(show.Parameters, p) {
			t.Errorf("/api/show parameters = %q; want the Modelfile's %s", show.Parameters, p)
		}
	}

	if exited, _ := s.Exited(); exited {
		t.Fatal("the server exited before Kill")
	}
	s.Kill()
	if exited, err := s.Exited(); !exited || err == nil {
		t.Errorf("after Kill: exited %v, %v; want exited by a signal", exited, err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get(s.URL + "/api/version"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /api/version after Kill: %s; want no answer", resp.Status)
	}
}

func TestServerEnv(t *testing.T) {
	got := serverEnv(
		[]string{"PATH=/bin", "OLLAMA_HOST=0.0.0.0:11434", "OLLAMA_DEBUG=1", "HOME=/root"},
		[]string{"OLLAMA_HOST=127.0.0.1:5", "HOME=/tmp/h", "OLLAMA_KEEP_ALIVE=30m", "OLLAMA_KEEP_ALIVE=0s"})
	want := []string{"PATH=/bin", "OLLAMA_HOST=127.0.0.1:5", "HOME=/tmp/h", "OLLAMA_KEEP_ALIVE=0s"}
	if !slices.Equal(got, want) {
		t.Errorf("serverEnv = %q; want %q (the caller's OLLAMA_ variables dropped, later pairs winning)", got, want)
	}
}

func TestCleanProgress(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[?25lgathering model components \x1b[K\r\x1b[?25hError: bad": "gathering model components \nError: bad",
		"plain":          "plain",
		"\x1b[1Gcopying": "copying",
	} {
		if got := cleanProgress(in); got != want {
			t.Errorf("cleanProgress(%q) = %q; want %q", in, got, want)
		}
	}
}

// pinnedVersion is the version go.mod requires of github.com/ollama/ollama.
func pinnedVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/ollama/ollama").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/ollama/ollama: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// emptyGGUF is a GGUF v3 file with no tensors and one key,
// general.architecture: enough for /api/create to read it as a model
// (a model never loaded need hold no weights).
func emptyGGUF() []byte {
	var b bytes.Buffer
	str := func(s string) {
		binary.Write(&b, binary.LittleEndian, uint64(len(s)))
		b.WriteString(s)
	}
	b.WriteString("GGUF")
	binary.Write(&b, binary.LittleEndian, uint32(3)) // version
	binary.Write(&b, binary.LittleEndian, uint64(0)) // tensors
	binary.Write(&b, binary.LittleEndian, uint64(1)) // key-value pairs
	str("general.architecture")
	binary.Write(&b, binary.LittleEndian, uint32(8)) // string
	str("llama")
	return b.Bytes()
}

func tags(t *testing.T, s *Server) []string {
	t.Helper()
	var list struct{ Models []struct{ Name string } }
	getJSON(t, s.URL+"/api/tags", &list)
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	return names
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	decode(t, "GET "+url, resp, v)
}

func postJSON(t *testing.T, url, body string, v any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	decode(t, "POST "+url, resp, v)
}

func decode(t *testing.T, what string, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s %s (%v)", what, resp.Status, data, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v in %s", what, err, data)
	}
}
