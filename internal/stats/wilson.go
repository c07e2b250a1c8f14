package stats

import "math"

// z95 is the standard normal's 97.5% quantile.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of the success probability
// after successes out of n trials, with Mean the observed share. Unlike
// the Wald interval it stays inside [0, 1] and is not empty at 0 or n
// successes. No trials give no interval (CI.Empty).
func Wilson(successes float64, n int) CI {
	if n <= 0 {
		return none()
	}
	nf := float64(n)
	p := successes / nf
	den := 1 + z95*z95/nf
	center := (p + z95*z95/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z95*z95/(4*nf*nf))
	ci := CI{Mean: p, Lo: max(0, center-half), Hi: min(1, center+half), N: n}
	// At p = 0 or 1 an end of the interval is p itself; rounding would
	// put it a hair inside.
	if successes <= 0 {
		ci.Lo = 0
	}
	if successes >= nf {
		ci.Hi = 1
	}
	return ci
}
