// Package recorded is the file of a session granite serve --record kept:
// the scenario an interactive client was given, every call of every
// session, and the store they left. It writes the file as a log that
// grows as calls come, each line synced before the client reads its
// reply, and reads it back, also when the server was killed; granite
// score turns it into a trial record (harness.ScoreRecording).
package recorded

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/level"
)

// Session is what granite serve --record keeps: the scenario an
// interactive client (Claude Desktop, an IDE) was given, every call of
// every session, and the store they left. granite score turns it into a
// trial record. On disk it is a log that grows as calls come (see
// Create), so that a killed server loses none of the calls it answered;
// a whole-file recording (WriteFile, and the corpus) reads as well.
type Session struct {
	Domain    string      `json:"domain"`
	Level     level.Level `json:"level"`
	Scenario  string      `json:"scenario"`
	Prompt    string      `json:"prompt"`
	StartedAt string      `json:"started_at"`
	EndedAt   string      `json:"ended_at"`
	// Faults is the fault schedule the server injected (granite serve
	// --faults), absent for none.
	Faults *faults.Schedule `json:"faults,omitempty"`
	// Calls are classed as a trial's calls are; Sessions counts the
	// sessions that called a tool.
	Calls    []results.Call `json:"calls"`
	Sessions int            `json:"sessions"`
	// FinalStore is the canonical snapshot of the one store every session
	// shared, which the verdict judges.
	FinalStore json.RawMessage `json:"final_store"`
	// Notes say what reading the file had to make up for: a recording
	// whose server was killed has no end, and maybe a cut last line.
	Notes []string `json:"-"`
}

// WriteFile writes a recording whole (mode 0600: it holds what the person
// typed into their client's tool calls); a server records with RecordTo.
func (rec *Session) WriteFile(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Indented for a reader; the store's bytes come back with Compact
	// (see Read), which HTML escaping would not allow.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// Format names the log form of a recording in its first line.
const Format = "granite-recording-log/1"

// Header is the first line of a recording log: the task, and the store
// before any call.
type Header struct {
	Format    string          `json:"format"`
	Domain    string          `json:"domain"`
	Level     level.Level     `json:"level"`
	Scenario  string          `json:"scenario"`
	Prompt    string          `json:"prompt"`
	StartedAt string          `json:"started_at"`
	Store     json.RawMessage `json:"store"`
	// Faults is the fault schedule the server injects, absent for none.
	Faults *faults.Schedule `json:"faults,omitempty"`
}

// Line is every later line of a recording log: a call as it was
// answered, the store after it when the call changed it, and, on the
// last line of a server that stopped cleanly, the end.
type Line struct {
	Call    *results.Call   `json:"call,omitempty"`
	Store   json.RawMessage `json:"store,omitempty"`
	EndedAt string          `json:"ended_at,omitempty"`
}

// Log appends a recording's lines to its file, each synced before the
// call's reply goes out, so that kill -9 loses no answered call.
type Log struct {
	f    *os.File
	path string
	// sessions numbers sessions as they first call; calls counts them.
	sessions map[string]int
	calls    int
	// store is the last store written, so that reads add no snapshot.
	store []byte
	// err is the first write that failed; End reports it.
	err error
}

// Create starts the recording file at path (mode 0600: it holds what the
// person typed into their client's tool calls; an existing file is
// replaced) with its header line, h.Store the store before any call,
// synced with the folder's entry so that the file survives a crash.
func Create(path string, h Header) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	h.Format = Format
	l := &Log{f: f, path: path, sessions: map[string]int{}, store: h.Store}
	l.write(h)
	if l.err == nil {
		if dir, err := os.Open(filepath.Dir(path)); err == nil {
			_ = dir.Sync()
			dir.Close()
		}
	}
	if l.err != nil {
		f.Close()
		return nil, l.err
	}
	return l, nil
}

// Add appends one answered call of session, numbering its turn and its
// session in the order each first called, with store, the store after
// it, when the call changed it. The caller serialises Add and End.
func (l *Log) Add(c results.Call, session string, store []byte) {
	if _, ok := l.sessions[session]; !ok {
		l.sessions[session] = len(l.sessions) + 1
	}
	l.calls++
	c.Turn, c.Session = l.calls, l.sessions[session]
	line := Line{Call: &c}
	if !bytes.Equal(store, l.store) {
		line.Store, l.store = store, store
	}
	l.write(line)
}

// End ends the file with the end time (and store, if a call still in
// flight when the last line was written changed it), closes it, and
// reports the first write that failed.
func (l *Log) End(store []byte) error {
	end := Line{EndedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if !bytes.Equal(store, l.store) {
		end.Store = store
	}
	l.write(end)
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

// write appends v as one line in one write, then syncs; after a failure
// it writes nothing more, so the file stays a prefix of what happened.
func (l *Log) write(v any) {
	if l.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.err = fmt.Errorf("record to %s: %w", l.path, err)
	}
}

// Read reads a file granite serve --record wrote: a log, also
// one whose server was killed (its last line may be cut short: it is
// ignored, and Notes say so), or a whole-file recording.
func Read(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var h Header
	var rec *Session
	if json.Unmarshal(first, &h) == nil && h.Format == Format {
		rec, err = readLog(path, br, h)
	} else {
		rec, err = readWhole(path, io.MultiReader(bytes.NewReader(first), br))
	}
	if err != nil {
		return nil, err
	}
	if rec.Scenario == "" || rec.Level == "" || len(rec.FinalStore) == 0 {
		return nil, fmt.Errorf("%s: not a recording of granite serve --record (want scenario, level and final_store)", path)
	}
	// The snapshot is canonical compact JSON, which the strict verdict
	// compares byte for byte.
	var b bytes.Buffer
	if err := json.Compact(&b, rec.FinalStore); err != nil {
		return nil, fmt.Errorf("%s: final_store: %w", path, err)
	}
	rec.FinalStore = b.Bytes()
	return rec, nil
}

// readWhole reads a recording written whole (WriteFile).
func readWhole(path string, r io.Reader) (*Session, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var rec Session
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

// readLog reads the lines after a log's header. Calls come in the order
// they were answered; the recording orders them as they came, as a
// whole-file recording does, and numbers turns and sessions in that order.
func readLog(path string, br *bufio.Reader, h Header) (*Session, error) {
	rec := &Session{Domain: h.Domain, Level: h.Level, Scenario: h.Scenario, Prompt: h.Prompt, StartedAt: h.StartedAt,
		Faults: h.Faults, Calls: []results.Call{}, FinalStore: h.Store}
	for n := 2; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var l Line
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				if err == io.EOF {
					// A line without its newline is one a kill cut
					// short: every line before it was synced whole.
					rec.Notes = append(rec.Notes, fmt.Sprintf("%s:%d: the last line is cut short (granite serve was killed while writing it): ignored", path, n))
					break
				}
				return nil, fmt.Errorf("%s:%d: not a line of a recording log: %w", path, n, jerr)
			}
			if l.Call != nil {
				rec.Calls = append(rec.Calls, *l.Call)
			}
			if len(l.Store) > 0 {
				rec.FinalStore = l.Store
			}
			if l.EndedAt != "" {
				rec.EndedAt = l.EndedAt
			}
		}
		if err == io.EOF {
			break
		}
	}
	rec.Sessions = orderCalls(rec.Calls)
	if rec.EndedAt == "" {
		rec.EndedAt = lastCallEnd(rec)
		rec.Notes = append(rec.Notes, fmt.Sprintf("%s: the recording has no end (granite serve did not stop cleanly, e.g. kill -9): "+
			"scored are its %d calls and the store after the last of them, ending at the last call", path, len(rec.Calls)))
	}
	return rec, nil
}

// orderCalls sorts calls by when they came and numbers their turns, and
// their sessions in the order each first called; it returns the sessions.
func orderCalls(calls []results.Call) int {
	slices.SortStableFunc(calls, func(a, b results.Call) int { return cmp.Compare(a.AtMS, b.AtMS) })
	sessions := map[int]int{}
	for i := range calls {
		if _, ok := sessions[calls[i].Session]; !ok {
			sessions[calls[i].Session] = len(sessions) + 1
		}
		calls[i].Turn, calls[i].Session = i+1, sessions[calls[i].Session]
	}
	return len(sessions)
}

// lastCallEnd is when the last answered call ended, or the start when
// there was none: the end of a recording whose server was killed.
func lastCallEnd(rec *Session) string {
	start, err := time.Parse(time.RFC3339Nano, rec.StartedAt)
	if err != nil {
		return rec.StartedAt
	}
	var end float64
	for _, c := range rec.Calls {
		end = max(end, c.AtMS+c.LatencyMS)
	}
	return start.Add(time.Duration(end * float64(time.Millisecond))).UTC().Format(time.RFC3339Nano)
}

// CorpusEntry is one recording of a corpus folder: agents' work on a
// scenario, <domain>/<scenario>.<level>.record.json, with the answer it
// gave (.answer.txt) and, when the agent was wrong, why (.agent-wrong.txt).
type CorpusEntry struct {
	Name      string // <scenario>.<level>
	Recording *Session
	Answer    string
	Wrong     string // empty for a right solution
}

// ReadCorpus reads every recording of a corpus folder, in file order; a
// recording without its answer is an error.
func ReadCorpus(dir string) ([]CorpusEntry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.record.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no <domain>/<scenario>.<level>.record.json recordings in it", dir)
	}
	var out []CorpusEntry
	for _, f := range files {
		base := strings.TrimSuffix(f, ".record.json")
		rc, err := Read(f)
		if err != nil {
			return nil, err
		}
		answer, err := os.ReadFile(base + ".answer.txt")
		if err != nil {
			return nil, fmt.Errorf("recording %s has no answer: %w", f, err)
		}
		wrong, _ := os.ReadFile(base + ".agent-wrong.txt")
		out = append(out, CorpusEntry{filepath.Base(base), rc, string(answer), strings.TrimSpace(string(wrong))})
	}
	return out, nil
}
