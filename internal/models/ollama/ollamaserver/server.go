// Package ollamaserver runs a real Ollama server for granite's
// real-server tests (every test named RealOllama, run by `make
// ollama-test`): the binary scripts/ollama-build.sh builds from the
// module go.mod pins, started on a free loopback port with a model store
// of its own, fed models the way the ollama CLI creates them, and stopped
// or killed by the test. Where ollamatest is the double every model test
// runs against, this is the server the doubles are checked against.
//
// It is test support: only _test.go files import it (its own test checks
// that), so no granite binary links it.
package ollamaserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvBinary names the variable that holds the Ollama binary's path; `make
// ollama-test` sets it to what scripts/ollama-build.sh printed.
const EnvBinary = "GRANITE_OLLAMA"

// startTimeout bounds the wait for /api/version: the server answers in
// well under a second on 2 cores, so a minute means it is stuck, and the
// error shows its log.
const startTimeout = time.Minute

// stopGrace is how long Stop waits after SIGTERM (Ollama unloads its
// runners and exits) before it kills the process group.
const stopGrace = 10 * time.Second

// logTail is how much of the server's log a failing test prints.
const logTail = 8 << 10

// Binary returns the Ollama binary named by GRANITE_OLLAMA, or skips the
// test: without it there is no real server, and only `make ollama-test`
// builds one.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		t.Skipf("no real Ollama: %s is not set; `make ollama-test` builds Ollama from the module go.mod pins and runs the RealOllama tests with it", EnvBinary)
	}
	info, err := os.Stat(bin)
	if err != nil {
		t.Fatalf("%s=%s: %v; run `make ollama-test`, which builds it (scripts/ollama-build.sh)", EnvBinary, bin, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file; point it at the binary scripts/ollama-build.sh prints", EnvBinary, bin)
	}
	return bin
}

// Server is one running `ollama serve`.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT, as granite's
	// Ollama host and (with /v1) its OpenAI-compatible base URL.
	URL string
	// Host is the host:port OLLAMA_HOST holds.
	Host string
	// LogPath is the file the server's stdout and stderr go to.
	LogPath string

	bin  string
	env  []string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed

	stopOnce sync.Once
}

// Start runs `bin serve` on a free loopback port with a temporary model
// store and home of its own, and returns once /api/version answers. The
// server's environment is the test's minus every OLLAMA_ variable, plus
// settings that make runs repeatable (below); env adds or overrides
// KEY=VALUE pairs, e.g. "OLLAMA_CONTEXT_LENGTH=2048", other than
// OLLAMA_HOST, OLLAMA_MODELS and HOME, which are Start's. The server is
// stopped when the test ends, and its log's tail printed if the test
// failed.
func Start(t testing.TB, bin string, env ...string) *Server {
	t.Helper()
	for _, kv := range env {
		if key, _, _ := strings.Cut(kv, "="); key == "OLLAMA_HOST" || key == "OLLAMA_MODELS" || key == "HOME" {
			t.Fatalf("Start: env sets %s, which Start owns (the server's address and store are its own); drop %q", key, kv)
		}
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	models := filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host := freeLoopback(t)
	s := &Server{
		URL:     "http://" + host,
		Host:    host,
		LogPath: filepath.Join(dir, "ollama.log"),
		bin:     bin,
		done:    make(chan struct{}),
	}
	s.env = serverEnv(os.Environ(), append([]string{
		"OLLAMA_HOST=" + host,
		"OLLAMA_MODELS=" + models,
		// Ollama writes its identity key under $HOME/.ollama: a
		// temporary home keeps the developer's untouched.
		"HOME=" + home,
		// One request at a time, as granite's default protocol runs
		// trials, so that prompt caching and timings do not depend on
		// what else the server is doing.
		"OLLAMA_NUM_PARALLEL=1",
		// A loaded model stays loaded for the whole test; requests that
		// set keep_alive still decide for themselves.
		"OLLAMA_KEEP_ALIVE=30m",
		// The default context depends on the GPU's memory (4096 without
		// one); fixing it keeps truncation the same on every machine.
		"OLLAMA_CONTEXT_LENGTH=4096",
		// The store is new; nothing to prune, nothing to look up online.
		"OLLAMA_NOPRUNE=1",
		"OLLAMA_NO_CLOUD=1",
	}, env...))

	logFile, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that Stop and Kill reach the runner
	// processes `ollama serve` starts for each loaded model too.
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s serve: %v", bin, err)
	}
	s.cmd = cmd
	go func() {
		s.err = cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("ollama serve log (%s), last %d KiB:\n%s", s.LogPath, logTail>>10, s.tail())
		}
	})

	start := time.Now()
	if err := s.waitReady(startTimeout); err != nil {
		// The cleanup above prints the log's tail.
		t.Fatalf("ollama serve on %s: %v after %s", host, err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("ollama serve on %s answered in %s", host, time.Since(start).Round(time.Millisecond))
	return s
}

// serverEnv is base without OLLAMA_ variables (a developer's settings
// must not change what the tests see), with set's KEY=VALUE pairs added;
// a later pair for a key replaces an earlier one.
func serverEnv(base, set []string) []string {
	var env []string
	for _, kv := range base {
		if !strings.HasPrefix(kv, "OLLAMA_") {
			env = append(env, kv)
		}
	}
	for _, kv := range set {
		key, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		env = append(env, kv)
	}
	return env
}

// freeLoopback returns a 127.0.0.1 address no one listens on. Another
// process could take it before Ollama binds it; Ollama then fails to
// start and says so in its log, which Start's error shows.
func freeLoopback(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free loopback port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitReady polls /api/version until it answers 200, the process exits or
// timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		resp, err := client.Get(s.URL + "/api/version")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /api/version: %s", resp.Status)
		}
		last = err
		select {
		case <-s.done:
			return fmt.Errorf("the server exited (%v) before /api/version answered", s.err)
		case <-ctx.Done():
			return fmt.Errorf("/api/version did not answer (last: %v)", last)
		case <-tick.C:
		}
	}
}

// Create makes model name from a Modelfile, exactly as a user would for a
// local GGUF: files (name → bytes; a Modelfile's FROM names one, e.g.
// "FROM ./tiny.gguf") are written beside the Modelfile and `ollama create
// NAME -f Modelfile` runs against this server, which uploads each to
// /api/blobs and sends /api/create the files' digests and the Modelfile's
// template, parameters, parser and the rest. A file name must be a plain
// name, no directories.
func (s *Server) Create(t testing.TB, name, modelfile string, files map[string][]byte) {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Dir(s.LogPath), "create-")
	if err != nil {
		t.Fatal(err)
	}
	for fname, data := range files {
		if fname == "" || filepath.Base(fname) != fname || fname == "Modelfile" {
			t.Fatalf("Create %s: file name %q must be a plain name other than Modelfile (the Modelfile refers to it as ./%s)", name, fname, filepath.Base(fname))
		}
		if err := os.WriteFile(filepath.Join(dir, fname), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mf := filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(mf, []byte(modelfile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, "create", name, "-f", mf)
	cmd.Dir = dir
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("ollama create %s -f Modelfile: %v\n%s\nthe Modelfile:\n%s", name, err, cleanProgress(out.String()), modelfile)
	}
	t.Logf("ollama create %s: %s", name, time.Since(start).Round(time.Millisecond))
}

// cleanProgress drops the terminal control sequences the CLI's progress
// spinner writes, so that its error message reads as text.
func cleanProgress(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b { // ESC [ parameters final-byte
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
			}
			i = j
			continue
		}
		if s[i] == '\r' {
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Kill ends the server and its runners at once with SIGKILL, as a crash
// or an OOM kill would: a reply in progress is cut off mid-stream, and
// nothing answers on URL afterwards. It returns once the server has
// exited.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		killGroup(s.cmd.Process, syscall.SIGKILL)
		<-s.done
	})
}

// Stop shuts the server down as a user would (SIGTERM, so that it
// unloads its runners), then kills what is left after a grace period.
// The test's cleanup calls it; calling it earlier, or after Kill, is
// fine.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		killGroup(s.cmd.Process, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(stopGrace):
		}
		// Runners the server failed to stop share its group.
		killGroup(s.cmd.Process, syscall.SIGKILL)
		<-s.done
	})
}

// Exited reports whether the server process has ended, and how.
func (s *Server) Exited() (bool, error) {
	select {
	case <-s.done:
		return true, s.err
	default:
		return false, nil
	}
}

// tail is the last logTail bytes of the server's log.
func (s *Server) tail() string {
	data, err := os.ReadFile(s.LogPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "(no log)"
		}
		return fmt.Sprintf("(read %s: %v)", s.LogPath, err)
	}
	if len(data) > logTail {
		data = data[len(data)-logTail:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}
