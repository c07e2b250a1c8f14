// Package agentlane is the real-agents lane (make agents-test): the agent
// CLIs people use (Claude Code, Codex CLI, Gemini CLI, qwen-code),
// installed at pinned versions from npm (testdata/npm), each run as a
// granite command subject with the very entry docs/agents.md gives
// (testdata/entries), against a scripted model server of the project's
// own (internal/scriptedmodel) that solves a read scenario and a write
// scenario at every level. It holds tests only.
package agentlane
