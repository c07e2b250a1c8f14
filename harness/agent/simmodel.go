package agent

import (
	"math"

	"github.com/mcpgranite/granite/internal/surface"
)

// Sim is the built-in simulated subject, builtin:sim: it plays the
// oracle's calls, each right with a probability that is a stated function
// of the interface's measured properties and of the subject's skill
// (SimCallSuccess), and otherwise makes one of the errors real models make
// (SimErrors). It is for testing and planning what granite measures — how
// many trials tell two interfaces apart — before a GPU is spent, never a
// stand-in for a model's results.
const Sim = "builtin:sim"

// SimDefaultSkill is builtin:sim's skill when its entry gives none: about
// a 3B model's share of right calls on the benchmark's L3.
const SimDefaultSkill = 3.0

// SimLoad is what an interface's properties cost builtin:sim, in logits of
// a call's success:
//
//	0.3·ln(tools) + 0.2·(schema tokens / 1000) + 0.8·(share of
//	constraints stated only in the schema) + 0.4·(nesting depth − 1)
//	+ 0.03·max(0, arguments of the widest tool − 5) + 1.5·[no descriptions]
//
// Each term is one that Agent Seer and MCP-GRANITE report costs real
// models: many tools, long schemas, unstated constraints, nesting, wide
// argument lists and missing descriptions. At the default skill a call on
// the benchmark's levels is right about 87% of the time, on an interface
// without descriptions about half.
func SimLoad(m surface.Metrics) float64 {
	load := 0.3*math.Log(float64(max(1, m.Tools))) + 0.2*float64(m.SchemaTokens)/1000 + 0.8*m.SchemaOnly +
		0.4*float64(max(0, m.Depth-1)) + 0.03*float64(max(0, m.ArgsMax-5))
	if m.DescriptionChars == 0 {
		load += 1.5
	}
	return load
}

// SimCallSuccess is the probability that builtin:sim of the given skill
// makes a gold call right on an interface with metrics m:
// σ(skill − SimLoad(m)).
func SimCallSuccess(m surface.Metrics, skill float64) float64 {
	return 1 / (1 + math.Exp(-(skill - SimLoad(m))))
}

// SimTaskSuccess is the probability that builtin:sim completes a task of
// n gold calls: every call right, each independently.
func SimTaskSuccess(m surface.Metrics, skill float64, n int) float64 {
	return math.Pow(SimCallSuccess(m, skill), float64(n))
}

// SimError is one way builtin:sim gets a call wrong.
type SimError string

// The errors builtin:sim makes, with their shares of its wrong calls
// (SimErrors).
const (
	// SimWrongTool calls another tool of the interface with the call's
	// arguments.
	SimWrongTool SimError = "wrong_tool"
	// SimWrongArgument changes one argument's value.
	SimWrongArgument SimError = "wrong_argument"
	// SimMalformed writes arguments that are not JSON, which the client
	// cannot send: the call is recorded, the server never sees it.
	SimMalformed SimError = "malformed_call"
	// SimNoCall stops calling tools and answers in words.
	SimNoCall SimError = "zero_calls"
)

// SimErrors are builtin:sim's errors and their shares, which sum to 1.
var SimErrors = []struct {
	Kind  SimError
	Share float64
}{{SimWrongTool, 0.35}, {SimWrongArgument, 0.35}, {SimMalformed, 0.15}, {SimNoCall, 0.15}}
