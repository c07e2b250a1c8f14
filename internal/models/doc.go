// Package models holds one package per model API, each with the test
// double its callers share (inspect_ai's model/_providers): ollama, the
// Ollama client the agent loop, the synthesizer and the judge all use,
// with ollama/ollamatest as its wire-format double. An OpenAI-compatible
// provider joins it as a sibling package with a double of its own.
//
// Providers import neither harness nor scenarios; they import providers.
package models
