package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

const (
	// TrialsFile is the journal's name in the output folder.
	TrialsFile    = "trials.jsonl"
	journalBuffer = 256
)

// Journal appends records to trials.jsonl. Each record is one write of one
// whole line, and the file is synced before a record counts as recorded,
// so a run killed at any moment leaves only whole records (and at worst
// one partial last line, which ReadJournal drops).
//
// Appends are queued for a writer goroutine. Its first failed write or
// sync (a full disk) ends the journal: later appends return that error at
// once, and failed is closed, so that a runner can stop feeding trials
// whose records could not be kept.
type Journal struct {
	path   string
	f      JournalFile
	in     chan []byte
	done   chan error
	failed chan struct{}
	err    error // the failure; set before failed is closed, never after
	once   sync.Once
	closed error // what Close returns
}

// JournalFile is what a Journal writes to: the journal's *os.File, or in
// tests a disk that fills up (see OpenJournalOn).
type JournalFile interface {
	io.Writer
	Sync() error
	Close() error
}

// OpenJournal opens path for appending after dropping a partial last line.
// It returns the records already there. The caller holds the folder's
// lock (LockOut), as Run and Merge do: nothing else may write the file
// between the drop and the appends.
func OpenJournal(path string) (*Journal, []Record, error) {
	return OpenJournalOn(path, nil)
}

// OpenJournalOn is OpenJournal with the file passed through disk when
// that is not nil: a test hook, for disks that fail.
func OpenJournalOn(path string, disk func(*os.File) JournalFile) (*Journal, []Record, error) {
	// A link planted as trials.jsonl is refused before anything is read,
	// cut or appended through it. (The folder itself is the user's to
	// name, a link to a larger disk included.)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a plain file (a link?): granite appends its records only to a file itself; remove it or choose another folder", path)
	}
	recs, good, err := ReadJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		st, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if st.Size() > good {
			if err := os.Truncate(path, good); err != nil {
				return nil, nil, fmt.Errorf("drop the partial last line of %s: %w", path, err)
			}
		}
	}
	// O_APPEND: every write lands at the end of the file as it is then,
	// never at an offset this process remembers, so even a writer that
	// bypassed the lock could not overwrite records.
	// O_NOFOLLOW: a link planted since is refused, not written through.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, nil, err
	}
	var jf JournalFile = f
	if disk != nil {
		jf = disk(f)
	}
	j := &Journal{path: path, f: jf, in: make(chan []byte, journalBuffer), done: make(chan error, 1), failed: make(chan struct{})}
	go j.loop()
	return j, recs, nil
}

// loop writes queued lines, syncing once per batch (group commit). After a
// failure it writes nothing more, only drains the queue: a failed write
// may leave part of a line, harmless as the last line (ReadJournal drops
// it) but damage if whole lines followed it.
func (j *Journal) loop() {
	failed := false
	for line := range j.in {
		if failed {
			continue
		}
		err := j.write(line)
		for more := true; more && err == nil; {
			select {
			case l, ok := <-j.in:
				if !ok {
					more = false
					break
				}
				err = j.write(l)
			default:
				more = false
			}
		}
		if err != nil { // told before the sync, which may take a while
			j.fail(err)
			failed = true
		}
		// Synced even after a failed write, which keeps the whole lines
		// before it (a partial one is dropped when the journal reopens).
		if err := j.f.Sync(); err != nil && !failed {
			j.fail(j.pathError("sync", err))
			failed = true
		}
	}
	cerr := j.f.Close()
	switch {
	case failed:
		j.done <- j.err
	case cerr != nil:
		j.done <- j.pathError("close", cerr)
	default:
		j.done <- nil
	}
}

// fail ends the journal with err, for Append and for runners watching
// failed.
func (j *Journal) fail(err error) {
	j.err = err
	close(j.failed)
}

func (j *Journal) write(line []byte) error {
	if _, err := j.f.Write(line); err != nil {
		return j.pathError("write", err)
	}
	return nil
}

// pathError names the journal's file whatever wrote it, unwrapping the
// *fs.PathError of an *os.File so that the path is not said twice.
func (j *Journal) pathError(op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: j.path, Err: err}
}

// Append queues a record; it is on disk once Close returns nil. Once a
// write has failed, Append returns that error and queues nothing. The
// line holds the record as Bounded keeps it, whoever made it (a run,
// granite score, a merge): a subject's calls cannot make it huge.
func (j *Journal) Append(r *Record) error {
	b, err := json.Marshal(r.Bounded())
	if err != nil {
		return fmt.Errorf("trial %s: %w", r.TrialID, err)
	}
	select {
	case <-j.failed: // checked first: a free queue would otherwise hide it
		return j.err
	default:
	}
	select {
	case j.in <- append(b, '\n'):
		return nil
	case <-j.failed:
		return j.err
	}
}

// Failed is closed when the journal's first write or sync fails; Err
// then returns that failure.
func (j *Journal) Failed() <-chan struct{} { return j.failed }

// Err is the failure that ended the journal, or nil while it has not
// failed.
func (j *Journal) Err() error {
	select {
	case <-j.failed:
		return j.err
	default:
		return nil
	}
}

// Close flushes, syncs and closes the journal. It returns the first failed
// write or sync, if any, and returns the same again when called again.
func (j *Journal) Close() error {
	j.once.Do(func() {
		close(j.in)
		j.closed = <-j.done
	})
	return j.closed
}

// ReadJournal reads the whole records of a trials.jsonl and the byte
// length they span. A last line without its newline, or one that is not a
// JSON object, is the remains of a killed write and is not counted;
// damage anywhere else is an error. The first record of a trial id wins.
func ReadJournal(path string) ([]Record, int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	return readRecords(path, data, 1, map[string]bool{})
}

// ReadJournalFrom reads the whole records a trials.jsonl holds after the
// first from bytes (what an earlier read spanned) and where they end, for
// a reader that follows a growing journal; seen holds the trial ids read
// before, and gains the new ones (the first record of a trial id wins).
func ReadJournalFrom(path string, from int64, seen map[string]bool) ([]Record, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, err
	}
	recs, n, err := readRecords(path, data, 0, seen)
	return recs, from + n, err
}

// check refuses a record no trial can have written, which a reader would
// otherwise trust: a share outside 0..1 (a TC of 5), a repetition, index
// or call count below 0.
func (r *Record) check() error {
	if r.Repetition < 0 || r.Index < 0 {
		return fmt.Errorf("trial %s: repetition %d, index %d; neither is below 0", r.TrialID, r.Repetition, r.Index)
	}
	m := r.Metrics
	if m == nil {
		return nil
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"tc", m.TC}, {"tc_strict", m.TCStrict}, {"f1", m.F1}, {"action_f1", m.ActionF1}, {"arg_acc", m.ArgAcc}, {"action_arg_acc", m.ActionArgAcc}, {"redundant_rate", m.RedundantRate}} {
		if !(v.x >= 0 && v.x <= 1) {
			return fmt.Errorf("trial %s: %s %v; a share is between 0 and 1", r.TrialID, v.name, v.x)
		}
	}
	if m.ToolCalls < 0 {
		return fmt.Errorf("trial %s: %d calls", r.TrialID, m.ToolCalls)
	}
	return nil
}

// CheckMeasures refuses a record whose wall time or energy is no amount a
// trial measures (negative, not finite, or over a year's worth), for a
// reader that adds them up and must write the sum (advise: a wall time of
// 1e308 summed to +Inf and lost advise.json after the race). The report
// takes such records as they are, and says what they make of its tables.
func (r *Record) CheckMeasures() error {
	m := r.Metrics
	if m == nil {
		return nil
	}
	if !(m.WallS >= 0 && m.WallS < maxWallS) || m.EnergyJ != nil && !(*m.EnergyJ >= 0 && *m.EnergyJ < maxWallS*1e6) {
		e := "none"
		if m.EnergyJ != nil {
			e = fmt.Sprint(*m.EnergyJ)
		}
		return fmt.Errorf("trial %s: wall %v s, energy %s J; not what a trial measures", r.TrialID, m.WallS, e)
	}
	return nil
}

// MaxLineBytes bounds a line of trials.jsonl as its readers take it. A
// record keeps at most max_calls calls of 64 KiB of arguments and 8 KiB of
// result each (see CutBytes), about 72 MiB at the default 1,000 calls; a
// longer line was not written by a trial.
var MaxLineBytes = 128 << 20

// maxWallS bounds a trial's wall time as a reader that sums it takes it:
// a year.
const maxWallS = 365 * 24 * 3600

// readRecords reads the records of data; firstLine numbers its first line
// in messages (0: unknown, a read from an offset).
func readRecords(path string, data []byte, firstLine int, seen map[string]bool) ([]Record, int64, error) {
	var out []Record
	var good int64
	for lineNo := firstLine; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // partial last line
		}
		line := data[:i]
		if len(line) > MaxLineBytes {
			// Decoding it would cost several times its size; no trial
			// writes one.
			if firstLine == 0 {
				return nil, 0, fmt.Errorf("%s: a line after byte %d is %d bytes; no trial record is over %d", path, good, len(line), MaxLineBytes)
			}
			return nil, 0, fmt.Errorf("%s:%d: a line of %d bytes; no trial record is over %d", path, lineNo, len(line), MaxLineBytes)
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.TrialID == "" {
			if len(data) == i+1 {
				break // a damaged last line, also the remains of a kill
			}
			if firstLine == 0 {
				return nil, 0, fmt.Errorf("%s: a line after byte %d: not a trial record: %v", path, good, err)
			}
			return nil, 0, fmt.Errorf("%s:%d: not a trial record: %v", path, lineNo, err)
		}
		if err := r.check(); err != nil {
			if firstLine == 0 {
				return nil, 0, fmt.Errorf("%s: a line after byte %d: %v", path, good, err)
			}
			return nil, 0, fmt.Errorf("%s:%d: %v", path, lineNo, err)
		}
		if !seen[r.TrialID] {
			seen[r.TrialID] = true
			out = append(out, r)
		}
		good += int64(i + 1)
		data = data[i+1:]
	}
	return out, good, nil
}
