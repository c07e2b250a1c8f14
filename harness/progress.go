package harness

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows done / total, rate, ETA and the current model: as a bar
// redrawn in place on a terminal, as a log line every few seconds
// otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    int
	count    int
	resumed  int
	start    time.Time
	last     time.Time
	cur      string
}

func newProgress(w io.Writer, terminal bool, total, resumed int) *progress {
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w, terminal: terminal, total: total, count: resumed, resumed: resumed, start: time.Now()}
	if resumed > 0 {
		fmt.Fprintf(w, "resuming: %d of %d trials already recorded\n", resumed, total)
	}
	return p
}

func (p *progress) model(m string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = m
	if !p.terminal {
		fmt.Fprintf(p.w, "%s model %s\n", time.Now().Format(time.TimeOnly), m)
	}
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	now := time.Now()
	interval := 5 * time.Second
	if p.terminal {
		interval = 100 * time.Millisecond
	}
	if now.Sub(p.last) >= interval || p.count == p.total {
		p.last = now
		p.draw(now)
	}
}

func (p *progress) draw(now time.Time) {
	ran := p.count - p.resumed
	rate := float64(ran) / now.Sub(p.start).Seconds()
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.count)/rate) * time.Second).Round(time.Second).String()
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "%s %d/%d trials, %.1f/s, ETA %s, model %s\n", now.Format(time.TimeOnly), p.count, p.total, rate, eta, p.cur)
		return
	}
	const width = 30
	fill := 0
	if p.total > 0 {
		fill = width * p.count / p.total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %.1f/s ETA %s %s\x1b[K", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.count, p.total, rate, eta, p.cur)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.draw(time.Now())
		fmt.Fprintln(p.w)
	}
}
