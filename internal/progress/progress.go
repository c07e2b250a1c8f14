// Package progress draws the progress of long runs: a bar redrawn in place
// on a terminal, a log line every few seconds otherwise (CI, kubectl logs).
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpgranite/granite/internal/oneline"
)

// Bar shows done / total units, rate, ETA and a label (the current model,
// stage, ...). It is safe for concurrent use; a nil *Bar draws nothing.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    int
	count    int
	resumed  int
	start    time.Time
	last     time.Time
	cur      string
	unit     string
}

// New starts a bar over total units (trials, scenarios), of which
// resumed are already done.
func New(w io.Writer, terminal bool, total, resumed int, unit string) *Bar {
	if w == nil {
		w = io.Discard
	}
	p := &Bar{w: w, terminal: terminal, total: total, count: resumed, resumed: resumed, start: time.Now(), unit: unit}
	if resumed > 0 {
		fmt.Fprintf(w, "resuming: %d of %d %s already recorded\n", resumed, total, unit)
	}
	return p
}

// Label sets what the bar says it is doing; off a terminal it is logged.
// It can name a model or a server, escaped (oneline.Escape): the bar is
// redrawn on its line, which a line break or a terminal escape in a name
// would leave.
func (p *Bar) Label(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = oneline.Escape(s)
	if !p.terminal {
		fmt.Fprintf(p.w, "%s %s\n", time.Now().Format(time.TimeOnly), p.cur)
	}
}

// SetTotal changes the number of units, for work whose size is learned on
// the way.
func (p *Bar) SetTotal(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

// Done counts one unit done.
func (p *Bar) Done() {
	if p == nil {
		return
	}
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

func (p *Bar) draw(now time.Time) {
	ran := p.count - p.resumed
	rate := float64(ran) / now.Sub(p.start).Seconds()
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.count)/rate) * time.Second).Round(time.Second).String()
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "%s %d/%d %s, %.1f/s, ETA %s, %s\n", now.Format(time.TimeOnly), p.count, p.total, p.unit, rate, eta, p.cur)
		return
	}
	const width = 30
	fill := 0
	if p.total > 0 {
		fill = width * p.count / p.total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %.1f/s ETA %s %s\x1b[K", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.count, p.total, rate, eta, p.cur)
}

// Finish draws the final state and ends the bar's line.
func (p *Bar) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.draw(time.Now())
		fmt.Fprintln(p.w)
	}
}
