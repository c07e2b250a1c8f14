package meter

import (
	"sync"
	"time"
)

// retention is how long samples are kept: longer than any trial.
const retention = 30 * time.Minute

// sampler reads every device at a fixed interval in one goroutine and
// keeps the samples for the trials' windows. Readers take the lock only
// to copy, so a slow device read never blocks a trial.
type sampler struct {
	interval time.Duration
	now      func() time.Time
	read     func(t time.Time) []Sample

	mu      sync.Mutex
	samples []Sample
	latest  []Sample
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newSampler(interval time.Duration, now func() time.Time, read func(time.Time) []Sample) *sampler {
	return &sampler{interval: interval, now: now, read: read, stop: make(chan struct{}), done: make(chan struct{})}
}

// start begins sampling in the background.
func (s *sampler) start() {
	go func() {
		defer close(s.done)
		tick := time.NewTicker(s.interval)
		defer tick.Stop()
		s.sampleOnce()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.sampleOnce()
			}
		}
	}()
}

// startIdle starts sampling and, when idle is positive, waits that long
// before any trial and returns the samples of the wait, from which a
// meter measures its idle power.
func (s *sampler) startIdle(idle time.Duration) []Sample {
	s.start()
	if idle <= 0 {
		return nil
	}
	time.Sleep(idle)
	return s.window(time.Now().Add(-idle), time.Now())
}

// sampleOnce reads every device once and stores the samples.
func (s *sampler) sampleOnce() {
	t := s.now()
	got := s.read(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, got...)
	if len(got) > 0 {
		s.latest = got
	}
	cut := 0
	for cut < len(s.samples) && t.Sub(s.samples[cut].T) > retention {
		cut++
	}
	if cut > 0 {
		s.samples = append(s.samples[:0], s.samples[cut:]...)
	}
}

// window returns copies of the samples in [from, to] and of those up to
// two intervals before from, which hold the power at a window's start when
// it is shorter than the interval.
func (s *sampler) window(from, to time.Time) []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	early := from.Add(-2 * s.interval)
	var out []Sample
	for _, x := range s.samples {
		if !x.T.Before(early) && !x.T.After(to) {
			out = append(out, x)
		}
	}
	return out
}

// inWindow keeps the samples strictly inside [from, to].
func inWindow(ss []Sample, from, to time.Time) []Sample {
	var out []Sample
	for _, x := range ss {
		if !x.T.Before(from) && !x.T.After(to) {
			out = append(out, x)
		}
	}
	return out
}

func (s *sampler) last() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.latest...)
}

// close stops the goroutine and waits for it.
func (s *sampler) close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}
