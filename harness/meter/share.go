package meter

import (
	"sync"

	"github.com/mcpgranite/granite/harness/results"
)

// Share apportions a meter's energy over trials that run at once
// (parallel > 1), which one counter cannot tell apart. The time between
// one trial's start or end and the next is a segment in which the same
// trials are active; each of them is given an equal part of the energy
// measured over the segment. A segment is a run of whole and partial
// sampling intervals with one set of active trials, so this is the
// per-interval apportioning with the interval edges that matter: those
// where a trial starts or ends.
type Share struct {
	m      Meter
	mu     sync.Mutex
	seg    Mark
	active map[*Slot]bool
}

// Slot is one trial's account (Share.Begin).
type Slot struct {
	mark    Mark
	energyJ float64
	unknown bool    // a segment's energy could not be read
	overlap float64 // seconds x active trials, for the mean overlap
	seconds float64
}

// NewShare shares m's energy among the trials that Begin and End on it.
func NewShare(m Meter) *Share {
	return &Share{m: m, active: map[*Slot]bool{}}
}

// cut closes the current segment: its energy goes in equal parts to the
// trials active over it. The caller holds mu.
func (s *Share) cut() {
	next := s.m.Mark()
	if n := len(s.active); n > 0 {
		r := s.m.Since(s.seg)
		dt := next.T.Sub(s.seg.T).Seconds()
		for slot := range s.active {
			if r.EnergyJ == nil {
				slot.unknown = true
			} else {
				slot.energyJ += *r.EnergyJ / float64(n)
			}
			slot.overlap += dt * float64(n)
			slot.seconds += dt
		}
	}
	s.seg = next
}

// Begin starts a trial's account.
func (s *Share) Begin() *Slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut()
	slot := &Slot{mark: s.seg}
	s.active[slot] = true
	return slot
}

// End closes a trial's account and returns its reading: the meter's
// reading of the trial's window (telemetry, devices) with the trial's
// share as its energy, the window's whole energy beside it, marked
// shared.
func (s *Share) End(slot *Slot) results.Reading {
	s.mu.Lock()
	s.cut()
	delete(s.active, slot)
	s.mu.Unlock()
	r := s.m.Since(slot.mark)
	r.Shared = true
	if slot.seconds > 0 {
		r.MeanActive = slot.overlap / slot.seconds
	}
	if r.EnergyJ == nil {
		return r
	}
	window := *r.EnergyJ
	r.WindowJ = &window
	if slot.unknown {
		r.EnergyJ = nil
		r.Errors = append(r.Errors, "the energy of a segment shared with other trials could not be read")
		return r
	}
	share := slot.energyJ
	r.EnergyJ = &share
	// Each device keeps its part of the window in the same proportion.
	for i := range r.Devices {
		if window > 0 {
			r.Devices[i].EnergyJ *= share / window
		}
	}
	if r.IntegratedJ != nil && window > 0 {
		v := *r.IntegratedJ * share / window
		r.IntegratedJ = &v
	}
	return r
}
