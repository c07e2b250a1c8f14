package meter

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/mcpgranite/granite/harness/results"
)

// clockMeter is a meter on a hand-moved clock drawing a fixed power: its
// energy is exactly power x time, so that apportioning can be checked to
// the joule.
type clockMeter struct {
	mu     sync.Mutex
	now    time.Time
	powerW float64
}

func (c *clockMeter) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func (c *clockMeter) Name() string            { return NVML }
func (c *clockMeter) Describe() string        { return "clock" }
func (c *clockMeter) IdleW() float64          { return 0 }
func (c *clockMeter) Latest() []Sample        { return nil }
func (c *clockMeter) Close() error            { return nil }
func (c *clockMeter) Mark() Mark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Mark{T: c.now}
}
func (c *clockMeter) Since(m Mark) results.Reading {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.powerW * c.now.Sub(m.T).Seconds()
	return results.Reading{Meter: NVML, EnergyJ: &e, Devices: []results.DeviceReading{{Index: 0, EnergyJ: e}}}
}

// TestEnergyShare: overlapping trials get equal parts of each stretch they
// share. At 100 W, A runs 0-10 s, B 5-15 s and C 6-8 s: A gets 500 J alone,
// half of 100 J with B, a third of 200 J with B and C, and half of 200 J
// with B again.
func TestEnergyShare(t *testing.T) {
	c := &clockMeter{now: time.Unix(0, 0), powerW: 100}
	s := NewShare(c)
	a := s.Begin()
	c.advance(5 * time.Second)
	b := s.Begin()
	c.advance(time.Second)
	cc := s.Begin()
	c.advance(2 * time.Second)
	rc := s.End(cc)
	c.advance(2 * time.Second)
	ra := s.End(a)
	c.advance(5 * time.Second)
	rb := s.End(b)
	want := map[string]float64{"A": 500 + 50 + 200.0/3 + 100, "B": 50 + 200.0/3 + 100 + 500, "C": 200.0 / 3}
	total := 0.0
	for name, r := range map[string]results.Reading{"A": ra, "B": rb, "C": rc} {
		if !r.Shared || math.Abs(*r.EnergyJ-want[name]) > 1e-9 || math.Abs(r.Devices[0].EnergyJ-want[name]) > 1e-9 {
			t.Errorf("%s: %v J (device %v), shared %v; want %v J", name, *r.EnergyJ, r.Devices[0].EnergyJ, r.Shared, want[name])
		}
		total += *r.EnergyJ
	}
	if math.Abs(total-1500) > 1e-9 {
		t.Errorf("the parts add up to %v J; the meter measured 1500 J", total)
	}
	if *ra.WindowJ != 1000 || math.Abs(rc.MeanActive-3) > 1e-9 || math.Abs(ra.MeanActive-(5*1+1*2+2*3+2*2)/10.0) > 1e-9 {
		t.Errorf("A's window %v J, mean active %v; C's mean active %v", *ra.WindowJ, ra.MeanActive, rc.MeanActive)
	}
}
