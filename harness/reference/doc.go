// Package reference imports what the paper's reference implementation
// (the Python MCP-GRANITE) writes: its scenario files, each level's gold
// of which becomes one artifact (granite import scenarios), and its run
// folders, whose conditions become trial records of a granite results
// folder that granite report and granite view read (granite import runs).
//
// Imported trials are re-scored from their traces: by the reference's own
// metrics (package paper), which must reproduce what its results.jsonl
// recorded, and by granite's state-free call metrics (package score). No
// store exists to judge, so tc is the reference's task completion. See
// docs/import.md.
//
// The reference is read for its formats only; nothing of its code or
// data is part of granite.
package reference
