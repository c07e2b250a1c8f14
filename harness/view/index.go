// Package view is granite view: a local web application over one or more
// results folders, showing a run's progress and scores, every trial's
// transcript and the explanation its record carries, and one scenario
// across the four levels. It reads records only (harness/results); it
// never scores, so what it shows is what scoring wrote.
//
// A folder's trials.jsonl is indexed once, by byte offset, and only the
// bytes appended since are read on the next request: a trial page reads
// its one line. Records arrive while a run writes them, so a line without
// its newline is left for later, and a whole line that is not a record is
// skipped and reported rather than failing the folder.
package view

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpgranite/granite/harness/results"
)

// entry is what the lists, filters and summaries need of one record; the
// record itself stays on disk at off.
type entry struct {
	off        int64
	size       int32
	line       int32
	id         string
	model      string
	domain     string
	level      string
	scenario   string
	difficulty string
	stop       string
	errClass   string
	rep        int
	artifact   bool
	scored     bool
	tc         float64
	wallS      float64
	energyJ    float64
	hasEnergy  bool
	calls      int
}

// head is the part of a record decoded for its entry.
type head struct {
	TrialID    string `json:"trial_id"`
	Model      string `json:"model"`
	Domain     string `json:"domain"`
	Level      string `json:"level"`
	Scenario   string `json:"scenario"`
	Difficulty string `json:"difficulty"`
	Artifacts  string `json:"artifacts"`
	Repetition int    `json:"repetition"`
	StopReason string `json:"stop_reason"`
	ErrorClass string `json:"error_class"`
	Metrics    *struct {
		TC        float64  `json:"tc"`
		WallS     float64  `json:"wall_s"`
		EnergyJ   *float64 `json:"energy_j"`
		ToolCalls int      `json:"tool_calls"`
	} `json:"metrics"`
}

// Folder is one results folder and the index of its trials.jsonl.
type Folder struct {
	Dir string

	mu      sync.RWMutex
	entries []entry
	byID    map[string]int
	// indexed is how many bytes of trials.jsonl the entries cover: every
	// whole line before it. lines counts those lines.
	indexed int64
	lines   int32
	// pending is the length of a last line without its newline yet.
	pending int64
	// tail is the last bytes of the indexed part (see tailUnchanged).
	tail []byte
	// damaged lists whole lines that are not records, by line number.
	damaged []int32
	// dup counts records of a trial id seen before (the first wins, as
	// in results.ReadJournal).
	dup      int
	manifest *results.Manifest
	manErr   error
	manStamp time.Time
	readErr  error
	strs     map[string]string
}

// OpenFolder opens a results folder and indexes what it holds so far. A
// folder without trials.jsonl or run.json yet is not an error: a run may
// be about to write them.
func OpenFolder(dir string) (*Folder, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("results folder %s is not a folder", dir)
	}
	f := &Folder{Dir: dir, byID: map[string]int{}, strs: map[string]string{}}
	f.Refresh()
	return f, nil
}

// Refresh indexes the records appended since the last refresh and reads
// run.json again if it changed. A trials.jsonl shorter than what was
// indexed (a resume dropped a partial line, or the folder was replaced)
// is indexed again from the start.
func (f *Folder) Refresh() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshManifest()
	path := filepath.Join(f.Dir, results.TrialsFile)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.reset()
		f.readErr = nil
		return
	case err != nil:
		f.readErr = err
		return
	}
	if st.Size() == f.indexed+f.pending {
		return // nothing new, not even to a partial last line
	}
	if st.Size() < f.indexed || !f.tailUnchanged(path) {
		f.reset()
	}
	f.readErr = f.index(path)
}

// tailLen is how many bytes before the indexed offset are kept to notice
// a journal rewritten under the index.
const tailLen = 64

// tailUnchanged reports whether the bytes just before the indexed offset
// are still those indexed: a resume that dropped a damaged last line and
// appended past its length would otherwise go unnoticed.
func (f *Folder) tailUnchanged(path string) bool {
	if f.indexed == 0 {
		return true
	}
	file, err := os.Open(path)
	if err != nil {
		return false
	}
	defer file.Close()
	buf := make([]byte, len(f.tail))
	_, err = file.ReadAt(buf, f.indexed-int64(len(f.tail)))
	return err == nil && bytes.Equal(buf, f.tail)
}

func (f *Folder) reset() {
	f.entries, f.byID, f.indexed, f.lines, f.pending, f.damaged, f.dup, f.tail = nil, map[string]int{}, 0, 0, 0, nil, 0, nil
}

func (f *Folder) refreshManifest() {
	st, err := os.Stat(filepath.Join(f.Dir, results.ManifestFile))
	if err != nil {
		f.manifest, f.manErr, f.manStamp = nil, nil, time.Time{}
		if !errors.Is(err, fs.ErrNotExist) {
			f.manErr = err
		}
		return
	}
	if st.ModTime().Equal(f.manStamp) && f.manifest != nil {
		return
	}
	f.manifest, f.manErr = results.ReadManifest(f.Dir)
	f.manStamp = st.ModTime()
}

// index reads trials.jsonl from the indexed offset to its end.
func (f *Folder) index(path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if _, err := file.Seek(f.indexed, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(file, 1<<20)
	var long []byte
	var over int64 // the bytes read of a line past results.MaxLineBytes, dropped
	f.pending = 0
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if over > 0 || len(long)+len(line) > results.MaxLineBytes {
				// No trial writes such a line: it is counted, not held.
				over += int64(len(long) + len(line))
				long = nil
				continue
			}
			long = append(long, line...)
			continue
		}
		if over > 0 {
			over += int64(len(line))
			if err == io.EOF {
				f.pending = over
				return nil
			}
			if err != nil {
				return err
			}
			f.skip(over)
			over = 0
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err == io.EOF {
			f.pending = int64(len(line))
			return nil
		}
		if err != nil {
			return err
		}
		f.add(line)
	}
}

// skip indexes a line too long to be a trial's as damaged, by its size.
func (f *Folder) skip(n int64) {
	f.indexed += n
	f.tail = f.tail[:0]
	f.lines++
	f.damaged = append(f.damaged, f.lines)
}

// add indexes one whole line (with its newline).
func (f *Folder) add(line []byte) {
	off := f.indexed
	f.indexed += int64(len(line))
	f.tail = append(f.tail[:0], line[max(0, len(line)-tailLen):]...)
	f.lines++
	var h head
	if err := json.Unmarshal(bytes.TrimSpace(line), &h); err != nil || h.TrialID == "" {
		f.damaged = append(f.damaged, f.lines)
		return
	}
	if _, seen := f.byID[h.TrialID]; seen {
		f.dup++
		return
	}
	e := entry{off: off, size: int32(len(line)), line: f.lines, id: h.TrialID, model: f.intern(h.Model), domain: f.intern(h.Domain),
		level: f.intern(h.Level), scenario: f.intern(h.Scenario), difficulty: f.intern(h.Difficulty), stop: f.intern(h.StopReason),
		errClass: f.intern(h.ErrorClass), rep: h.Repetition, artifact: h.Artifacts != ""}
	if m := h.Metrics; m != nil {
		e.scored, e.tc, e.wallS, e.calls = true, m.TC, m.WallS, m.ToolCalls
		if m.EnergyJ != nil {
			e.energyJ, e.hasEnergy = *m.EnergyJ, true
		}
	}
	f.byID[h.TrialID] = len(f.entries)
	f.entries = append(f.entries, e)
}

// intern keeps one copy of the few distinct values of a column.
func (f *Folder) intern(s string) string {
	if v, ok := f.strs[s]; ok {
		return v
	}
	f.strs[s] = s
	return s
}

// Record reads one trial's whole record from disk.
func (f *Folder) Record(id string) (*results.Record, error) {
	f.mu.RLock()
	i, ok := f.byID[id]
	var e entry
	if ok {
		e = f.entries[i]
	}
	f.mu.RUnlock()
	if !ok {
		return nil, fs.ErrNotExist
	}
	return f.read(e)
}

func (f *Folder) read(e entry) (*results.Record, error) {
	file, err := os.Open(filepath.Join(f.Dir, results.TrialsFile))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	buf := make([]byte, e.size)
	if _, err := file.ReadAt(buf, e.off); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", results.TrialsFile, e.line, err)
	}
	rec := &results.Record{}
	if err := json.Unmarshal(buf, rec); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", results.TrialsFile, e.line, err)
	}
	return rec, nil
}

// snapshot is a consistent copy of a folder's state for one page.
type snapshot struct {
	entries  []entry
	manifest *results.Manifest
	manErr   error
	readErr  error
	damaged  []int32
	dup      int
	pending  int64
	indexed  int64
}

// snap refreshes the folder and returns its state. Entries are only ever
// appended (or replaced wholesale on a reset), so the slice can be shared.
func (f *Folder) snap() snapshot {
	f.Refresh()
	f.mu.RLock()
	defer f.mu.RUnlock()
	return snapshot{entries: f.entries[:len(f.entries):len(f.entries)], manifest: f.manifest, manErr: f.manErr, readErr: f.readErr,
		damaged: f.damaged, dup: f.dup, pending: f.pending, indexed: f.indexed}
}
